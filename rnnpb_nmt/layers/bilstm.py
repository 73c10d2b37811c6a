"""A bidirectional LSTM encoder: each position's state sees the whole sequence.

Aharoni & Goldberg's encoder (their §2.1): position i is ``[forward LSTM over x_1..x_i;
backward LSTM over x_n..x_i]``. Here each direction is a ``StackedRNN`` of ``num_layers``
(the two directions meet only in the concatenated output, where DyNet's bidirectional builder
also feeds each layer both directions of the one below). Sequences of a batch have their own
lengths; padding is never read by either direction. The unit is the LSTM, or another cell of
``rnnpb_nmt.layers.cells`` for the seq-to-seq model's ``--cell``.
"""

import tensorflow as tf

from rnnpb_nmt.layers.recurrent import StackedRNN


class BidirectionalLSTM(tf.keras.layers.Layer):
    """Forward and backward ``StackedRNN``s (LSTM) of ``units``; outputs are 2 * units wide."""

    def __init__(self, units, num_layers, dropout=0.0, cell="lstm", **kwargs):
        super().__init__(**kwargs)
        self.forward_lstm = StackedRNN(units, num_layers, cell=cell, dropout=dropout, name="forward")
        self.backward_lstm = StackedRNN(units, num_layers, cell=cell, dropout=dropout, name="backward")

    def call(self, inputs, lengths, rng=None, return_state=False):
        """inputs (B, T, D), lengths (B,) -> (B, T, 2 * units); the outputs at or past a
        sequence's length are meaningless. ``rng``: training-time dropout, as ``StackedRNN``.
        ``return_state``: also the forward stack's final state per layer (after each sequence's
        last real input), which can start a decoder."""
        mask = tf.sequence_mask(lengths, tf.shape(inputs)[1])
        forward, states = self.forward_lstm(inputs, mask=mask, rng=rng)
        # Reversing each sequence within its own length keeps the padding at the end.
        reversed_inputs = tf.reverse_sequence(inputs, lengths, seq_axis=1, batch_axis=0)
        backward, _ = self.backward_lstm(reversed_inputs, mask=mask, rng=rng)
        outputs = tf.concat([forward, tf.reverse_sequence(backward, lengths, seq_axis=1, batch_axis=0)], axis=-1)
        return (outputs, states) if return_state else outputs

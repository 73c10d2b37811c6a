"""One RNNPB language model (SPEC section 1): the sentence's PB vector joins every input step.

    H1(t) = LSTM1([emb(x(t)); PB], ...),  Hk(t) = LSTMk(H(k-1)(t), ...),  O(t) = softmax(W H(t))

The PB share of LSTM1's input product is computed once per sentence (``rnnpb_nmt.layers.recurrent``), which is
the same model as concatenating it at every step.

With ``pb_input="state"`` (``--pb_input``) the PB is instead the LSTMs' initial state, every layer's (h, c), and
no step reads it: on the demo corpus a bound model whose PB is its encoder's final state learned far more
this way (run_scripts/results/notes/bound_translation.md, 2026-11-27).
"""

import tensorflow as tf

from rnnpb_nmt.layers.recurrent import StackedRNN
from rnnpb_nmt.models.losses import decoder_inputs, summed_cross_entropy


class RNNPBLanguageModel(tf.keras.layers.Layer):
    """Embedding, ``num_layers`` LSTMs fed the PB at every step (or started from it), softmax output."""

    def __init__(self, vocab_size, embedding_size, units, num_layers, num_pb, dropout=0.0, sigma=0.0,
                 pb_dropout=True, pb_input="gates", label_smoothing=0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_pb, self.sigma, self.pb_input = num_pb, sigma, pb_input
        self.label_smoothing = label_smoothing
        self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_size, name="embedding")
        self.lstm = StackedRNN(units, num_layers, dropout=dropout, constant_dim=num_pb if pb_input == "gates" else 0,
                               constant_dropout=pb_dropout, name="lstm")
        self.output_layer = tf.keras.layers.Dense(vocab_size, name="output")
        self.embedding.build([None])
        self.lstm.build([None, None, embedding_size])
        self.output_layer.build([None, units])

    def sentence_losses(self, seq, pb, rng=None):
        """Summed cross-entropy (B,) of sentences ``seq`` (words + ``<end>``) given their PBs,
        and the number of predicted tokens (B,). In training, ``rng`` is the ``tf.random.Generator``
        that draws the N(0, sigma) noise added to the PBs and the dropout masks, and the
        cross-entropy is label-smoothed (--label_smoothing); recognition's steps pass none, so
        they descend the true cross-entropy."""
        if rng is not None and self.sigma > 0:
            pb = pb + rng.normal(tf.shape(pb), stddev=self.sigma)
        inputs = self.embedding(decoder_inputs(seq))
        if self.pb_input == "state":
            outputs, _ = self.lstm(inputs, initial_state=self.lstm.state_of_vector(pb), rng=rng)
        else:
            outputs, _ = self.lstm(inputs, constant=pb, rng=rng)
        return summed_cross_entropy(self.output_layer(outputs), seq, self.label_smoothing if rng is not None else 0.0)

    def start_state(self, pb):
        """Generation state for PB vectors (N, num_PB): zero LSTM states and the PB's gate share,
        or (``pb_input="state"``) the PB as the LSTM states."""
        if self.pb_input == "state":
            return {"lstm": self.lstm.state_of_vector(pb)}
        return {"lstm": self.lstm.zero_state(tf.shape(pb)[0]), "pb_gates": self.lstm.constant_gates(pb)}

    def step(self, tokens, state):
        """Next-word logits after ``tokens`` (N,), and the new state."""
        output, lstm_state = self.lstm.step(self.embedding(tokens), state["lstm"], state.get("pb_gates"))
        return self.output_layer(output), {**state, "lstm": lstm_state}

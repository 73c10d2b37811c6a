"""The recurrent units of one layer: LSTM, GRU and SRN (Elman) steps and their weight shapes.

A cell is only its arithmetic; ``rnnpb_nmt.layers.recurrent.StackedRNN`` owns the weights, the time loop,
masking and dropout. Each cell's input product ``x @ W (+ input bias)`` is precomputed for all
time steps by the stack; the cell gets it together with the recurrent product ``h @ U`` (+
recurrent bias), so that the time loop only holds the recurrent product. Layouts, initialisers
and equations are those of the Keras layers (``tf.keras.layers.LSTM``, ``GRU(reset_after=True)``,
``SimpleRNN``), which are McCoy et al.'s (PyTorch's) equations; ``tests/test_recurrent.py``
compares each against its Keras layer.
"""

import tensorflow as tf


class LSTM:
    """Gates i, f, g (cell), o; state (h, c); forget-gate bias 1 (Keras' ``unit_forget_bias``)."""

    name, gates, state_size = "lstm", 4, 2

    @staticmethod
    def bias_initializer(units):
        forget_one = tf.concat([tf.zeros([units]), tf.ones([units]), tf.zeros([2 * units])], 0)
        return [4 * units], lambda shape, dtype=None: forget_one

    @staticmethod
    def split_bias(bias):
        """(bias added to the input product, bias added to the recurrent product or None)."""
        return bias, None

    @staticmethod
    def step(input_gates, recurrent_gates, state):
        h, c = state
        i, f, g, o = tf.split(input_gates + recurrent_gates, 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, c


class GRU:
    """Gates z (update), r (reset), n (new), reset applied after the recurrent product:
    n = tanh(W_n x + b_n + r * (U_n h + b_Un)), h' = z * h + (1 - z) * n (the paper's eqs. 3-6).
    The bias is (2, 3 units): input and recurrent, as Keras' ``reset_after``."""

    name, gates, state_size = "gru", 3, 1

    @staticmethod
    def bias_initializer(units):
        return [2, 3 * units], "zeros"

    @staticmethod
    def split_bias(bias):
        return bias[0], bias[1]

    @staticmethod
    def step(input_gates, recurrent_gates, state):
        (h,) = state
        x_z, x_r, x_n = tf.split(input_gates, 3, axis=-1)
        h_z, h_r, h_n = tf.split(recurrent_gates, 3, axis=-1)
        z, r = tf.sigmoid(x_z + h_z), tf.sigmoid(x_r + h_r)
        n = tf.tanh(x_n + r * h_n)
        return (z * h + (1 - z) * n,)


class SRN:
    """Elman's simple recurrent network: h' = tanh(W x + U h + b) (the paper's eq. 1)."""

    name, gates, state_size = "srn", 1, 1

    @staticmethod
    def bias_initializer(units):
        return [units], "zeros"

    @staticmethod
    def split_bias(bias):
        return bias, None

    @staticmethod
    def step(input_gates, recurrent_gates, state):
        return (tf.tanh(input_gates + recurrent_gates),)


CELLS = {cell.name: cell for cell in (LSTM, GRU, SRN)}

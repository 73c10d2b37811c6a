"""Attention over a source sentence's encoder outputs (McCoy, Frank & Linzen 2018, Figure 8).

At each decoder step a query (the previous output word's embedding and the previous decoder
state) gives weights over the real source positions, and the weighted sum of the encoder outputs,
the context, is an extra input of the decoder's recurrent unit (the paper's eq. 2). Two ways to
weigh:

- ``LocationAttention``: a linear layer maps the query to one score per source *position*, up to
  ``positions`` of them (the paper: "a vector of length equal to the number of words in the
  input"; the original code sized it to the longest sentence). The scores ignore what the
  encoder says at a position, only where it is; positions past ``positions`` get no weight. With
  ``padding="zeros"`` (McCoy et al.'s code) the softmax runs over all ``positions``, those past the
  sentence's end reading zero encoder outputs: the weight they take is lost to the context.
- ``ContentAttention``: additive attention (Bahdanau et al. 2015, the original code's content
  attention): score_j = v . tanh(W_k e_j + W_q q + b), from the query and each encoder output e_j.

Both are built by ``build_for(query_dim, value_dim)`` and take a *memory* made once per source
batch (``memory(values, mask)``): a tuple of tensors with the sentence on axis 0, so that search
can tile and reorder it with the decoder state.
Padding positions get weight exactly 0 and the weights of a sentence sum to 1 (but for location
attention's ``padding="zeros"``, whose sentence weights sum to at most 1).
"""

import tensorflow as tf

# The score of a position that must get no weight: softmax gives it exactly 0, however low the
# scores of the real positions are (every sentence has one: its ``<end>``).
NEG = float("-inf")


def masked_softmax(scores, mask):
    """Softmax of ``scores`` (B, S) over the positions where ``mask`` (B, S) is True; 0 elsewhere."""
    weights = tf.nn.softmax(tf.where(mask, scores, NEG), axis=-1)
    return weights * tf.cast(mask, weights.dtype)


def context(weights, values):
    """Weighted sum of ``values`` (B, S, D) with ``weights`` (B, S): (B, D)."""
    return tf.einsum("bs,bsd->bd", weights, values)


class LocationAttention(tf.keras.layers.Layer):
    """Weights from the query alone, one learned score per source position."""

    def __init__(self, positions, padding="masked", **kwargs):
        super().__init__(**kwargs)
        self.positions, self.padding = positions, padding
        self.scorer = tf.keras.layers.Dense(positions, name="scores")

    def build_for(self, query_dim, value_dim):
        """Create the weights (a query of ``query_dim``; the values' width does not matter)."""
        self.scorer.build([None, query_dim])
        self.built = True

    def memory(self, values, mask):
        """(values (B, S, D), mask (B, S)): what every step of a source batch attends to."""
        return values, mask

    def call(self, query, memory):
        """query (B, Q) -> (context (B, D), weights (B, S))."""
        values, mask = memory
        scores = self.scorer(query)
        length = tf.shape(mask)[1]
        beyond = [[0, 0], [0, tf.maximum(0, length - self.positions)]]  # a source longer than the positions
        if self.padding == "zeros":  # the softmax over every position; those past the sentence read zeros
            weights = tf.pad(tf.nn.softmax(scores, axis=-1), beyond)[:, :length] * tf.cast(mask, scores.dtype)
            return context(weights, values), weights
        # The positions past the layer's are never attended to.
        weights = masked_softmax(tf.pad(scores, beyond, constant_values=NEG)[:, :length], mask)
        return context(weights, values), weights


class ContentAttention(tf.keras.layers.Layer):
    """Additive attention of ``units`` hidden units: weights from the query and the encoder outputs."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.keys = tf.keras.layers.Dense(units, use_bias=False, name="keys")
        self.queries = tf.keras.layers.Dense(units, name="queries")

    def build_for(self, query_dim, value_dim):
        """Create the weights (a query of ``query_dim``, encoder outputs of ``value_dim``)."""
        self.keys.build([None, value_dim])
        self.queries.build([None, query_dim])
        self.v = self.add_weight("v", [self.units], initializer="glorot_uniform")
        self.built = True

    def memory(self, values, mask):
        """(values, their keys W_k e_j (computed once per source batch), mask)."""
        return values, self.keys(values), mask

    def call(self, query, memory):
        values, keys, mask = memory
        hidden = tf.tanh(keys + self.queries(query)[:, None, :])
        weights = masked_softmax(tf.einsum("bsa,a->bs", hidden, self.v), mask)
        return context(weights, values), weights

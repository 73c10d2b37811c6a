"""The Transformer's building blocks (Vaswani et al. 2017), pre-layer-norm, of ``tf.keras`` layers:
the encoder and decoder layers, word embeddings with sinusoidal positions, a tied output layer,
and the decoding helpers that a Transformer decoder shares whatever conditions it (the encoder's
outputs for the encoder-decoder Transformer; a sentence's PB slots for the bound model's
Transformer language models).

Pre-layer-norm: each sublayer reads LayerNorm(x) and adds its output to x; a last LayerNorm after
each stack. Dropout is one mask per element drawn from the trainer's generator (``rng``), as the
recurrent layers draw theirs: training is reproducible by --seed and resumable; there is none on
the attention weights.

Search keeps, per decoder layer, the projected keys and values of the positions so far and of what
the layer attends to (``Attention.keys_values``): a step projects only its own position, as
OpenNMT-tf's and fairseq's incremental decoders do, rather than every cached position and the
source again (run_scripts/results/notes/scale.md, 2026-12-06).
"""

import math

import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.scores import NEG

EPSILON = 1e-6  # LayerNorm's, as tensor2tensor's and fairseq's pre-norm Transformers


def sinusoids(start, length, width):
    """The positions ``start`` .. ``start + length - 1`` (length, width): sines, then cosines, of
    wavelengths in geometric progression from 2π to 10000 · 2π (Vaswani et al. §3.5, sines and
    cosines concatenated as in tensor2tensor); an odd width gets a last column of zeros."""
    positions = tf.cast(tf.range(start, start + length), tf.float32)[:, None]
    rates = tf.exp(tf.range(width // 2, dtype=tf.float32) * (-2.0 * math.log(10000.0) / width))
    angles = positions * rates[None, :]
    return tf.pad(tf.concat([tf.sin(angles), tf.cos(angles)], axis=1), [[0, 0], [0, width % 2]])


class FeedForward(tf.Module):
    """The position-wise feed-forward sublayer: Dense(ReLU) -> Dense."""

    def __init__(self, units, hidden, name):
        super().__init__(name=name)
        self.hidden = tf.keras.layers.Dense(hidden, activation="relu", name="hidden")
        self.output_layer = tf.keras.layers.Dense(units, name="output")

    def __call__(self, x):
        return self.output_layer(self.hidden(x))


class Attention(tf.Module):
    """Multi-head scaled dot-product attention (Vaswani et al. §3.2.2) of ``heads`` heads of units /
    heads dimensions each, whose keys and values are projected apart from its queries
    (``keys_values``), so that search keeps them. Its projections and arithmetic are
    tf.keras.layers.MultiHeadAttention's (names, shapes, the order they are made in, equations),
    which trained the runs before it: their checkpoints load, and a seed gives the same weights."""

    def __init__(self, units, heads, name):
        super().__init__(name=name)
        depth = units // heads
        self.scale = 1.0 / math.sqrt(float(depth))
        self._query_dense = _projection("abc,cde->abde", (None, heads, depth), "de", "query")
        self._key_dense = _projection("abc,cde->abde", (None, heads, depth), "de", "key")
        self._value_dense = _projection("abc,cde->abde", (None, heads, depth), "de", "value")
        self._output_dense = _projection("abcd,cde->abe", (None, units), "e", "attention_output")

    @property
    def compute_dtype(self):
        """The dtype of its keys, values and outputs (half precision under --mixed_precision)."""
        return self._key_dense.compute_dtype

    # Within the layer's name scope, as MultiHeadAttention's: its variables' names are those too.
    @tf.Module.with_name_scope
    def keys_values(self, x):
        """The keys and values (B, S, heads, depth) of positions x (B, S, units)."""
        return self._key_dense(x), self._value_dense(x)

    @tf.Module.with_name_scope
    def __call__(self, x, memory, mask):
        """The attention of positions x (B, T, units) over positions ``memory`` (B, S, units); ``mask``
        (B or 1, T or 1, S) or None: which positions may be attended to."""
        query = self._query_dense(x)  # before the keys: MultiHeadAttention's order of making weights
        return self._weigh(query, *self.keys_values(memory), mask)

    @tf.Module.with_name_scope
    def step(self, x, keys, values, mask=None):
        """``__call__`` over positions whose ``keys_values`` are given."""
        return self._weigh(self._query_dense(x), keys, values, mask)

    def _weigh(self, query, keys, values, mask):
        scores = tf.einsum("aecd,abcd->acbe", keys, query * self.scale)  # (B, heads, T, S)
        if mask is not None:  # NEG, or float16's lowest (-65504; Keras's choice too) where NEG overflows it
            scores = tf.where(mask[:, None], scores, max(NEG, scores.dtype.min))
        return self._output_dense(tf.einsum("acbe,aecd->abcd", tf.nn.softmax(scores), values))


def _projection(equation, output_shape, bias_axes, name):
    return tf.keras.layers.EinsumDense(equation, output_shape=output_shape, bias_axes=bias_axes, name=name)


class EncoderLayer(tf.Module):
    """Self-attention over the source, then the feed-forward sublayer, each pre-normed."""

    def __init__(self, units, heads, hidden, name):
        super().__init__(name=name)
        self.attention_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="attention_norm")
        self.attention = Attention(units, heads, "attention")
        self.ffn_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="ffn_norm")
        self.ffn = FeedForward(units, hidden, "ffn")

    def __call__(self, x, key_mask, dropout):
        """x (B, S, units), key_mask (B, 1, S): which positions may be attended to."""
        normed = self.attention_norm(x)
        x = x + dropout(self.attention(normed, normed, key_mask))
        return x + dropout(self.ffn(self.ffn_norm(x)))


class DecoderLayer(tf.Module):
    """Causal self-attention, attention over the encoder's outputs (unless ``cross`` is False: a
    decoder conditioned by a prefix instead), feed-forward; each pre-normed."""

    def __init__(self, units, heads, hidden, name, cross=True):
        super().__init__(name=name)
        self.shape = (heads, units // heads)
        self.self_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="self_norm")
        self.self_attention = Attention(units, heads, "self_attention")
        if cross:
            self.cross_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="cross_norm")
            self.cross_attention = Attention(units, heads, "cross_attention")
        self.cross = cross
        self.ffn_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="ffn_norm")
        self.ffn = FeedForward(units, hidden, "ffn")

    def start_cache(self, batch_size, memory=None):
        """The search cache of no position yet: empty self-attention keys and values, of a length
        whose static value is unknown (each step makes it one longer, and search's loops accept the
        growth), and the keys and values of ``memory`` (B, S, units) that the cross-attention reads."""
        empty = tf.zeros([batch_size, 0, *self.shape], self.self_attention.compute_dtype)
        empty = tf.compat.v1.placeholder_with_default(empty, [None, None, *self.shape])
        cache = {"keys": empty, "values": empty}
        if self.cross:
            cache["memory_keys"], cache["memory_values"] = self.cross_attention.keys_values(memory)
        return cache

    def __call__(self, x, cache, memory, source_mask, causal_mask, dropout):
        """The outputs at target positions x (B, T, units) and the ``cache`` extended by them: without
        one (None), they attend to each other and to ``memory`` (B, S, units); with one
        (``start_cache``'s), to the positions it holds too, and to the memory it holds.
        ``causal_mask`` (1, T, P + T) or None (every position so far); ``source_mask`` (B, 1, S)."""
        normed = self.self_norm(x)
        if cache is None:
            x = x + dropout(self.self_attention(normed, normed, causal_mask))
        else:
            keys, values = self.self_attention.keys_values(normed)
            cache = dict(cache, keys=tf.concat([cache["keys"], keys], 1), values=tf.concat([cache["values"], values], 1))
            x = x + dropout(self.self_attention.step(normed, cache["keys"], cache["values"], causal_mask))
        if self.cross:
            normed = self.cross_norm(x)
            attended = self.cross_attention(normed, memory, source_mask) if cache is None else \
                self.cross_attention.step(normed, cache["memory_keys"], cache["memory_values"], source_mask)
            x = x + dropout(attended)
        return x + dropout(self.ffn(self.ffn_norm(x))), cache


class TiedOutput(tf.Module):
    """The output layer of a model with --tie_embeddings: logits = x E^T + b, where E is the target
    embedding's table (V, units) and b a bias of its own."""

    def __init__(self, embedding, name):
        super().__init__(name=name)
        self.embedding = embedding
        self.bias = tf.Variable(tf.zeros([embedding.input_dim]), name="bias")

    def __call__(self, x):
        # In x's dtype: under --mixed_precision, x and the product are half precision (the variables float32).
        return tf.matmul(x, tf.cast(self.embedding.embeddings, x.dtype), transpose_b=True) + tf.cast(self.bias, x.dtype)


def output_layer(word_embedding, vocab_size, tie):
    """The output layer over ``vocab_size`` words: a Dense of its own, or with --tie_embeddings
    (``tie``) the ``TiedOutput`` of ``word_embedding``'s table, which must then be --units wide."""
    if not tie:
        return tf.keras.layers.Dense(vocab_size, name="output")
    if word_embedding.projection is not None:
        raise UserError(f"--tie_embeddings: the output layer reads --units={word_embedding.units} numbers and the "
                        f"word embedding has --embedding_size={word_embedding.embedding.output_dim}; give them the "
                        "same value")
    word_embedding.embedding.build([None])
    return TiedOutput(word_embedding.embedding, "output")


class WordEmbedding(tf.Module):
    """Words -> vectors of --units: an embedding (of --embedding_size, projected when that differs),
    scaled by sqrt(units) so that words and positions start on the same scale, plus positions."""

    def __init__(self, vocab_size, embedding_size, units, name, init="scaled"):
        super().__init__(name=name)
        self.units = units
        # scaled: entries of standard deviation 1 / sqrt(size), so that once scaled they are of about
        # unit size, as the positions; glorot: Keras's Glorot-uniform, OpenNMT-tf's (about half that).
        init = (tf.keras.initializers.RandomNormal(stddev=embedding_size ** -0.5) if init == "scaled"
                else tf.keras.initializers.GlorotUniform())
        self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_size, embeddings_initializer=init,
                                                   name="embedding")
        self.projection = (tf.keras.layers.Dense(units, use_bias=False, name="projection")
                           if embedding_size != units else None)

    def __call__(self, ids, start=0):
        """ids (B, T) at positions ``start`` .. ``start + T - 1`` -> (B, T, units)."""
        x = self.embedding(ids)
        if self.projection is not None:
            x = self.projection(x)
        positions = sinusoids(start, tf.shape(ids)[1], self.units)[None]
        return x * math.sqrt(self.units) + tf.cast(positions, x.dtype)  # --mixed_precision: x's half precision


def feed_forward_width(units, heads, ffn_units, owner):
    """The feed-forward layers' width (--ffn_units, 0: 4 x --units) of layers of ``units`` split among
    ``heads`` heads; a UserError naming ``owner`` (the flag that chose these layers) when the heads
    do not divide the units."""
    if units % heads:
        raise UserError(f"--units={units}: {owner} splits it among --heads={heads} attention heads; "
                        "give a multiple of --heads")
    return ffn_units or 4 * units


def dropout_of(rate, rng):
    """x -> x with dropout ``rate``, one mask per element drawn from ``rng`` (the identity without)."""
    if rng is None or rate == 0:
        return lambda x: x
    keep = 1.0 - rate
    return lambda x: x * tf.cast(rng.uniform(tf.shape(x)) < keep, x.dtype) / keep


def causal_mask(length):
    """(1, T, T): position t attends to positions 0 .. t."""
    return tf.linalg.band_part(tf.ones([length, length], tf.bool), -1, 0)[None]


def decode(layers, x, caches, memory, memory_mask, causal, dropout):
    """Decoder ``layers`` over embedded targets x (B, T, units), given ``memory`` (B, S, units), or
    after the positions of their search ``caches`` (``start_caches``'s; None: none): their outputs,
    before the last LayerNorm, and the caches extended by these positions."""
    extended = []
    for layer, cache in zip(layers, [None] * len(layers) if caches is None else caches):
        x, cache = layer(x, cache, memory, memory_mask, causal, dropout)
        extended.append(cache)
    return x, tuple(extended)


def start_caches(layers, batch_size, memory=None):
    """Each decoder layer's search cache (``DecoderLayer.start_cache``) of no position yet."""
    return tuple(layer.start_cache(batch_size, memory) for layer in layers)

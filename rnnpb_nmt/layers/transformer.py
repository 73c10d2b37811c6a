"""The Transformer's building blocks (Vaswani et al. 2017), pre-layer-norm, of ``tf.keras`` layers:
the encoder and decoder layers, word embeddings with sinusoidal positions, a tied output layer,
and the decoding helpers that a Transformer decoder shares whatever conditions it (the encoder's
outputs for the encoder-decoder Transformer; a sentence's PB slots for the bound model's
Transformer language models).

Pre-layer-norm: each sublayer reads LayerNorm(x) and adds its output to x; a last LayerNorm after
each stack. Dropout is one mask per element drawn from the trainer's generator (``rng``), as the
recurrent layers draw theirs: training is reproducible by --seed and resumable. The Keras attention
layers' own dropout (on the attention weights) draws from Keras's seed, not from ``rng``, so it
stays 0.
"""

import math

import tensorflow as tf

from rnnpb_nmt.errors import UserError

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


def attention_layer(units, heads, name):
    """Multi-head attention of ``heads`` heads of units / heads dimensions each, its weights'
    dropout 0 (the module docstring)."""
    return tf.keras.layers.MultiHeadAttention(heads, units // heads, dropout=0.0, name=name)


class EncoderLayer(tf.Module):
    """Self-attention over the source, then the feed-forward sublayer, each pre-normed."""

    def __init__(self, units, heads, hidden, name):
        super().__init__(name=name)
        self.attention_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="attention_norm")
        self.attention = attention_layer(units, heads, "attention")
        self.ffn_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="ffn_norm")
        self.ffn = FeedForward(units, hidden, "ffn")

    def __call__(self, x, key_mask, dropout):
        """x (B, S, units), key_mask (B, 1, S): which positions may be attended to."""
        normed = self.attention_norm(x)
        x = x + dropout(self.attention(normed, normed, attention_mask=key_mask))
        return x + dropout(self.ffn(self.ffn_norm(x)))


class DecoderLayer(tf.Module):
    """Causal self-attention, attention over the encoder's outputs (unless ``cross`` is False: a
    decoder conditioned by a prefix instead), feed-forward; each pre-normed."""

    def __init__(self, units, heads, hidden, name, cross=True):
        super().__init__(name=name)
        self.self_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="self_norm")
        self.self_attention = attention_layer(units, heads, "self_attention")
        if cross:
            self.cross_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="cross_norm")
            self.cross_attention = attention_layer(units, heads, "cross_attention")
        self.cross = cross
        self.ffn_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="ffn_norm")
        self.ffn = FeedForward(units, hidden, "ffn")

    def __call__(self, x, past, memory, source_mask, causal_mask, dropout):
        """The outputs at target positions x (B, T, units), and the normalised self-attention inputs
        of the positions so far (``past`` (B, P, units), or None, then these T), which they attend to.
        ``causal_mask`` (1, T, P + T) or None (every position so far); ``source_mask`` (B, 1, S)."""
        normed = self.self_norm(x)
        keys = normed if past is None else tf.concat([past, normed], axis=1)
        x = x + dropout(self.self_attention(normed, keys, attention_mask=causal_mask))
        if self.cross:
            x = x + dropout(self.cross_attention(self.cross_norm(x), memory, attention_mask=source_mask))
        return x + dropout(self.ffn(self.ffn_norm(x))), keys


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


class WordEmbedding(tf.Module):
    """Words -> vectors of --units: an embedding (of --embedding_size, projected when that differs),
    scaled by sqrt(units) so that words and positions start on the same scale, plus positions."""

    def __init__(self, vocab_size, embedding_size, units, name):
        super().__init__(name=name)
        self.units = units
        # Entries of standard deviation 1 / sqrt(size): scaled, of about unit size, as the positions.
        init = tf.keras.initializers.RandomNormal(stddev=embedding_size ** -0.5)
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


def decode(layers, x, past, memory, memory_mask, causal, dropout):
    """Decoder ``layers`` over embedded targets x (B, T, units) after the cached ``past`` (a tensor
    per layer, or None): (their outputs, before the last LayerNorm, and the caches extended by these
    positions)."""
    caches = []
    for layer, cache in zip(layers, [None] * len(layers) if past is None else past):
        x, cache = layer(x, cache, memory, memory_mask, causal, dropout)
        caches.append(cache)
    return x, tuple(caches)


def empty_caches(batch_size, units, count, dtype=tf.float32):
    """``count`` decoder caches of no position yet, of a length whose static value is unknown: each
    search step makes it one longer, and search's loops accept the growth. ``dtype``: that of the
    layers' outputs (half precision under --mixed_precision)."""
    empty = tf.zeros([batch_size, 0, units], dtype)
    empty = tf.compat.v1.placeholder_with_default(empty, [None, None, units])
    return tuple(empty for _ in range(count))

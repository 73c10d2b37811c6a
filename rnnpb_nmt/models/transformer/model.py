"""The encoder-decoder Transformer (Vaswani et al. 2017), pre-layer-norm, of ``tf.keras`` layers.

Pre-layer-norm (each sublayer reads LayerNorm(x) and adds its output to x; a last LayerNorm after
each stack), as current toolkits train it: without warm-up it trains stably on small data, where
the paper's post-norm needs a learning-rate schedule the toolkit's optimisers do not have.

- Words: an embedding of --embedding_size (projected to --units when the two differ), times
  sqrt(--units), plus sinusoidal positions. The output layer is its own (untied), as the
  recurrent baselines', unless --tie_embeddings makes it the target embedding's table (then
  --embedding_size = --units).
- Masks: no position attends to source padding; the decoder's self-attention is causal, so a
  target position never sees the targets after it (nor their padding).
- Dropout (--dropout) on the embedded words and on every sublayer's output before it joins the
  residual, one mask per element drawn from the trainer's generator (``rng``), as the recurrent
  models draw theirs: training is reproducible by --seed and resumable. The Keras attention
  layers' own dropout (on the attention weights) draws from Keras's seed, not from ``rng``, so it
  stays 0.
- Search: ``decoder_start`` encodes the source once; the state keeps, per decoder layer, the
  normalised inputs of its self-attention at the positions so far (what the next position attends
  to), so a step computes only the new position: each layer appends the new position's input to its
  cache and attends over it. The caches grow along axis 1 (the hypothesis on axis 0, as search
  needs), whose static length is left unknown so that search's loops accept the growth.
"""

import math

import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.models.losses import token_mask
from rnnpb_nmt.models.teacher_forced import TeacherForcedModel
from rnnpb_nmt.registry import register_model

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
    """Causal self-attention, attention over the encoder's outputs, feed-forward; each pre-normed."""

    def __init__(self, units, heads, hidden, name):
        super().__init__(name=name)
        self.self_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="self_norm")
        self.self_attention = attention_layer(units, heads, "self_attention")
        self.cross_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="cross_norm")
        self.cross_attention = attention_layer(units, heads, "cross_attention")
        self.ffn_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="ffn_norm")
        self.ffn = FeedForward(units, hidden, "ffn")

    def __call__(self, x, past, memory, source_mask, causal_mask, dropout):
        """The outputs at target positions x (B, T, units), and the normalised self-attention inputs
        of the positions so far (``past`` (B, P, units), or None, then these T), which they attend to.
        ``causal_mask`` (1, T, P + T) or None (every position so far); ``source_mask`` (B, 1, S)."""
        normed = self.self_norm(x)
        keys = normed if past is None else tf.concat([past, normed], axis=1)
        x = x + dropout(self.self_attention(normed, keys, attention_mask=causal_mask))
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
        return tf.matmul(x, self.embedding.embeddings, transpose_b=True) + self.bias


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
        return x * math.sqrt(self.units) + sinusoids(start, tf.shape(ids)[1], self.units)[None]


@register_model("transformer")
class Transformer(TeacherForcedModel):
    """--num_layers encoder and decoder layers of width --units, --heads heads, --ffn_units wide
    feed-forward sublayers (0: 4 x --units)."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        p = config.model
        if p.units % p.heads:
            raise UserError(f"--units={p.units}: --model=transformer splits it among --heads={p.heads} "
                            "attention heads; give a multiple of --heads")
        hidden = p.ffn_units or 4 * p.units
        self.src_embedding = WordEmbedding(len(vocab1), p.embedding_size, p.units, "src_embedding")
        self.tgt_embedding = WordEmbedding(len(vocab2), p.embedding_size, p.units, "tgt_embedding")
        self.encoder_layers = [EncoderLayer(p.units, p.heads, hidden, f"encoder_{i}") for i in range(p.num_layers)]
        self.decoder_layers = [DecoderLayer(p.units, p.heads, hidden, f"decoder_{i}") for i in range(p.num_layers)]
        self.encoder_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="encoder_norm")
        self.decoder_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="decoder_norm")
        self.output_layer = self._output_layer(p, len(vocab2))
        self.teacher_forced_logits(tf.constant([[3]]), tf.constant([[1]]))  # builds every weight now

    def _output_layer(self, p, vocab_size):
        if not p.tie_embeddings:
            return tf.keras.layers.Dense(vocab_size, name="output")
        if p.embedding_size != p.units:
            raise UserError(f"--tie_embeddings: the output layer reads --units={p.units} numbers and the target "
                            f"embedding has --embedding_size={p.embedding_size}; give them the same value")
        self.tgt_embedding.embedding.build([None])
        return TiedOutput(self.tgt_embedding.embedding, "output")

    def _dropout(self, rng):
        """x -> x with --dropout applied, one mask per element drawn from ``rng`` (none without)."""
        rate = self.config.model.dropout
        if rng is None or rate == 0:
            return lambda x: x
        keep = 1.0 - rate
        return lambda x: x * tf.cast(rng.uniform(tf.shape(x)) < keep, x.dtype) / keep

    def encode(self, src, rng=None):
        """(the encoder's outputs (B, S, units), the mask (B, 1, S) of their real positions)."""
        dropout = self._dropout(rng)
        mask = token_mask(src)[:, None, :]
        x = dropout(self.src_embedding(src))
        for layer in self.encoder_layers:
            x = layer(x, mask, dropout)
        return self.encoder_norm(x), mask

    def _decode(self, x, past, memory, source_mask, causal_mask, dropout):
        """Decoder layers over embedded targets x (B, T, units) after the cached ``past`` (a tensor
        per layer, or None): (logits (B, T, V), the caches extended by these positions)."""
        caches = []
        for layer, cache in zip(self.decoder_layers, [None] * len(self.decoder_layers) if past is None else past):
            x, cache = layer(x, cache, memory, source_mask, causal_mask, dropout)
            caches.append(cache)
        return self.output_layer(self.decoder_norm(x)), tuple(caches)

    def teacher_forced_logits(self, src, previous, rng=None):
        dropout = self._dropout(rng)
        memory, source_mask = self.encode(src, rng)
        length = tf.shape(previous)[1]
        causal = tf.linalg.band_part(tf.ones([length, length], tf.bool), -1, 0)[None]  # (1, T, T)
        logits, _ = self._decode(dropout(self.tgt_embedding(previous)), None, memory, source_mask, causal, dropout)
        return logits

    def decoder_start(self, src, reverse):
        memory, source_mask = self.encode(src)
        empty = tf.zeros([tf.shape(src)[0], 0, self.config.model.units])
        # No positions yet, of a length whose static value is unknown: each step makes it one longer.
        empty = tf.compat.v1.placeholder_with_default(empty, [None, None, self.config.model.units])
        return memory, source_mask, tuple(empty for _ in self.decoder_layers)

    def decoder_step(self, tokens, state, reverse):
        memory, source_mask, past = state
        x = self.tgt_embedding(tokens[:, None], start=tf.shape(past[0])[1])
        logits, caches = self._decode(x, past, memory, source_mask, None, lambda x: x)
        return logits[:, 0], (memory, source_mask, caches)

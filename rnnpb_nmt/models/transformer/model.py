"""The encoder-decoder Transformer (Vaswani et al. 2017), pre-layer-norm, of the layers of
``rnnpb_nmt.layers.transformer``.

Pre-layer-norm (each sublayer reads LayerNorm(x) and adds its output to x; a last LayerNorm after
each stack), as current toolkits train it: without warm-up it trains stably on small data, where
the paper's post-norm needs a learning-rate schedule the toolkit's optimisers do not have.

- Words: an embedding of --embedding_size (projected to --units when the two differ), times
  sqrt(--units), plus sinusoidal positions; its table starts N(0, 1 / --embedding_size), or
  Glorot-uniform as OpenNMT-tf's (--word_init=glorot). The output layer is its own (untied), as the
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
  projected keys and values of the source and of the target positions so far, so a step computes
  only the new position: each layer appends the new position's keys and values to its cache and
  attends over it. The caches grow along axis 1 (the hypothesis on axis 0, as search needs), whose
  static length is left unknown so that search's loops accept the growth.
"""

import tensorflow as tf

from rnnpb_nmt.layers.transformer import (EPSILON, DecoderLayer, EncoderLayer, WordEmbedding, causal_mask, decode,
                                          dropout_of, feed_forward_width, output_layer, start_caches)
from rnnpb_nmt.models.losses import token_mask
from rnnpb_nmt.models.teacher_forced import TeacherForcedModel
from rnnpb_nmt.registry import register_model


@register_model("transformer")
class Transformer(TeacherForcedModel):
    """--num_layers encoder and decoder layers of width --units, --heads heads, --ffn_units wide
    feed-forward sublayers (0: 4 x --units)."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        p = config.model
        hidden = feed_forward_width(p.units, p.heads, p.ffn_units, "--model=transformer")
        self.src_embedding = WordEmbedding(len(vocab1), p.embedding_size, p.units, "src_embedding", p.word_init)
        self.tgt_embedding = WordEmbedding(len(vocab2), p.embedding_size, p.units, "tgt_embedding", p.word_init)
        self.encoder_layers = [EncoderLayer(p.units, p.heads, hidden, f"encoder_{i}") for i in range(p.num_layers)]
        self.decoder_layers = [DecoderLayer(p.units, p.heads, hidden, f"decoder_{i}") for i in range(p.num_layers)]
        self.encoder_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="encoder_norm")
        self.decoder_norm = tf.keras.layers.LayerNormalization(epsilon=EPSILON, name="decoder_norm")
        self.output_layer = output_layer(self.tgt_embedding, len(vocab2), p.tie_embeddings)
        self.teacher_forced_logits(tf.constant([[3]]), tf.constant([[1]]))  # builds every weight now

    def _dropout(self, rng):
        return dropout_of(self.config.model.dropout, rng)

    def encode(self, src, rng=None):
        """(the encoder's outputs (B, S, units), the mask (B, 1, S) of their real positions)."""
        dropout = self._dropout(rng)
        mask = token_mask(src)[:, None, :]
        x = dropout(self.src_embedding(src))
        for layer in self.encoder_layers:
            x = layer(x, mask, dropout)
        return self.encoder_norm(x), mask

    def _decode(self, x, caches, memory, source_mask, causal, dropout):
        """(logits (B, T, V), the caches extended) of embedded targets x after the search ``caches``."""
        x, caches = decode(self.decoder_layers, x, caches, memory, source_mask, causal, dropout)
        return self.output_layer(self.decoder_norm(x)), caches

    def teacher_forced_logits(self, src, previous, rng=None):
        dropout = self._dropout(rng)
        memory, source_mask = self.encode(src, rng)
        causal = causal_mask(tf.shape(previous)[1])
        logits, _ = self._decode(dropout(self.tgt_embedding(previous)), None, memory, source_mask, causal, dropout)
        return logits

    def decoder_start(self, src):
        memory, source_mask = self.encode(src)
        return source_mask, start_caches(self.decoder_layers, tf.shape(src)[0], memory)

    def decoder_step(self, tokens, state):
        source_mask, caches = state
        x = self.tgt_embedding(tokens[:, None], start=tf.shape(caches[0]["keys"])[1])
        logits, caches = self._decode(x, caches, None, source_mask, None, lambda x: x)
        return logits[:, 0], (source_mask, caches)

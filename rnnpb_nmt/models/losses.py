"""Teacher forcing and the per-sentence cross-entropy every model's loss is built from."""

import tensorflow as tf

from rnnpb_nmt.data.vocabulary import PAD_ID, START_ID


def decoder_inputs(seq):
    """Teacher-forcing inputs for targets ``seq`` (words + ``<end>``): ``<start>`` shifted in."""
    return tf.concat([tf.fill([tf.shape(seq)[0], 1], START_ID), seq[:, :-1]], axis=1)


def token_mask(seq):
    return tf.not_equal(seq, PAD_ID)


def reverse_words(seq):
    """Sentences ``seq`` (B, T) with their words backwards, ``<end>`` still last and the padding
    still at the end: what an encoder reads under --reverse_source or --proposal_reverse."""
    lengths = tf.reduce_sum(tf.cast(token_mask(seq), tf.int32), axis=1)
    return tf.reverse_sequence(seq, lengths - 1, seq_axis=1, batch_axis=0)


def noised(seq, rng, drop=0.1, window=3):
    """Sentences ``seq`` (B, T) (words + ``<end>``, padded) with noise (Lample et al. 2018): each word
    deleted with probability ``drop`` (a sentence keeps at least its first word), the others moved
    by less than ``window`` positions (sorted by position + uniform(0, window)); ``<end>`` follows
    the words and the deleted ones become padding. Drawn from ``rng``, a tf.random.Generator."""
    shape, length = tf.shape(seq), tf.shape(seq)[1]
    position = tf.range(length)[None, :]
    sentence_length = tf.reduce_sum(tf.cast(token_mask(seq), tf.int32), axis=1, keepdims=True)
    word = position < sentence_length - 1
    keep = word & (rng.uniform(shape) >= drop)
    keep |= word & (position == 0) & ~tf.reduce_any(keep, axis=1, keepdims=True)
    later = tf.cast(length + window, tf.float32)  # after every kept word: <end>, then the rest in order
    key = tf.where(keep, tf.cast(position, tf.float32) + rng.uniform(shape, 0, window),
                   tf.where(position == sentence_length - 1, later, later + 1.0 + tf.cast(position, tf.float32)))
    shuffled = tf.gather(seq, tf.argsort(key, axis=1, stable=True), batch_dims=1)
    kept = tf.reduce_sum(tf.cast(keep, tf.int32), axis=1, keepdims=True)
    return tf.where(position <= kept, shuffled, tf.zeros_like(shuffled) + PAD_ID)


def summed_cross_entropy(logits, targets, label_smoothing=0.0):
    """Per-sentence cross-entropy summed over the real (non-padding) positions, and their count.

    With ``label_smoothing`` e > 0 (training only: --label_smoothing), each position's term is the
    cross-entropy against (1 - e) x the gold word + e x the uniform distribution over the V words:
    -(1 - e) log p(gold) - (e / V) sum_k log p(k)."""
    mask = tf.cast(token_mask(targets), tf.float32)
    logits = tf.cast(logits, tf.float32)  # half-precision logits of --mixed_precision: softmax in float32
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    if label_smoothing:
        uniform = -tf.reduce_mean(tf.nn.log_softmax(logits), axis=-1)
        ce = (1.0 - label_smoothing) * ce + label_smoothing * uniform
    return tf.reduce_sum(ce * mask, axis=1), tf.reduce_sum(mask, axis=1)

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


def summed_cross_entropy(logits, targets):
    """Per-sentence cross-entropy summed over the real (non-padding) positions, and their count."""
    mask = tf.cast(token_mask(targets), tf.float32)
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    return tf.reduce_sum(ce * mask, axis=1), tf.reduce_sum(mask, axis=1)

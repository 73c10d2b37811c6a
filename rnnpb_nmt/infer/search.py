"""Greedy and beam search over any model that exposes a one-step decoder.

A model gives ``step_fn(tokens, state) -> (logits, state)``: tokens (N,) are the previous words,
state is any nest of tensors with the hypothesis on axis 0. Both searches stop a hypothesis at
``<end>``; a sentence whose hypotheses reach ``max_lengths`` words is forced to end there. Scores
are summed log-probabilities (the thesis uses no length normalisation). Beam search may rank its
hypotheses by those scores divided by GNMT's length penalty (Wu et al. 2016, eq. 14),
lp(Y) = ((5 + |Y|) / 6)^α, as OpenNMT does; α = 0 divides by exactly 1, the thesis's search.
"""

from typing import NamedTuple

import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, START_ID
from rnnpb_nmt.scores import NEG


class Hypotheses(NamedTuple):
    """A search's output: ``ids`` (B, k, T) from beam search, (B, T) from greedy search, each row
    its words, ``<end>``, then padding; ``scores`` (B, k) / (B,), their summed log-probabilities;
    ``token_scores`` like ``ids``, each word's log-probability (0 on padding), summing to the score."""

    ids: tf.Tensor
    scores: tf.Tensor
    token_scores: tf.Tensor


def log_softmax(logits):
    """Log-probabilities of a step's ``logits``, in float32 whatever their dtype (--mixed_precision's
    half-precision models, searching during training): the scores add up over many steps."""
    return tf.nn.log_softmax(tf.cast(logits, tf.float32))


def _only(token, vocab_size, log_probs):
    """Log-probabilities where every word but ``token`` is impossible; ``token`` keeps its own."""
    keep = tf.one_hot(token, vocab_size, on_value=True, off_value=False)
    return tf.where(keep, log_probs, NEG)


def _normalize(scores, lengths, length_penalty):
    """``scores`` / lp(``lengths``). An impossible score stays as it is: divided by a large
    penalty it could otherwise come near 0 and outrank every possible hypothesis."""
    penalty = tf.pow((5.0 + tf.cast(lengths, scores.dtype)) / 6.0, length_penalty)
    return tf.where(scores > NEG / 2, scores / penalty, scores)


def normalized(ids, scores, length_penalty):
    """The length-normalised scores of hypotheses ``ids`` (..., T) of summed log-probabilities
    ``scores`` (...): what beam search ranks them by. The length counts the words up to and
    including ``<end>``, which every hypothesis has."""
    lengths = tf.argmax(tf.cast(tf.equal(ids, END_ID), tf.int32), axis=-1, output_type=tf.int32) + 1
    return _normalize(scores, lengths, length_penalty)


def greedy_hypotheses(step_fn, state, max_lengths):
    """Greedy search's ``Hypotheses``, one per sentence. A length penalty would not change its
    choice: the words it chooses among all give a hypothesis of the same length, so dividing
    their scores by the same penalty keeps their order."""
    batch = tf.shape(max_lengths)[0]
    tokens = tf.fill([batch], START_ID)
    finished = tf.zeros([batch], tf.bool)
    scores = tf.zeros([batch])
    out = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    out_scores = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    t = tf.constant(0)
    while not tf.reduce_all(finished):
        logits, state = step_fn(tokens, state)
        log_probs = log_softmax(logits)
        log_probs = tf.where((t >= max_lengths)[:, None], _only(END_ID, tf.shape(logits)[1], log_probs), log_probs)
        best = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
        step_score = tf.where(finished, 0.0, tf.gather(log_probs, best, batch_dims=1))
        tokens = tf.where(finished, PAD_ID, best)
        scores += step_score
        out = out.write(t, tokens)
        out_scores = out_scores.write(t, step_score)
        finished = finished | tf.equal(tokens, END_ID)
        t += 1
    return Hypotheses(tf.transpose(out.stack()), scores, tf.transpose(out_scores.stack()))


def _tile_beams(tensor, beam_size):
    """(B, ...) -> (B * beam_size, ...), each row repeated beam_size times in place."""
    return tf.repeat(tensor, beam_size, axis=0)


def beam_search(step_fn, state, max_lengths, beam_size, length_penalty=0.0):
    """Keep the ``beam_size`` best hypotheses per sentence, expanding each by all words.

    Returns (ids (B, T) of the best finished hypothesis by its length-normalised score, its
    summed log-probability (B,)).
    """
    found = beam_hypotheses(step_fn, state, max_lengths, beam_size, length_penalty)
    return best_of(found.ids, found.scores, normalized(found.ids, found.scores, length_penalty))


def best_of(seqs, scores, rank=None):
    """(ids (B, T), score (B,)) of each sentence's hypothesis of the highest ``rank`` (B, k)
    (default: its score) among ``seqs`` (B, k, T); ties go to the first."""
    best = tf.argmax(scores if rank is None else rank, axis=1, output_type=tf.int32)
    return tf.gather(seqs, best, batch_dims=1), tf.gather(scores, best, batch_dims=1)


def beam_hypotheses(step_fn, state, max_lengths, beam_size, length_penalty=0.0):
    """The beam's ``beam_size`` final ``Hypotheses`` per sentence, best first by their scores
    divided by the length penalty (``normalized``). At each step the beam keeps the k best
    expansions by that normalised score, the length being the words so far including ``<end>``
    (a finished hypothesis keeps its own). A hypothesis the beam never filled (fewer than k
    possible outputs) has a score of about ``NEG``."""
    batch = tf.shape(max_lengths)[0]
    k = beam_size
    state = tf.nest.map_structure(lambda s: _tile_beams(s, k), state)
    beam_max = _tile_beams(max_lengths, k)
    scores = tf.tile(tf.concat([[0.0], tf.fill([k - 1], NEG)], 0)[None, :], [batch, 1])
    lengths = tf.zeros([batch, k], tf.int32)
    finished = tf.zeros([batch, k], tf.bool)
    seqs = tf.zeros([batch, k, 0], tf.int32)
    token_scores = tf.zeros([batch, k, 0])
    tokens = tf.fill([batch * k], START_ID)

    def body(t, tokens, state, scores, lengths, finished, seqs, token_scores):
        logits, state = step_fn(tokens, state)
        vocab = tf.shape(logits)[1]
        log_probs = log_softmax(logits)
        log_probs = tf.where((t >= beam_max)[:, None], _only(END_ID, vocab, log_probs), log_probs)
        # A finished hypothesis continues only with padding, at no cost, so it keeps its score.
        done_row = tf.one_hot(PAD_ID, vocab, on_value=0.0, off_value=NEG)
        log_probs = tf.where(tf.reshape(finished, [-1, 1]), done_row[None, :], log_probs)
        log_probs = tf.reshape(log_probs, [batch, k, vocab])
        candidates = scores[:, :, None] + log_probs
        lengths = tf.where(finished, lengths, t + 1)
        rank = _normalize(candidates, lengths[:, :, None], length_penalty)
        _, flat = tf.math.top_k(tf.reshape(rank, [batch, -1]), k)
        parent, word = flat // vocab, flat % vocab
        rows = tf.reshape(parent + tf.range(batch)[:, None] * k, [-1])
        state = tf.nest.map_structure(lambda s: tf.gather(s, rows), state)

        def extended(prefixes, last):
            return tf.concat([tf.gather(prefixes, parent, batch_dims=1), last[:, :, None]], axis=2)

        def chosen(per_word):
            return tf.gather(tf.reshape(per_word, [batch, -1]), flat, batch_dims=1)

        seqs = extended(seqs, word)
        token_scores = extended(token_scores, chosen(log_probs))
        finished = tf.gather(finished, parent, batch_dims=1) | tf.equal(word, END_ID)
        return (t + 1, tf.reshape(word, [-1]), state, chosen(candidates), tf.gather(lengths, parent, batch_dims=1),
                finished, seqs, token_scores)

    state_shapes = tf.nest.map_structure(lambda s: tf.TensorShape([None] + s.shape[1:].as_list()), state)
    beams, hypotheses = tf.TensorShape([None, k]), tf.TensorShape([None, k, None])
    *_, scores, _, _, seqs, token_scores = tf.while_loop(
        lambda t, tokens, state, scores, lengths, finished, *_: tf.logical_not(tf.reduce_all(finished)),
        body, (tf.constant(0), tokens, state, scores, lengths, finished, seqs, token_scores),
        shape_invariants=(tf.TensorShape([]), tf.TensorShape([None]), state_shapes,
                          beams, beams, beams, hypotheses, hypotheses))
    return Hypotheses(seqs, scores, token_scores)

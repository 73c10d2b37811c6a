"""Greedy and beam search over any model that exposes a one-step decoder.

A model gives ``step_fn(tokens, state) -> (logits, state)``: tokens (N,) are the previous words,
state is any nest of tensors with the hypothesis on axis 0. Both searches stop a hypothesis at
``<end>``; a sentence whose hypotheses reach ``max_lengths`` words is forced to end there. Scores
are summed log-probabilities (the thesis uses no length normalisation).
"""

import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, START_ID

NEG = -1e9  # "impossible" score; finite so that sums never produce NaN


def _only(token, vocab_size, log_probs):
    """Log-probabilities where every word but ``token`` is impossible; ``token`` keeps its own."""
    keep = tf.one_hot(token, vocab_size, on_value=True, off_value=False)
    return tf.where(keep, log_probs, NEG)


def greedy_search(step_fn, state, max_lengths):
    """Pick the most probable word at each step. Returns (ids (B, T), summed log-probs (B,))."""
    batch = tf.shape(max_lengths)[0]
    tokens = tf.fill([batch], START_ID)
    finished = tf.zeros([batch], tf.bool)
    scores = tf.zeros([batch])
    out = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    t = tf.constant(0)
    while not tf.reduce_all(finished):
        logits, state = step_fn(tokens, state)
        log_probs = tf.nn.log_softmax(logits)
        log_probs = tf.where((t >= max_lengths)[:, None], _only(END_ID, tf.shape(logits)[1], log_probs), log_probs)
        best = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
        step_score = tf.gather(log_probs, best, batch_dims=1)
        tokens = tf.where(finished, PAD_ID, best)
        scores += tf.where(finished, 0.0, step_score)
        out = out.write(t, tokens)
        finished = finished | tf.equal(tokens, END_ID)
        t += 1
    return tf.transpose(out.stack()), scores


def _tile_beams(tensor, beam_size):
    """(B, ...) -> (B * beam_size, ...), each row repeated beam_size times in place."""
    return tf.repeat(tensor, beam_size, axis=0)


def beam_search(step_fn, state, max_lengths, beam_size):
    """Keep the ``beam_size`` most probable hypotheses per sentence, expanding each by all words.

    Returns (ids (B, T) of the best finished hypothesis, its summed log-probability (B,)).
    """
    return best_of(*beam_search_nbest(step_fn, state, max_lengths, beam_size))


def best_of(seqs, scores, rank=None):
    """(ids (B, T), score (B,)) of each sentence's hypothesis of the highest ``rank`` (B, k)
    (default: its score) among ``seqs`` (B, k, T); ties go to the first."""
    best = tf.argmax(scores if rank is None else rank, axis=1, output_type=tf.int32)
    return tf.gather(seqs, best, batch_dims=1), tf.gather(scores, best, batch_dims=1)


def beam_search_nbest(step_fn, state, max_lengths, beam_size):
    """The beam's ``beam_size`` final hypotheses per sentence: ids (B, k, T), each ending in
    ``<end>`` then padding, and summed log-probabilities (B, k), best first. A hypothesis the
    beam never filled (fewer than k possible outputs) has a score of about ``NEG``."""
    batch = tf.shape(max_lengths)[0]
    k = beam_size
    state = tf.nest.map_structure(lambda s: _tile_beams(s, k), state)
    beam_max = _tile_beams(max_lengths, k)
    scores = tf.tile(tf.concat([[0.0], tf.fill([k - 1], NEG)], 0)[None, :], [batch, 1])
    finished = tf.zeros([batch, k], tf.bool)
    seqs = tf.zeros([batch, k, 0], tf.int32)
    tokens = tf.fill([batch * k], START_ID)

    def body(t, tokens, state, scores, finished, seqs):
        logits, state = step_fn(tokens, state)
        vocab = tf.shape(logits)[1]
        log_probs = tf.nn.log_softmax(logits)
        log_probs = tf.where((t >= beam_max)[:, None], _only(END_ID, vocab, log_probs), log_probs)
        # A finished hypothesis continues only with padding, at no cost, so it keeps its score.
        done_row = tf.one_hot(PAD_ID, vocab, on_value=0.0, off_value=NEG)
        log_probs = tf.where(tf.reshape(finished, [-1, 1]), done_row[None, :], log_probs)
        candidates = tf.reshape(scores[:, :, None] + tf.reshape(log_probs, [batch, k, vocab]), [batch, -1])
        scores, flat = tf.math.top_k(candidates, k)
        parent, word = flat // vocab, flat % vocab
        rows = tf.reshape(parent + tf.range(batch)[:, None] * k, [-1])
        state = tf.nest.map_structure(lambda s: tf.gather(s, rows), state)
        seqs = tf.concat([tf.gather(seqs, parent, batch_dims=1), word[:, :, None]], axis=2)
        finished = tf.gather(finished, parent, batch_dims=1) | tf.equal(word, END_ID)
        return t + 1, tf.reshape(word, [-1]), state, scores, finished, seqs

    state_shapes = tf.nest.map_structure(lambda s: tf.TensorShape([None] + s.shape[1:].as_list()), state)
    _, _, _, scores, finished, seqs = tf.while_loop(
        lambda t, tokens, state, scores, finished, seqs: tf.logical_not(tf.reduce_all(finished)),
        body, (tf.constant(0), tokens, state, scores, finished, seqs),
        shape_invariants=(tf.TensorShape([]), tf.TensorShape([None]), state_shapes,
                          tf.TensorShape([None, k]), tf.TensorShape([None, k]),
                          tf.TensorShape([None, k, None])))
    return seqs, scores

"""Beam search against greedy search and against exhaustive search on models small enough to enumerate."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.dataset import encode_all, make_dataset
from rnnpb_nmt.data.vocabulary import END_ID, Vocabulary
from rnnpb_nmt.infer import search
from rnnpb_nmt.models.seq2seq.model import EncoderDecoder

from helpers import tiny_config


def random_model(seed=0):
    tf.random.set_seed(seed)
    vocab = Vocabulary([f"w{i}" for i in range(12)])
    return EncoderDecoder(tiny_config(model="encdec"), vocab, vocab), vocab


def run(model, src, fn):
    batch = next(iter(make_dataset(src, batch_size=len(src))))["src"]
    max_len = tf.constant([len(s) + 1 for s in src])
    step = lambda tokens, state: model.decoder_step(tokens, state, False)
    return tf.function(lambda b: fn(step, model.decoder_start(b, False), max_len))(batch)


def test_beam_of_one_is_greedy():
    model, vocab = random_model()
    src = encode_all(vocab, [["w1", "w2"], ["w3"], ["w4", "w5", "w6", "w7"]])
    g_ids, g_scores = run(model, src, search.greedy_search)
    b_ids, b_scores = run(model, src, lambda s, st, m: search.beam_search(s, st, m, 1))
    width = min(g_ids.shape[1], b_ids.shape[1])
    np.testing.assert_array_equal(g_ids.numpy()[:, :width], b_ids.numpy()[:, :width])
    np.testing.assert_allclose(g_scores.numpy(), b_scores.numpy(), rtol=1e-5)


def sequence_log_prob(model, src_ids, out_ids):
    """Log-probability of a full output (words + <end>) under the model, by teacher forcing."""
    state = model.decoder_start(tf.constant([src_ids]), False)
    token, total = tf.constant([1]), 0.0
    for word in list(out_ids) + [END_ID]:
        logits, state = model.decoder_step(token, state, False)
        total += float(tf.nn.log_softmax(logits)[0, word])
        token = tf.constant([word])
    return total


def test_wide_beam_finds_the_most_probable_output_of_a_tiny_space():
    """With a 2-word target vocabulary and max length 3, enumerate every output exactly."""
    tf.random.set_seed(3)
    vocab = Vocabulary(["a", "b"])
    model = EncoderDecoder(tiny_config(model="encdec"), vocab, vocab)
    src = np.array([4, 5, END_ID], np.int32)
    step = lambda tokens, state: model.decoder_step(tokens, state, False)
    ids, score = search.beam_search(step, model.decoder_start(tf.constant([src]), False),
                                    tf.constant([3]), beam_size=50)
    candidates = [list(c) for n in range(4) for c in itertools.product([4, 5], repeat=n)]
    best = max(candidates, key=lambda c: sequence_log_prob(model, src, c))
    found = [int(i) for i in ids[0] if int(i) not in (0, END_ID)]
    assert found == best
    assert float(score[0]) == pytest.approx(sequence_log_prob(model, src, best), abs=1e-4)


def test_outputs_respect_the_length_cut_off():
    model, vocab = random_model(5)
    src = encode_all(vocab, [["w1"], ["w2", "w3", "w4"]])
    ids, _ = run(model, src, lambda s, st, m: search.beam_search(s, st, m, 4))
    for row, s in zip(ids.numpy(), src):
        words = [i for i in row if i not in (0, END_ID)]
        assert len(words) <= len(s) + 1

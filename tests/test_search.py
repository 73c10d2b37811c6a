"""Beam search against greedy search and against exhaustive search on models small enough to enumerate,
with and without a length penalty, and the log-probability of each word it gives."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.dataset import encode_all
from rnnpb_nmt.data.vocabulary import END_ID, Vocabulary
from rnnpb_nmt.infer import search
from rnnpb_nmt.models.seq2seq.model import EncoderDecoder

from helpers import run_search, tiny_config


def random_model(seed=0):
    tf.random.set_seed(seed)
    vocab = Vocabulary([f"w{i}" for i in range(12)])
    return EncoderDecoder(tiny_config(model="encdec"), vocab, vocab), vocab


@pytest.mark.parametrize("alpha", [0.0, 2.0])
def test_beam_of_one_is_greedy(alpha):
    """Also with a length penalty: a beam of one chooses among words that all give the same length."""
    model, vocab = random_model()
    src = encode_all(vocab, [["w1", "w2"], ["w3"], ["w4", "w5", "w6", "w7"]])
    g_ids, g_scores, _ = run_search(model, src, search.greedy_hypotheses)
    b_ids, b_scores = run_search(model, src, lambda s, st, m: search.beam_search(s, st, m, 1, alpha))
    width = min(g_ids.shape[1], b_ids.shape[1])
    np.testing.assert_array_equal(g_ids.numpy()[:, :width], b_ids.numpy()[:, :width])
    np.testing.assert_allclose(g_scores.numpy(), b_scores.numpy(), rtol=1e-5)


MAX_LENGTH = 3


@pytest.fixture(scope="module")
def tiny_space():
    """A model of a 2-word target vocabulary (6 ids with the specials, 5 of them words) and max length
    3: its 156 outputs can be enumerated. Its weights are scaled up so that its distributions are
    peaked for a length penalty to change the best output (test_the_length_penalty_changes_...)."""
    tf.keras.utils.set_random_seed(3)
    vocab = Vocabulary(["a", "b"])
    model = EncoderDecoder(tiny_config(model="encdec"), vocab, vocab)
    src = tf.constant([[4, 5, END_ID]])
    model.decoder_step(tf.constant([1]), model.decoder_start(src))  # builds the weights
    for variable in model.trainable_variables:
        variable.assign(variable * 6.0)
    return model, src, every_output(model, src)


def every_output(model, src):
    """{words: log-probability of each of them and of the <end> after them} of every output of at
    most MAX_LENGTH words (any id but <end>: search may choose <pad> or <start> mid-sentence)."""
    outputs = {}

    def expand(words, state, step_scores):
        logits, state = model.decoder_step(tf.constant([words[-1] if words else 1]), state)
        log_probs = tf.nn.log_softmax(logits)[0].numpy()
        outputs[tuple(words)] = step_scores + [log_probs[END_ID]]
        if len(words) < MAX_LENGTH:
            for word in range(len(log_probs)):
                if word != END_ID:
                    expand(words + [word], state, step_scores + [log_probs[word]])

    expand([], model.decoder_start(src), [])
    return outputs


def lp(length, alpha):
    return ((5 + length) / 6) ** alpha


def exhaustive_best(outputs, alpha):
    """The output of the highest summed log-probability / lp(words + <end>)."""
    return max(outputs, key=lambda words: sum(outputs[words]) / lp(len(words) + 1, alpha))


def words_of(ids):
    ids = [int(i) for i in ids]
    return tuple(ids[:ids.index(END_ID)])


def search_space(model, src, searcher, *args):
    return searcher(model.decoder_step, model.decoder_start(src), tf.constant([MAX_LENGTH]), *args)


ALPHAS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_a_beam_that_never_prunes_finds_the_best_output_of_a_tiny_space(tiny_space, alpha):
    """The exhaustive argmax of score / lp, with its raw summed log-probability as the score."""
    model, src, outputs = tiny_space
    ids, score = search_space(model, src, search.beam_search, len(outputs), alpha)
    best = exhaustive_best(outputs, alpha)
    assert words_of(ids[0]) == best
    assert float(score[0]) == pytest.approx(sum(outputs[best]), abs=1e-4)


def test_the_length_penalty_changes_the_best_output_of_the_tiny_space(tiny_space):
    """Else the test above would not tell a length penalty from none."""
    assert len({exhaustive_best(tiny_space[2], alpha) for alpha in ALPHAS}) > 1


@pytest.mark.parametrize("alpha", ALPHAS)
def test_a_beam_as_wide_as_the_space_returns_every_output_with_its_step_scores(tiny_space, alpha):
    """Each hypothesis's token scores are its step log-probabilities (0 on padding), summing to
    its score; the hypotheses come best first by score / lp."""
    model, src, outputs = tiny_space
    ids, scores, token_scores = search_space(model, src, search.beam_hypotheses, len(outputs), alpha)
    found = [words_of(row) for row in ids[0]]
    assert sorted(found) == sorted(outputs)
    for words, step_scores, score in zip(found, token_scores[0].numpy(), scores[0].numpy()):
        np.testing.assert_allclose(step_scores[:len(words) + 1], outputs[words], atol=1e-5)
        assert np.all(step_scores[len(words) + 1:] == 0.0)
        assert float(np.sum(step_scores)) == pytest.approx(float(score), abs=1e-4)
    rank = [sum(outputs[words]) / lp(len(words) + 1, alpha) for words in found]
    assert rank == pytest.approx(sorted(rank, reverse=True), abs=1e-5)
    np.testing.assert_allclose(search.normalized(ids, scores, alpha)[0], rank, atol=1e-5)


def test_greedy_token_scores_are_its_step_scores(tiny_space):
    model, src, outputs = tiny_space
    ids, score, token_scores = search_space(model, src, search.greedy_hypotheses)
    words = words_of(ids[0])
    np.testing.assert_allclose(token_scores[0].numpy()[:len(words) + 1], outputs[words], atol=1e-5)
    assert np.all(token_scores[0].numpy()[len(words) + 1:] == 0.0)
    assert float(score[0]) == pytest.approx(sum(outputs[words]), abs=1e-4)


def hypotheses_of_every_length(count, longest, seed=0):
    """``count`` rows of ids of 1 to ``longest`` words with <end> (and padding), and random scores
    (B,) of which the last four are two impossible ones, a tiny and a zero one."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, longest, size=[count])
    ids = np.where(np.arange(longest)[None, :] < lengths[:, None] - 1, 4, 0)
    ids[np.arange(count), lengths - 1] = END_ID
    scores = np.concatenate([-rng.exponential(30.0, count - 4), [search.NEG, search.NEG + 50, -1e-30, 0.0]])
    return tf.constant(ids, tf.int32), tf.constant(scores, tf.float32)


def test_no_length_penalty_ranks_by_exactly_the_summed_log_probabilities():
    """α = 0 divides by exactly 1.0, so the beam ranks, prunes and chooses bit for bit as it did
    before length penalties (checked against that code when they came, issue 43)."""
    ids, scores = hypotheses_of_every_length(64, 2000)
    assert search.normalized(ids, scores, 0.0).numpy().tobytes() == scores.numpy().tobytes()


def test_a_large_length_penalty_leaves_impossible_hypotheses_last():
    """NEG / lp of a long output at α = 10 would be near 0, above every possible hypothesis."""
    ids, scores = hypotheses_of_every_length(64, 2000)
    rank = search.normalized(ids, scores, 10.0).numpy()
    np.testing.assert_array_equal(rank[-4:-2], scores.numpy()[-4:-2])
    assert rank[-4:-2].max() < rank[:-4].min()


def test_without_a_length_penalty_the_nbest_is_best_first_by_score():
    model, vocab = random_model(2)
    src = encode_all(vocab, [["w1", "w2"], ["w3"], ["w4", "w5", "w6", "w7"]])
    ids, scores, _ = run_search(model, src, lambda s, st, m: search.beam_hypotheses(s, st, m, 5))
    assert np.all(np.diff(scores.numpy(), axis=1) <= 0)
    best_ids, best_scores = run_search(model, src, lambda s, st, m: search.beam_search(s, st, m, 5))
    np.testing.assert_array_equal(best_ids.numpy(), ids.numpy()[:, 0])
    np.testing.assert_array_equal(best_scores.numpy(), scores.numpy()[:, 0])


def test_outputs_respect_the_length_cut_off():
    model, vocab = random_model(5)
    src = encode_all(vocab, [["w1"], ["w2", "w3", "w4"]])
    ids, _ = run_search(model, src, lambda s, st, m: search.beam_search(s, st, m, 4))
    for row, s in zip(ids.numpy(), src):
        words = [i for i in row if i not in (0, END_ID)]
        assert len(words) <= len(s) + 1

"""--denoise_loss (issue 90, SONAR's denoising auto-encoding): the noise keeps <end> last and
padding after it, deletes words at about its rate without emptying a sentence, moves a word by
less than its window, is repeatable by seed; the bound model's term is in training only."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.vocabulary import PAD_ID
from rnnpb_nmt.models.losses import noised

from helpers import bound_model, first_batch, reversal_corpus

END = 2


def sentences(count=200, seed=0):
    """Sentences of 1-12 words of ids 4-40, each word once (so that it can be followed), then <end>, padded."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        words = rng.permutation(np.arange(4, 40))[:rng.integers(1, 13)]
        rows.append([*words, END] + [PAD_ID] * (12 - len(words)))
    return tf.constant(rows, tf.int32)


def test_noise_deletes_about_its_rate_moves_words_less_than_the_window_and_keeps_the_shape_of_a_sentence():
    seq = sentences()
    out = noised(seq, tf.random.Generator.from_seed(1), drop=0.1, window=3).numpy()
    assert out.shape == seq.shape
    kept = total = 0
    for before, after in zip(seq.numpy(), out):
        words = list(before[:list(before).index(END)])
        got = list(after[:list(after).index(END)])
        assert got and set(got) <= set(words)  # never empty, nothing new
        assert all(t == PAD_ID for t in after[len(got) + 1:])
        survivors = [w for w in words if w in got]
        for new, w in enumerate(got):  # its place among the survivors moves by less than the window
            assert abs(new - survivors.index(w)) < 3
        kept, total = kept + len(got), total + len(words)
    assert 0.85 < kept / total < 0.95
    assert (out != seq.numpy()).any()


def test_noise_is_repeatable_by_seed_and_a_sentence_of_no_words_stays_as_it_is():
    seq = sentences(50)
    first = noised(seq, tf.random.Generator.from_seed(7)).numpy()
    np.testing.assert_array_equal(first, noised(seq, tf.random.Generator.from_seed(7)).numpy())
    empty = tf.constant([[END, PAD_ID, PAD_ID]])
    np.testing.assert_array_equal(noised(empty, tf.random.Generator.from_seed(0)).numpy(), [[END, PAD_ID, PAD_ID]])


@pytest.mark.parametrize("language_model", ["lstm", "transformer"])
def test_the_denoising_term_is_in_the_training_loss_both_ways_and_not_in_evaluation(language_model):
    sizes = dict(units=16, embedding_size=16, heads=2, num_PB=12, pb_slots=2) if language_model == "transformer" \
        else dict(units=8, embedding_size=8, num_PB=8)
    model = bound_model(amortize="encoder", language_model=language_model, proposal_layers=1, refine_steps=1,
                        both_directions=True, self_loss=0.0, denoise_loss=0.5, **sizes)
    batch = first_batch(*reversal_corpus(4, seed=2))
    loss, _, terms = model.sentence_losses(batch, "parallel", tf.random.Generator.from_seed(3))
    assert {"denoise_a", "denoise_b"} <= set(terms)
    others = sum(v for k, v in terms.items() if k.startswith("prediction_") and k != "prediction_b_p0"
                 or k == "binding")
    np.testing.assert_allclose(loss.numpy(), (others + 0.5 * (terms["denoise_a"] + terms["denoise_b"])).numpy(),
                               rtol=1e-5)
    assert not {"denoise_a", "denoise_b"} & set(model.sentence_losses(batch, "parallel")[2])

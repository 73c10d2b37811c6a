"""--joint_rerank: the bound model reranks the beam's n-best list by joint recognition (rnnpb_nmt/models/rnnpb/joint.py)."""

import shutil

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.dataset import make_dataset
from rnnpb_nmt.data.vocabulary import PAD_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import search
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.models.rnnpb import joint

from helpers import ROOT, TRAINED_BEAM, cli_in_process, untrained_working_dir


def translator(model, weight):
    model.config = model.config.replace(joint_rerank=weight)
    return Translator(model)


def padded(ids):
    """Output id arrays of different lengths -> one (N, T) tensor, padded."""
    width = max(len(i) for i in ids)
    return tf.constant([np.pad(i, (0, width - len(i)), constant_values=PAD_ID) for i in ids], tf.int32)


def beam_of(model, test):
    """Plain beam search of the test sources: the sources (B, S), n-best (B, k, T) and scores (B, k)."""
    src = next(iter(make_dataset(test, batch_size=len(test))))["src"]
    max_lengths = tf.constant([int(np.ceil(1.5 * (len(s) - 1))) for s in test])
    nbest, scores, _ = tf.function(lambda s: search.beam_hypotheses(model.decoder_step, model.decoder_start(s),
                                                                    max_lengths, TRAINED_BEAM))(src)
    return src, nbest, scores


# Each compiled search or recognition costs seconds of tracing, its runs little: the tests of one
# trained model share the beam, its hypotheses' joint objectives and the reranking translator's
# outputs, computed once (none of them changes the model).
@pytest.fixture(scope="module")
def beam(trained):
    model, test = trained
    return beam_of(model, test)


@pytest.fixture(scope="module")
def objectives(trained, beam):
    """J (lowest best) of each hypothesis of the beam (B, k)."""
    model, _ = trained
    src, nbest, _ = beam
    objective = tf.function(lambda s, t: joint.joint_objective(model, s, t, 1.0)[0])
    return np.stack([objective(src, nbest[:, j]).numpy() for j in range(TRAINED_BEAM)], 1)


@pytest.fixture(scope="module")
def reranked(trained):
    """--joint_rerank=1's translations of the test sentences: the best ids, the n-best lists and the
    translations of their words (one translator, its search traced once)."""
    model, test = trained
    config = model.config
    reranking = translator(model, 1.0)
    sentences = [model.vocab1.decode(s) for s in test]
    ids, _ = reranking.translate_ids(test)
    outputs = ids, reranking.translate_nbest(sentences, TRAINED_BEAM), reranking.translate(sentences)
    model.config = config  # as trained (the search is traced): other tests, other modules, see it unchanged
    return outputs


def test_weight_zero_is_plain_beam_search(trained, beam):
    model, test = trained
    src, nbest, scores = beam
    best, _ = search.best_of(nbest, scores)
    ids, _ = translator(model, 0.0).translate_ids(test)
    np.testing.assert_array_equal(padded(ids).numpy(), best.numpy()[:, :padded(ids).shape[1]])


def test_the_chosen_hypothesis_has_the_lowest_joint_objective_of_the_nbest(beam, objectives, reranked):
    src, nbest, scores = beam
    assert np.all(np.ptp(objectives, axis=1) > 1e-3)  # the hypotheses differ in J: the choice means something
    ids, _, _ = reranked
    for i, chosen in enumerate(ids):
        rank = next(j for j in range(TRAINED_BEAM) if np.array_equal(nbest[i, j, :len(chosen)].numpy(), chosen))
        assert objectives[i, rank] <= objectives[i, 0] + 1e-4  # no worse than the beam's best
        assert objectives[i, rank] == pytest.approx(objectives[i].min(), abs=1e-4)


def test_joint_recognition_fits_the_pair_better_than_the_source_alone(trained, beam, objectives):
    """J's minimiser beats the source's own PB on the joint loss it minimises (J of the beam's best)."""
    model, _ = trained
    src, nbest, _ = beam
    own = tf.function(model.recognize)(src)["pb"]
    at_own = model.lm_a.sentence_losses(src, own)[0] + model.lm_b.sentence_losses(nbest[:, 0], own)[0]
    assert np.mean(objectives[:, 0]) < np.mean(at_own.numpy())


def test_joint_rerank_needs_a_bound_model_and_a_beam(demo_data, tmp_path):
    encdec = untrained_working_dir(tmp_path / "encdec", demo_data, model="encdec")
    with pytest.raises(UserError, match="--joint_rerank: --model=encdec has no joint objective"):
        translator(encdec, 1.0)
    bound = untrained_working_dir(tmp_path / "rnnpb", demo_data, model="rnnpbnmt", beam_size=1)
    with pytest.raises(UserError, match="give a --beam_size of at least 2"):
        translator(bound, 1.0)


@pytest.mark.slow
def test_the_command_line_reranks_both_ways(tmp_path, capsys):
    fixture = ROOT / "tests" / "fixtures" / "stack-py311"
    shutil.copytree(fixture / "rnnpb", tmp_path / "rnnpb")
    for test_set, extra, written in (("test.en", [], "test_trans.txt"),
                                     ("test.de", ["--reverse_translation"], "test_trans.reverse.txt")):
        status, _, err = cli_in_process(["--do_testing", "--joint_rerank=0.5", "--beam_size=3",
                                         f"--test_set={fixture / 'corpus' / test_set}", f"--working_dir={tmp_path / 'rnnpb'}",
                                         *extra], capsys)
        assert status == 0, err
        lines = (tmp_path / "rnnpb" / written).read_text().splitlines()
        assert len(lines) == len((fixture / "corpus" / test_set).read_text().splitlines())
    assert "joint_rerank" not in (tmp_path / "rnnpb" / "hparams.json").read_text()
    status, _, err = cli_in_process(["--do_testing", "--joint_rerank=-1", f"--test_set={fixture / 'corpus' / 'test.en'}",
                                     f"--working_dir={tmp_path / 'rnnpb'}"], capsys)
    assert status == 1 and "--joint_rerank=-1" in err


def test_the_nbest_follows_the_joint_reranking(trained, beam, objectives, reranked):
    """Best first by the joint objective J (lowest first), the first being translate's choice."""
    model, _ = trained
    _, beam_ids, _ = beam
    _, nbests, translations = reranked
    assert [nbest[0].tokens for nbest in nbests] == translations
    for nbest, ids, sentence_objectives in zip(nbests, beam_ids.numpy(), objectives):
        objective_of = {tuple(model.vocab2.decode(i)): o for i, o in zip(ids, sentence_objectives)}
        ranked = [objective_of[tuple(h.tokens)] for h in nbest]
        assert ranked == pytest.approx(sorted(ranked), abs=1e-4)

"""The bound RNNPB: PB tables, binding, regularisers, recognition and translation both ways."""

import json
import shutil

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt import api
from rnnpb_nmt.config import Config
from rnnpb_nmt.data.dataset import encode_all, read_sentences
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.models.rnnpb.model import BoundRNNPB
from rnnpb_nmt.models.rnnpb.recognition import RecognitionSettings, recognize
from rnnpb_nmt.train import workdir

from rnnpb_nmt.train.step import Trainer

from helpers import (SHARED_DATA, VOCAB, cli_in_process, first_batch, make_model, models, random_corpus, tiny_config,
                     train_args, train_in_process, translator_of, untrained_working_dir)


def trainer_for(model, src, tgt=None):
    """A Trainer of ``model`` whose parallel batches have the shape of ``src``'s (and ``tgt``'s)."""
    trainer = Trainer(model)
    trainer.dataset("parallel", src, tgt)
    return trainer


def test_hard_binding_shares_one_table():
    model = make_model(bind_hard=True)
    assert model.pbs.a is model.pbs.b and len(model.pbs.tables) == 3  # shared + two mono tables
    src = random_corpus(32)
    trainer_for(model, src, random_corpus(32, 1)).train_step(first_batch(src, random_corpus(32, 1), 16))
    assert np.abs(model.pbs.a.numpy()[:16]).sum() > 0


def bound_distance_after_training(strength, steps=15):
    model = make_model(binding_strength=strength, pb_learning_rate=0.05)
    model.pbs.a.assign(tf.random.normal(model.pbs.a.shape, seed=1))
    model.pbs.b.assign(tf.random.normal(model.pbs.b.shape, seed=2))
    src, tgt = random_corpus(32), random_corpus(32, 1)
    trainer = trainer_for(model, src, tgt)
    batch = first_batch(src, tgt)
    before = np.linalg.norm(model.pbs.a.numpy() - model.pbs.b.numpy(), axis=1).mean()
    for _ in range(steps):
        trainer.train_step(batch)
    return before, np.linalg.norm(model.pbs.a.numpy() - model.pbs.b.numpy(), axis=1).mean()


@pytest.mark.slow  # 15 training steps of two models
def test_soft_binding_pulls_bound_pbs_together_and_zero_strength_does_not():
    before, bound = bound_distance_after_training(10.0)
    _, unbound = bound_distance_after_training(0.0)
    assert bound < 0.7 * before
    assert unbound > 0.9 * before


def first_step(**overrides):
    """How far one training step moves the batch's PB rows and each of A's weights."""
    tf.keras.utils.set_random_seed(0)  # Keras's unseeded initialisers draw from Python's random
    model = make_model(**overrides)
    src, tgt = random_corpus(32), random_corpus(32, 1)
    trainer = trainer_for(model, src, tgt)
    weights = [v.numpy() for v in model.lm_a.trainable_variables]
    trainer.train_step(first_batch(src, tgt, 16))
    return (np.abs(model.pbs.a.numpy()[:16]).mean(),
            np.array([np.abs(v.numpy() - w).mean() for v, w in zip(model.lm_a.trainable_variables, weights)]))


@pytest.mark.slow  # trains
def test_double_shared_updates_update_what_a_and_b_share_twice():
    # Adam's first update moves each coordinate by the learning rate; a second one with the same
    # gradient and step count by 1.34 times that (its moments now hold the gradient twice).
    pb, weights = first_step(bind_hard=True)
    pb2, weights2 = first_step(bind_hard=True, double_shared_updates=True)
    assert 2.2 < pb2 / pb < 2.5  # the one PB table of A and B
    np.testing.assert_allclose(weights2, weights, rtol=1e-6)  # A's own weights: one update
    _, shared = first_step(autoencode=True, bind_hard=True)
    _, shared2 = first_step(autoencode=True, bind_hard=True, double_shared_updates=True)
    assert np.all(shared2 > 1.8 * shared)  # under --autoencode A's weights are B's too


def test_lazy_adam_updates_only_the_batch_rows():
    model = make_model(bind_hard=False)
    model.pbs.a.assign(tf.random.normal(model.pbs.a.shape))
    src, tgt = random_corpus(32), random_corpus(32, 1)
    trainer = trainer_for(model, src, tgt)
    before_a, before_b = model.pbs.a.numpy(), model.pbs.b.numpy()
    batch = first_batch([src[i] for i in (3, 7, 9)], [tgt[i] for i in (3, 7, 9)])
    trainer.train_step({**batch, "index": tf.constant([3, 7, 9])})
    for table, before in ((model.pbs.a, before_a), (model.pbs.b, before_b)):
        changed = np.flatnonzero(np.any(table.numpy() != before, axis=1))
        assert changed.tolist() == [3, 7, 9]


def test_pb_reset_zeroes_about_p_reset_of_the_rows():
    model = make_model(num_train=20000, num_PB=4)
    model.pbs.a.assign(tf.ones_like(model.pbs.a))
    fraction = model.pbs.reset(0.3, np.random.default_rng(0))
    zero = np.all(model.pbs.a.numpy() == 0, axis=1)
    assert abs(zero.mean() - 0.3) < 0.02 and abs(fraction - 0.3) < 0.02
    assert np.all(model.pbs.a.numpy()[~zero] == 1)


def test_dropout_and_pb_noise_act_in_training_only():
    model = make_model(dropout=0.5, sigma=1.0)
    rng = Trainer(model).rng
    src = random_corpus(8)
    batch = first_batch(src, src)
    train_a, _, _ = model.sentence_losses(batch, "parallel", rng)
    train_b, _, _ = model.sentence_losses(batch, "parallel", rng)
    assert not np.allclose(train_a.numpy(), train_b.numpy())
    test_a, _, _ = model.sentence_losses(batch, "parallel")
    test_b, _, _ = model.sentence_losses(batch, "parallel")
    np.testing.assert_array_equal(test_a.numpy(), test_b.numpy())
    sentences = [VOCAB.decode(s) for s in src]
    translator = translator_of(model)
    assert translator.translate(sentences, beam_size=3) == translator.translate(sentences, beam_size=3)


def test_no_pb_dropout_reaches_both_language_models():
    # What it changes in a layer: tests/test_recurrent.py; here, that the flag gets there.
    for flag in (False, True):
        model = make_model(dropout=0.5, no_pb_dropout=flag)
        assert [lm.lstm.constant_dropout for lm in (model.lm_a, model.lm_b)] == [not flag] * 2


@pytest.fixture(scope="module")
def trained(trained_rnnpb, demo_data):
    model = workdir.load_model(str(trained_rnnpb), models(), {"max_recog_epochs": 100})
    src = encode_all(model.vocab1, read_sentences(demo_data / "test.en"))
    return model, src


def test_batched_recognition_equals_one_sentence_at_a_time(trained):
    model, src = trained
    fn = tf.function(lambda s: model.recognize(s), input_signature=[tf.TensorSpec([None, None], tf.int32)])
    together = fn(first_batch(src)["src"])
    for i in range(len(src)):
        alone = fn(first_batch([src[i]])["src"])
        assert int(alone["iterations"][0]) == int(together["iterations"][i])
        assert np.max(np.abs(alone["pb"][0].numpy() - together["pb"][i].numpy())) < 1e-4


def test_a_sentence_that_stops_early_keeps_its_pb(trained):
    model, src = trained
    settings = RecognitionSettings(**{**vars(model.recognition), "epsilon": 0.02})
    result = recognize(model.lm_a, first_batch(src)["src"], settings, record=True)
    iterations = result["iterations"].numpy()
    early = int(np.argmin(iterations))
    assert iterations[early] < iterations.max()  # others went on after it stopped
    history = result["history"].numpy()
    assert np.all(history[iterations[early]:, early] == history[iterations[early], early])
    fixed = RecognitionSettings(**{**vars(settings), "stop": "fixed", "max_iterations": int(iterations[early])})
    alone = recognize(model.lm_a, first_batch([src[early]])["src"], fixed)
    np.testing.assert_allclose(alone["pb"][0].numpy(), result["pb"][early].numpy(), atol=1e-4)


def test_inspection_api(trained, demo_data):
    model, _ = trained
    sentences = read_sentences(demo_data / "test.en")[:5]
    result = model.recognize_sentences(sentences)
    assert result["pb"].shape == (5, 16) and len(result["history"]) == 5
    for i, (history, n, loss) in enumerate(zip(result["history"], result["iterations"], result["loss"])):
        assert len(history) == n + 1 and history[-1] == loss and history[-1] < history[0]
        path = result["pb_history"][i]
        assert path.shape == (n + 1, 16) and not path[0].any()  # from the zero PB ...
        np.testing.assert_array_equal(path[-1], result["pb"][i])  # ... to the recognised one
        assert len(result["grad_norm_history"][i]) == n and np.all(result["grad_norm_history"][i] > 0)
    np.testing.assert_array_equal(model.trained_pbs([0, 2]), model.pbs.a.numpy()[[0, 2]])
    reverse = model.recognize_sentences(read_sentences(demo_data / "test.de")[:2], side="b")
    assert reverse["pb"].shape == (2, 16)


def test_stopping_schemes(trained):
    model, src = trained
    batch = first_batch(src)["src"]
    base = vars(model.recognition)
    fixed = recognize(model.lm_a, batch, RecognitionSettings(**{**base, "stop": "fixed", "max_iterations": 7}))
    assert set(fixed["iterations"].numpy()) == {7}
    grad = recognize(model.lm_a, batch, RecognitionSettings(**{**base, "stop": "grad_norm", "grad_threshold": 1e9}))
    assert set(grad["iterations"].numpy()) == {1}
    early = recognize(model.lm_a, batch, model.recognition)
    assert early["iterations"].numpy().max() <= model.recognition.max_iterations
    at_zero = recognize(model.lm_a, batch, RecognitionSettings(**{**base, "stop": "fixed", "max_iterations": 0}))
    assert np.all(early["loss"].numpy() < at_zero["loss"].numpy())


def test_recognition_clips_each_gradient_at_recog_clip(trained):
    model, src = trained
    batch = first_batch(src)["src"]
    base = {**vars(model.recognition), "stop": "fixed", "max_iterations": 20}

    def run(clip):
        return recognize(model.lm_a, batch, RecognitionSettings(**{**base, "clip": clip}), record=True)

    unclipped = run(1e9)
    norms = unclipped["grad_norm_history"].numpy()
    assert norms.max() > 1.5 * norms.min()  # else clipping could not change Adam's path
    never_reached = run(2 * float(norms.max()))
    np.testing.assert_allclose(never_reached["pb"].numpy(), unclipped["pb"].numpy(), atol=1e-6)
    always = run(0.5 * float(norms.min()))
    assert np.abs(always["pb"].numpy() - unclipped["pb"].numpy()).max() > 1e-3
    config = model.config
    assert RecognitionSettings.from_config(config.replace(recog_clip=8.0)).clip == 8.0
    old_run = {k: v for k, v in config.to_flat().items() if k != "recog_clip"}  # from before --recog_clip
    assert RecognitionSettings.from_config(Config.from_saved(old_run, "hparams.json")).clip == \
        config.training.gradient_clip


def test_translation_both_ways(trained_rnnpb, demo_data, capsys, tmp_path):
    """Each direction writes its own test files: the reverse test keeps the forward one's."""
    wd = shutil.copytree(trained_rnnpb, tmp_path / "wd")  # testing writes into it: the shared run stays as trained
    assert cli_in_process(["--do_testing", f"--test_set={demo_data}/test.en", f"--working_dir={wd}"], capsys)[0] == 0
    forward = {name: (wd / name).read_bytes() for name in ("test_trans.txt", "testing_stats.json")}
    assert cli_in_process(["--do_testing", f"--test_set={demo_data}/test.de", "--reverse_translation",
                           f"--working_dir={wd}"], capsys)[0] == 0
    assert {name: (wd / name).read_bytes() for name in forward} == forward
    assert json.loads(forward["testing_stats.json"])["direction"] == "A->B"
    stats = json.loads((wd / "testing_stats.reverse.json").read_text())
    assert stats["direction"] == "B->A" and stats["reference"].endswith("test.en") and "bleu" in stats
    lines = (wd / "test_trans.reverse.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == 30
    de_words = set(workdir.Vocabulary.load(str(wd / "vocab2.txt")).itos[4:])
    en_words = set(workdir.Vocabulary.load(str(wd / "vocab1.txt")).itos[4:])
    produced = {w for line in lines for w in line.split()}
    assert produced <= en_words | {"<unk>"} and not produced & (de_words - en_words)


def test_only_the_bound_model_translates_b_to_a_through_a_view_of_its_own_weights(demo_data, tmp_path):
    """A one-way model refuses B->A in the one line of --reverse_translation, from the Python API too;
    the bound model's reversed view swaps the sides and holds no weights of its own: a change to the
    bound model's is the view's."""
    untrained_working_dir(tmp_path / "encdec", demo_data, model="encdec")
    with pytest.raises(UserError, match="^--reverse_translation: model encdec translates one way only$"):
        api.load(str(tmp_path / "encdec")).translate(["the dog"], reverse=True)
    bound = untrained_working_dir(tmp_path / "bound", demo_data, model="rnnpbnmt")
    backward = translator_of(bound).reversed()
    view = backward.model
    assert (view.direction, view.languages, view.longest_source) == ("B->A", ("de", "en"), bound.config.data.longest2)
    assert [v is w for v, w in zip(view.vocabularies, (bound.vocab2, bound.vocab1))] == [True, True]
    german = read_sentences(str(demo_data / "test.de"))[:3]
    before = [h[0].score for h in backward.translate_nbest(german, 1, beam_size=1)]
    for variable in bound.lm_a.trainable_variables:  # A generates B->A's translations
        variable.assign(variable * 0.5)
    assert [h[0].score for h in backward.translate_nbest(german, 1, beam_size=1)] != pytest.approx(before)


@pytest.mark.long
@pytest.mark.shared_data
def test_autoencoder_regenerates_memorised_sentences_exactly():
    sentences = read_sentences(SHARED_DATA / "autoenc/easy20000/train.en")[:24]
    vocab = Vocabulary.build(sentences)
    src = encode_all(vocab, sentences)
    tf.keras.utils.set_random_seed(0)
    config = tiny_config(model="rnnpbnmt", autoencode=True, num_train=24, num_PB=32, units=64, embedding_size=32,
                         learning_rate=0.01, pb_learning_rate=0.05, batch_size=8, max_recog_epochs=500, beam_size=3)
    trainer = Trainer(BoundRNNPB(config, vocab, vocab))
    for epoch in range(150):
        for batch in trainer.dataset("parallel", src, src, epoch):
            terms = trainer.train_step(batch)
    assert float(terms["loss"]) < 1.0
# Recognition is a local search from the same start for every sentence, and where it lands can
    # turn on rounding: with TensorFlow 2.21's oneDNN kernels one of the 24 ("Tom will go alone .")
    # is recognised as a PB that generates "Tom will go" (with any beam size), on 2.15 none is.
    translations = translator_of(trainer.model).translate(sentences, beam_size=3)
    missed = [s for s, t in zip(sentences, translations) if t != s]
    assert len(missed) <= 1, missed


@pytest.mark.slow
def test_monolingual_batches_train_their_own_pb_rows(demo_data, tmp_path):
    wd = tmp_path / "mono"
    train_in_process(*train_args(demo_data, wd, "--model=rnnpbnmt", "--bind_hard", "--num_PB=8", "--max_epochs=1",
                                 "--max_recog_epochs=5", f"--mono_set1={demo_data}/dev.en",
                                 f"--mono_set2={demo_data}/dev.de", "--p_mono=0.5"))
    model = workdir.load_model(str(wd), models())
    assert model.config.data.num_mono1 == 40 and model.config.data.num_mono2 == 40
    row = json.loads((wd / "training_stats.json").read_text())["epochs"][0]
    # The monolingual batches' perplexities are logged apart from the translation's.
    assert {"mean_perplexity_mono1", "mean_perplexity_mono2"} <= row.keys()
    assert len({row["train_perplexity"], row["mean_perplexity_mono1"], row["mean_perplexity_mono2"]}) == 3
    for table in (model.pbs.mono_a, model.pbs.mono_b):
        assert np.any(np.abs(table.numpy()).sum(axis=1) > 0)

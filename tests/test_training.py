"""The training loop's guards: a diverged loss, damaged statistics or state of an earlier run, a moved run,
a failed write."""

import errno
import json
import os
import re
import shutil
import types

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data import files
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.run_stats import RunStatistics
from rnnpb_nmt.train import loop as training



def test_a_nan_loss_stops_training_with_a_user_error(setup, tmp_path):
    make_trainer, corpus = setup
    trainer = make_trainer()
    weights = trainer.model.output_layer.kernel
    weights.assign(np.full(weights.shape, np.nan, np.float32))
    with pytest.raises(UserError, match="training diverged: loss or gradient is not finite at epoch 1, step 1; "
                                        "the best weights so far are in "):
        training.train(trainer, corpus, str(tmp_path), log=lambda _: None)


def clipped_gradients(trainer, kind, batch, clip):
    """The gradients of the batch-mean loss at the current weights, clipped to global norm ``clip``
    (None: not clipped; dense: the embeddings' rows a batch does not touch get 0)."""
    variables = trainer.model.trainable_variables
    with tf.GradientTape() as tape:
        per_sentence, extra, _ = trainer.model.sentence_losses(batch, kind)
        loss = tf.reduce_sum(per_sentence) / tf.cast(tf.shape(per_sentence)[0], tf.float32) + extra
    grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, variables)]
    return [g.numpy() for g in (grads if clip is None else tf.clip_by_global_norm(grads, clip)[0])]


def test_a_clip_of_1e9_turns_clipping_off(setup):
    """--gradient_clip=1e9 is no clipping (the authors' question-formation training, --recipe sgd;
    issue 94's ablation of clipping under Adam): below that norm the step's clip leaves every
    gradient bit for bit as it is, here where the default clip of 1 would shrink them. (0 is refused:
    the clip is a norm; --recog_clip falls back to --gradient_clip, so 0 as "off" would be two rules.)"""
    make_trainer, corpus = setup
    trainer = make_trainer(gradient_clip=1e9)
    kind, batch = next(trainer.epoch_batches(corpus, 1, np.random.default_rng(0)))
    raw = clipped_gradients(trainer, kind, batch, None)
    assert np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in raw)) > 1
    assert all(np.array_equal(g, r) for g, r in zip(clipped_gradients(trainer, kind, batch, 1e9), raw))
    assert not all(np.array_equal(g, r) for g, r in zip(clipped_gradients(trainer, kind, batch, 1.0), raw))


@pytest.mark.parametrize("clip", [1e9, 0.01])
def test_sgd_moves_every_weight_by_the_learning_rate_times_its_clipped_gradient(setup, clip):
    """--optimizer=sgd is plain SGD (McCoy et al.'s): no momentum, no per-weight scaling."""
    make_trainer, corpus = setup
    trainer = make_trainer(optimizer="sgd", learning_rate=0.5, gradient_clip=clip)  # no dropout: no draws
    kind, batch = next(trainer.epoch_batches(corpus, 1, np.random.default_rng(0)))
    variables = trainer.model.trainable_variables
    expected = [v.numpy() - 0.5 * g for v, g in zip(variables, clipped_gradients(trainer, kind, batch, clip))]
    trainer.train_step(batch, kind)
    for v, e in zip(variables, expected):
        np.testing.assert_allclose(v.numpy(), e, atol=1e-5, err_msg=v.name)
    assert trainer.optimizers[0].get_slot_names() == []


def test_rmsprop_divides_each_gradient_by_the_root_of_its_running_mean_square(setup):
    """--optimizer=rmsprop is Tieleman and Hinton's RMSProp (Grefenstette et al.'s): the mean square
    ms <- 0.9 ms + 0.1 g^2 from 0, each weight moving by lr g / sqrt(ms), no momentum; checked over
    two steps, where momentum would show. (Every weight with a gradient moves by about lr sqrt(10) in
    step 1, however small its gradient: a gradient computed in another order of sums moves the
    smallest ones' steps by a few percent, far less than 1e-5 at this rate.)"""
    make_trainer, corpus = setup
    trainer = make_trainer(optimizer="rmsprop", learning_rate=0.001, gradient_clip=1.0)
    kind, batch = next(trainer.epoch_batches(corpus, 1, np.random.default_rng(0)))
    variables = trainer.model.trainable_variables
    mean_squares = [np.zeros(v.shape, np.float32) for v in variables]
    for _ in range(2):
        grads = clipped_gradients(trainer, kind, batch, 1.0)
        mean_squares = [0.9 * ms + 0.1 * g ** 2 for ms, g in zip(mean_squares, grads)]
        expected = [v.numpy() - 0.001 * g / (np.sqrt(ms) + 1e-7) for v, g, ms in zip(variables, grads, mean_squares)]
        trainer.train_step(batch, kind)
        for v, e in zip(variables, expected):
            np.testing.assert_allclose(v.numpy(), e, atol=1e-5, err_msg=v.name)


def test_adadelta_is_zeilers_update_with_dynets_constants(setup):
    """--optimizer=adadelta is Zeiler's ADADELTA with DyNet's rho 0.95 and epsilon 1e-6 (the trainer
    Aharoni & Goldberg used): E[g^2] <- rho E[g^2] + (1 - rho) g^2; dx = g sqrt(E[dx^2] + eps) /
    sqrt(E[g^2] + eps); E[dx^2] <- rho E[dx^2] + (1 - rho) dx^2; each weight moves by lr dx. Two steps,
    so that the second reads the first's E[dx^2]."""
    make_trainer, corpus = setup
    trainer = make_trainer(optimizer="adadelta", learning_rate=1.0, gradient_clip=1.0)
    kind, batch = next(trainer.epoch_batches(corpus, 1, np.random.default_rng(0)))
    variables = trainer.model.trainable_variables
    grad_squares = [np.zeros(v.shape, np.float64) for v in variables]
    step_squares = [np.zeros(v.shape, np.float64) for v in variables]
    for _ in range(2):
        grads = clipped_gradients(trainer, kind, batch, 1.0)
        grad_squares = [0.95 * a + 0.05 * g.astype(np.float64) ** 2 for a, g in zip(grad_squares, grads)]
        steps = [g * np.sqrt(d + 1e-6) / np.sqrt(a + 1e-6) for g, a, d in zip(grads, grad_squares, step_squares)]
        step_squares = [0.95 * d + 0.05 * s ** 2 for d, s in zip(step_squares, steps)]
        expected = [v.numpy() - s for v, s in zip(variables, steps)]
        trainer.train_step(batch, kind)
        for v, e in zip(variables, expected):
            np.testing.assert_allclose(v.numpy(), e, atol=1e-6, err_msg=v.name)
    assert sorted(trainer.optimizers[0].get_slot_names()) == ["accum_grad", "accum_var"]


@pytest.mark.parametrize("stats, message", [
    ("{not json", "training_stats.json: corrupted"),
    ('{"epochs": []}', "training_stats.json: corrupted (not the statistics of a training run)"),
    (json.dumps({"epochs": [{}], "best_epoch": 1, "best_dev_perplexity": 9.0, "waited": 0, "total_seconds": 1.0,
                 "state_checkpoint": "STATE/ckpt-1"}), "STATE/ckpt-1: cannot resume"),
])
def test_damaged_statistics_or_state_refuse_to_resume(setup, tmp_path, stats, message):
    make_trainer, corpus = setup
    (tmp_path / "training_stats.json").write_text(stats.replace("STATE", str(tmp_path / "state")))
    with pytest.raises(UserError, match=re.escape(message).replace("STATE", ".*state")):
        training.train(make_trainer(), corpus, str(tmp_path), log=lambda _: None)


@pytest.fixture(scope="module")
def first_epochs():
    """The module's cache of ``first_epoch``'s run."""
    return {}


@pytest.fixture
def first_epoch(setup, first_epochs, tmp_path_factory):
    """A run of ``setup``'s trainer stopped after epoch 1, trained once for the module's tests
    (each resumes a copy), then moved: the path it was trained at no longer exists."""
    if "run" not in first_epochs:
        make_trainer, corpus = setup
        trained_at = tmp_path_factory.mktemp("first_epoch") / "trained_here"
        training.train(make_trainer(max_epochs=1), corpus, str(trained_at), log=lambda _: None)
        first_epochs["run"] = trained_at.rename(trained_at.with_name("moved_from_there"))
    return first_epochs["run"]


@pytest.mark.slow  # trains and resumes
def test_a_moved_working_dir_resumes(setup, first_epoch, tmp_path):
    make_trainer, corpus = setup
    shutil.copytree(first_epoch, tmp_path / "moved")
    lines = []
    stats = training.train(make_trainer(max_epochs=2), corpus, str(tmp_path / "moved"), log=lines.append)
    assert lines[0] == f"resuming {tmp_path / 'moved'} after epoch 1" and len(stats["epochs"]) == 2


@pytest.mark.slow  # trains up to 5 epochs
def test_dev_every_measures_some_epochs_and_counts_the_others_as_no_improvement(setup, tmp_path):
    make_trainer, corpus = setup
    lines = []
    stats = training.train(make_trainer(dev_every=2, max_epochs=5, early_stopping_steps=2), corpus, str(tmp_path),
                           log=lines.append)
    measured = [row["epoch"] for row in stats["epochs"] if "dev_perplexity" in row]
    assert measured[:2] == [1, 3] and all(e % 2 == 1 for e in measured)
    assert "epoch 2: train ppl" in lines[1] and "dev ppl not measured" in lines[1]
    assert stats["best_epoch"] in measured
    # Early stopping after 2 epochs without improvement: at the latest two epochs past the best.
    assert len(stats["epochs"]) == min(5, stats["best_epoch"] + 2)
    assert stats["waited"] == len(stats["epochs"]) - stats["best_epoch"]


@pytest.mark.slow  # trains two epochs
def test_the_last_epoch_is_measured_on_dev_whatever_dev_every_says(setup, tmp_path):
    """--dev_every=10 --max_epochs=2 measures epoch 1 by the interval and epoch 2 as the last: best/
    is not epoch 1's in silence because the epochs after it were never weighed."""
    make_trainer, corpus = setup
    lines = []
    stats = training.train(make_trainer(dev_every=10, max_epochs=2), corpus, str(tmp_path), log=lines.append)
    assert [row["epoch"] for row in stats["epochs"] if "dev_perplexity" in row] == [1, 2]
    assert "not measured" not in "\n".join(lines)


@pytest.mark.slow  # trains two epochs
def test_a_failed_statistics_write_keeps_the_last_epoch_resumable(setup, first_epoch, tmp_path, monkeypatch):
    """A full disk injected through the project's own I/O layer: training_stats.json cannot be
    written once epoch 2's state checkpoint is saved (tests/test_failed_writes.py fills a real disk)."""
    make_trainer, corpus = setup
    shutil.copytree(first_epoch, tmp_path, dirs_exist_ok=True)
    saved = (tmp_path / "training_stats.json").read_bytes()

    def full_disk(path, obj):
        raise files.cannot_write(path, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))

    monkeypatch.setattr(training, "write_json", full_disk)
    with pytest.raises(UserError, match=r"training_stats.json: cannot write \(No space left on device\); "
                                        "epoch 2 was not saved: run the same command again"):
        training.train(make_trainer(max_epochs=2), corpus, str(tmp_path), log=lambda _: None)
    monkeypatch.undo()
    assert (tmp_path / "training_stats.json").read_bytes() == saved
    lines = []
    stats = training.train(make_trainer(max_epochs=2), corpus, str(tmp_path), log=lines.append)
    assert lines[0] == f"resuming {tmp_path} after epoch 1" and len(stats["epochs"]) == 2


@pytest.mark.slow  # trains four epochs
def test_a_score_chooses_the_best_epoch_and_a_tie_does_not_improve_on_it(setup, tmp_path, monkeypatch):
    """--early_stopping_metric=score: the epoch of the highest dev score is the best, the first of
    a tie; early stopping counts the epochs since; best/ holds that epoch's weights."""
    make_trainer, corpus = setup
    scripted = iter([0.2, 0.5, 0.5, 0.4, 0.9])
    monkeypatch.setattr(training, "dev_score", lambda translator, task, corpus: next(scripted))
    trainer = make_trainer(early_stopping_metric="score", max_epochs=5, early_stopping_steps=2)
    weights_after = {}
    save_epoch = training.save_epoch

    def save_and_remember(checkpoints, stats, working_dir, improved):
        save_epoch(checkpoints, stats, working_dir, improved)
        weights_after[len(stats["epochs"])] = [v.numpy() for v in trainer.model.trainable_variables]

    monkeypatch.setattr(training, "save_epoch", save_and_remember)
    lines = []
    stats = training.train(trainer, corpus, str(tmp_path), log=lines.append)
    assert [row["dev_score"] for row in stats["epochs"]] == [0.2, 0.5, 0.5, 0.4]  # stopped: 2 without a better
    assert stats["best_epoch"] == 2 and stats["waited"] == 2
    assert stats["best_dev_perplexity"] == stats["epochs"][1]["dev_perplexity"]
    assert "dev score 0.5000" in lines[1] and "(best)" in lines[1] and "(best)" not in lines[2]
    for restored, remembered in zip(trainer.model.trainable_variables, weights_after[2]):
        np.testing.assert_array_equal(restored.numpy(), remembered)


def test_perplexity_improves_downwards_and_a_score_upwards():
    stats = {"best_epoch": 1, "epochs": [{"dev_perplexity": 3.0, "dev_score": 0.5}]}
    assert training.improves({"dev_perplexity": 2.9}, stats, "perplexity")
    assert not training.improves({"dev_perplexity": 3.0}, stats, "perplexity")
    assert training.improves({"dev_score": 0.6}, stats, "score")
    assert not training.improves({"dev_score": 0.5}, stats, "score")
    assert training.improves({"dev_score": 0.0}, {"best_epoch": None, "epochs": []}, "score")
    assert not training.improves({"dev_perplexity": float("nan")}, {"best_epoch": None, "epochs": []}, "perplexity")


def run_with_scripted_scores(make_trainer, corpus, working_dir, scores, monkeypatch, **changes):
    """Train under --early_stopping_metric=score with the dev scores ``scores`` (one per epoch);
    returns the statistics, the log's lines and the learning rate each epoch's steps applied."""
    scripted = iter(scores)
    monkeypatch.setattr(training, "dev_score", lambda translator, task, corpus: next(scripted))
    trainer = make_trainer(early_stopping_metric="score", **changes)
    applied, train_epoch = [], trainer.train_epoch

    def remember_rate(*args):
        applied.append(float(trainer.optimizers[0]._decayed_lr(tf.float32)))
        return train_epoch(*args)

    trainer.train_epoch = remember_rate
    lines = []
    return training.train(trainer, corpus, str(working_dir), log=lines.append), lines, applied


@pytest.mark.slow  # trains seven epochs, then three and four more
def test_learning_rate_decay_multiplies_the_rates_after_each_patience_of_epochs_without_improvement(
        setup, tmp_path, monkeypatch):
    """--learning_rate_decay=0.5 --decay_patience=2: the rate halves after the 2nd epoch without a
    better dev score, and after an improvement, again after the 2nd without one; the epochs' rows
    say the rate each trained at, and a run resumed after a decay trains at the uninterrupted
    run's rates."""
    make_trainer, corpus = setup
    scores = [0.5, 0.4, 0.3, 0.6, 0.2, 0.1, 0.1]
    flags = dict(learning_rate=0.02, learning_rate_decay=0.5, decay_patience=2, early_stopping_steps=9)
    stats, lines, applied = run_with_scripted_scores(make_trainer, corpus, tmp_path / "whole", scores, monkeypatch,
                                                     max_epochs=7, **flags)
    expected = [0.02, 0.02, 0.02, 0.01, 0.01, 0.01, 0.005]
    np.testing.assert_allclose(applied, expected, rtol=1e-6)
    assert [row["learning_rate/weights"] for row in stats["epochs"]] == pytest.approx(expected)
    assert stats.learning_rate_scale == 0.25  # epoch 7 is the 3rd without improvement: no decay after it
    decays = [k for k, line in enumerate(lines) if line == "learning rates x 0.5 from here: no dev improvement for 2 epochs"]
    assert [lines[k - 1].split(":")[0] for k in decays] == ["epoch 3", "epoch 6"]
    assert json.loads((tmp_path / "whole" / "training_stats.json").read_text())["learning_rate_scale"] == 0.25

    _, _, first = run_with_scripted_scores(make_trainer, corpus, tmp_path / "cut", scores[:3], monkeypatch,
                                           max_epochs=3, **flags)
    resumed, lines, rest = run_with_scripted_scores(make_trainer, corpus, tmp_path / "cut", scores[3:], monkeypatch,
                                                    max_epochs=7, **flags)
    assert lines[0] == f"resuming {tmp_path / 'cut'} after epoch 3"
    np.testing.assert_allclose(first + rest, expected, rtol=1e-6)
    assert [row["learning_rate/weights"] for row in resumed["epochs"]] == pytest.approx(expected)
    assert (resumed.learning_rate_scale, resumed.best_epoch, resumed.waited) == (0.25, 4, 3)


@pytest.mark.parametrize("decay, patience, waited, scale, expected", [
    (1.0, 1, 3, 1.0, 1.0),        # no decay: the rates stay whatever the waiting
    (0.5, 2, 0, 0.5, 0.5),        # an improvement
    (0.5, 2, 1, 1.0, 1.0),
    (0.5, 2, 2, 1.0, 0.5),
    (0.5, 2, 3, 0.5, 0.5),
    (0.5, 2, 4, 0.5, 0.25),       # the second patience without improvement
    (0.1, 1, 1, 1.0, 0.1),
])
def test_the_rates_decay_on_each_multiple_of_the_patience(decay, patience, waited, scale, expected):
    stats = RunStatistics(waited=waited, learning_rate_scale=scale)
    training_config = types.SimpleNamespace(learning_rate_decay=decay, decay_patience=patience)
    assert training.decayed(stats, training_config).learning_rate_scale == pytest.approx(expected)


def test_the_decay_so_far_is_kept_in_the_statistics_and_earlier_files_have_none():
    assert "learning_rate_scale" not in RunStatistics().to_json()  # the format of earlier versions
    after_decays = RunStatistics(learning_rate_scale=0.25)
    assert RunStatistics.from_json(after_decays.to_json()) == after_decays
    for scale in (0, 1.5, "0.5"):
        with pytest.raises(ValueError):
            RunStatistics.from_json({**after_decays.to_json(), "learning_rate_scale": scale})

"""--keep_checkpoints keeps the last N epochs' weights and the N best; --average_checkpoints translates
with the element-wise mean of N of them (GitHub issue 43, item 5)."""

import functools
import json
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt import config as config_lib
from rnnpb_nmt.cli import build_parser
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import checkpoints as checkpoints_module
from rnnpb_nmt.train import loop as training
from rnnpb_nmt.train import workdir
from rnnpb_nmt.train.checkpoints import RunCheckpoints
from rnnpb_nmt.run_stats import EpochRecord, RunStatistics

from helpers import ROOT, cli_in_process, models, train_args, train_in_process, untrained_working_dir


def rows(*measures, key="dev_perplexity"):
    """training_stats.json rows of epochs 1, 2, ... with these dev measures (None: not measured)."""
    return [{"epoch": e, "train_perplexity": 9.0, "seconds": 1.0, **({key: m} if m is not None else {})}
            for e, m in enumerate(measures, 1)]


def test_the_kept_epochs_are_the_last_n_and_the_n_best_and_a_dropped_one_never_returns():
    # --dev_every=2: epochs 2, 4, 6, 8 unmeasured; 3 and 7 tie, the earlier ranks first (as best/ is chosen).
    records = rows(10.0, None, 6.0, None, 7.0, None, 6.0, None)
    assert training.best_epochs(records, 3, "perplexity") == [3, 7, 5]
    assert training.kept_epochs(records, 1, "perplexity") == [3, 8]
    assert training.kept_epochs(records, 2, "perplexity") == [3, 7, 8]
    assert training.kept_epochs(records, 3, "perplexity") == [3, 5, 6, 7, 8]
    scores = rows(0.2, 0.9, 0.5, 0.9, 0.1, key="dev_score")  # a score: higher is better
    assert training.best_epochs(scores, 2, "score") == [2, 4]
    assert training.kept_epochs(scores, 1, "score") == [2, 5]
    assert training.last_epochs(scores, 0) == [] and training.last_epochs(scores, 9) == [1, 2, 3, 4, 5]
    # Pruning deletes what drops out: an epoch kept after epoch t+1 was kept after epoch t, or is t+1.
    for keep in (1, 2, 3):
        for t in range(1, len(records)):
            before, after = (set(training.kept_epochs(records[:n], keep, "perplexity")) for n in (t, t + 1))
            assert after <= before | {t + 1}, (keep, t)


def stand_in():
    """A model of a trainable float variable, a non-trainable one and an integer one."""
    module = tf.Module()
    module.w = tf.Variable(tf.zeros([3, 4]))
    module.frozen = tf.Variable(tf.zeros([2]), trainable=False)
    module.count = tf.Variable(0, dtype=tf.int64)
    return module


def set_all(module, value):
    for variable in (module.w, module.frozen, module.count):
        variable.assign(tf.cast(tf.fill(variable.shape, value), variable.dtype))


def epoch_files(working_dir):
    return sorted(p.name for p in (working_dir / "epochs").iterdir())


def files_of(*epochs):
    return [f"epoch-{e}.{part}" for e in epochs for part in ("data-00000-of-00001", "index")]


def test_a_failed_epoch_save_is_one_line_keeps_the_last_epoch_and_its_leftovers_are_pruned(tmp_path):
    """A directory in the way of epoch 4's index: its save fails half done (files of epoch 4 left)."""
    model = stand_in()
    keep = functools.partial(training.kept_epochs, keep=1, metric="perplexity")
    checkpoints, stats = RunCheckpoints(str(tmp_path), model, keep=keep), RunStatistics()

    def finish(row):
        nonlocal stats
        improved = training.improves(row, stats, "perplexity")
        stats = stats.after_epoch(EpochRecord.from_json(row), improved)
        training.save_epoch(checkpoints, stats, str(tmp_path), improved)

    records = rows(5.0, 3.0, 4.0, 6.0, 7.0)
    for row in records[:3]:
        finish(row)
    assert epoch_files(tmp_path) == files_of(2, 3)  # 2 the best, 3 the last
    saved = (tmp_path / training.STATS).read_bytes()
    (tmp_path / "epochs" / "epoch-4.index").mkdir()
    with pytest.raises(UserError, match=rf"^{re.escape(str(tmp_path))}/epochs/epoch-4: cannot write \(Is a directory\); "
                                        "epoch 4 was not saved: run the same command again, once the file can be "
                                        "written, to resume after epoch 3$"):
        finish(records[3])
    assert (tmp_path / training.STATS).read_bytes() == saved
    assert set(files_of(2, 3)) < set(epoch_files(tmp_path))  # the kept ones intact, leftovers beside
    (tmp_path / "epochs" / "epoch-4.index").rmdir()
    stats = training.load_stats(str(tmp_path))  # resumed after epoch 3
    for row in records[3:]:
        finish(row)
    assert epoch_files(tmp_path) == files_of(2, 5)


def test_the_mean_is_of_the_float_trainable_variables_and_the_others_are_best_s(tmp_path):
    model = stand_in()
    checkpoints = RunCheckpoints(str(tmp_path), model)
    set_all(model, 7)
    checkpoints.save_best(2)
    for epoch, value in ((1, 1), (2, 7), (3, 2)):
        set_all(model, value)
        checkpoints.save_epoch(epoch)
    set_all(model, 0)
    assert checkpoints.restore_average(lambda: [1, 3]) == [1, 3]
    np.testing.assert_array_equal(model.w.numpy(), np.full([3, 4], 1.5, np.float32))
    np.testing.assert_array_equal(model.frozen.numpy(), [7, 7])
    assert model.count.numpy() == 7


def test_a_read_that_fails_is_tried_again_with_the_epochs_chosen_then(tmp_path):
    """A run being trained deletes the epochs that drop out of those it keeps, maybe one being read."""
    model = stand_in()
    checkpoints = RunCheckpoints(str(tmp_path), model)
    checkpoints.save_best(1)
    for epoch in (2, 3):
        set_all(model, epoch)
        checkpoints.save_epoch(epoch)
    choices = iter([[1, 2], [2, 3]])  # epoch 1 deleted meanwhile
    assert checkpoints.restore_average(lambda: next(choices)) == [2, 3]
    np.testing.assert_array_equal(model.w.numpy(), np.full([3, 4], 2.5, np.float32))
    with pytest.raises(UserError, match=r"epochs/epoch-1: cannot restore weights to average"):
        checkpoints.restore_average(lambda: [1, 2])  # the same choice failing twice: damaged


@pytest.fixture
def kept_run(demo_data, tmp_path):
    """A working directory of a tiny seq-to-seq trained with --keep_checkpoints=2 (as if: its weights
    random per epoch, its statistics written here): epochs 1-4 finished, --dev_every=2 measured epochs
    1 (the best) and 3, so epochs/ keeps 3 and 4 as the last and 1 and 3 as the best. Returns it and
    each epoch's weights."""
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", keep_checkpoints=2, dev_every=2)
    checkpoints, rng, weights = RunCheckpoints(str(tmp_path), model), np.random.default_rng(0), {}
    for epoch in (1, 2, 3, 4):
        for variable in model.trainable_variables:
            variable.assign(rng.normal(size=variable.shape).astype(np.float32))
        checkpoints.save_epoch(epoch)
        weights[epoch] = [v.numpy() for v in model.trainable_variables]
    for name in (tmp_path / "epochs").glob("epoch-2.*"):  # dropped out
        name.unlink()
    stats = {"epochs": rows(5.0, None, 6.0, None), "best_epoch": 1, "best_dev_perplexity": 5.0, "waited": 3,
             "total_seconds": 4.0}
    (tmp_path / training.STATS).write_text(json.dumps(stats))
    return tmp_path, weights


def trainable(model):
    return [v.numpy() for v in model.trainable_variables]


def test_averaging_one_checkpoint_is_loading_it_and_two_their_mean(kept_run, capsys):
    path, weights = kept_run
    one = workdir.load_model(str(path), models(), {"average_checkpoints": 1})
    loaded = workdir.load_model(str(path), models())
    checkpoints_module.read(tf.train.Checkpoint(model=loaded), str(path / "epochs" / "epoch-4"), "load")
    assert one.averaged_epochs == (4,) and loaded.averaged_epochs == ()
    for got, expected, saved in zip(trainable(one), trainable(loaded), weights[4]):
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got, saved)
    two = workdir.load_model(str(path), models(), {"average_checkpoints": 2})
    assert two.averaged_epochs == (3, 4)
    for got, a, b in zip(trainable(two), weights[3], weights[4]):
        np.testing.assert_allclose(got, (a.astype(np.float64) + b) / 2, rtol=1e-6)
        assert not np.array_equal(got, a) and not np.array_equal(got, b)
    assert f"{path}: the mean of the weights of epochs 3, 4" in capsys.readouterr().err.splitlines()


def test_the_best_are_the_measured_epochs_of_the_best_dev_measure(kept_run):
    path, weights = kept_run
    best = workdir.load_model(str(path), models(), {"average_checkpoints": 1, "average_of": "best"})
    assert best.averaged_epochs == (1,)
    for got, saved in zip(trainable(best), weights[1]):
        np.testing.assert_array_equal(got, saved)
    two = workdir.load_model(str(path), models(), {"average_checkpoints": 2, "average_of": "best"})
    assert two.averaged_epochs == (1, 3)
    for got, a, b in zip(trainable(two), weights[1], weights[3]):
        np.testing.assert_allclose(got, (a.astype(np.float64) + b) / 2, rtol=1e-6)


@pytest.mark.parametrize("measured, overrides, message", [
    (2, {"average_checkpoints": 3}, "--average_checkpoints=3: {}/epochs holds the last 2 epochs "
                                    "(train with --keep_checkpoints=3)"),
    (1, {"average_checkpoints": 2, "average_of": "best"}, "--average_checkpoints=2 --average_of=best: {}/epochs "
                                                          "holds the 1 best epoch (the run has 1 dev-measured epoch)"),
    (2, {"average_of": "best"}, "--average_of=best: only with --average_checkpoints=N (N > 0); it would be ignored"),
])
def test_too_many_epochs_to_average_is_a_one_line_error(kept_run, measured, overrides, message):
    """``measured``: how many of the run's epochs (1 and 3) measured the dev set; with 1, epoch 3 only."""
    path, _ = kept_run
    if measured == 1:
        stats = json.loads((path / training.STATS).read_text())
        del stats["epochs"][0]["dev_perplexity"]
        (path / training.STATS).write_text(json.dumps(stats))
    with pytest.raises(UserError, match=f"^{re.escape(message.format(path))}$"):
        workdir.load_model(str(path), models(), overrides)


def test_a_kept_epoch_that_cannot_be_read_is_a_one_line_error(kept_run):
    path, _ = kept_run
    for name in (path / "epochs").glob("epoch-3.*"):
        name.unlink()
    with pytest.raises(UserError, match=rf"^{re.escape(str(path))}/epochs/epoch-3: cannot restore weights to average "
                                        r"\([^\n]*\)$"):
        workdir.load_model(str(path), models(), {"average_checkpoints": 2})


def test_out_of_range_values_and_unknown_choices_are_refused(capsys):
    for flag in ("keep_checkpoints", "average_checkpoints"):
        with pytest.raises(UserError, match=rf"^--{flag}=-1: must be >= 0 and <= 1e\+06$"):
            config_lib.check_ranges({flag: -1})
    with pytest.raises(SystemExit) as stop:
        build_parser(["encdec"]).parse_args(["--do_testing", "--average_of=first"])
    assert stop.value.code == 2 and "invalid choice: 'first'" in capsys.readouterr().err


def test_an_old_working_dir_loads_and_cannot_average(tmp_path):
    """Trained before --keep_checkpoints existed: it kept no epochs (``legacy=0``)."""
    wd = tmp_path / "old"
    shutil.copytree(ROOT / "tests" / "fixtures" / "workdir_encdec_v1", wd)
    assert workdir.load_config(str(wd), models()).training.keep_checkpoints == 0
    assert workdir.load_model(str(wd), models()).averaged_epochs == ()
    with pytest.raises(UserError, match=rf"^--average_checkpoints=2: {re.escape(str(wd))} was trained without --keep_checkpoints "
                                        r"\(no epochs/ to average; train with --keep_checkpoints=2\)$"):
        workdir.load_model(str(wd), models(), {"average_checkpoints": 2})


def train_scripted(make_trainer, corpus, path, monkeypatch, scores, **changes):
    """Train (or resume) into ``path`` with --keep_checkpoints=1 and the dev scores ``scores`` in turn;
    the model initialised from the seed, as ``rnnpb_nmt.train.resume`` does."""
    scripted = iter(scores)
    monkeypatch.setattr(training, "dev_score", lambda translator, task, corpus: next(scripted))
    tf.keras.utils.set_random_seed(7)
    trainer = make_trainer(keep_checkpoints=1, early_stopping_metric="score", batch_size=64, **changes)
    return training.train(trainer, corpus, str(path), log=lambda _: None)


def kept_weights(path):
    reader = {name: tf.train.load_checkpoint(str(path / "epochs" / name)) for name in ("epoch-2", "epoch-4")}
    return {(name, key): r.get_tensor(key) for name, r in reader.items() for key in r.get_variable_to_shape_map()
            if key.startswith("model/")}


@pytest.mark.slow  # trains eight epochs
def test_a_resumed_run_keeps_the_epochs_of_the_uninterrupted_one(setup, tmp_path, monkeypatch):  # noqa: F811
    """Stopped after epoch 3, with what a save of epoch 4 killed half done leaves, then resumed."""
    make_trainer, corpus = setup
    scores = [0.2, 0.9, 0.5, 0.4]  # epoch 2 the best: epochs/ keeps it and the last
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    train_scripted(make_trainer, corpus, whole, monkeypatch, scores, max_epochs=4)
    train_scripted(make_trainer, corpus, parts, monkeypatch, scores[:3], max_epochs=3)
    assert epoch_files(parts) == ["epoch-2.data-00000-of-00001", "epoch-2.index",
                                  "epoch-3.data-00000-of-00001", "epoch-3.index"]
    (parts / "epochs" / "epoch-4_temp").mkdir()
    shutil.copy(parts / "epochs" / "epoch-3.index", parts / "epochs" / "epoch-4_temp" / "part-00000-of-00001.index")
    train_scripted(make_trainer, corpus, parts, monkeypatch, scores[3:], max_epochs=4)
    assert epoch_files(parts) == epoch_files(whole) == ["epoch-2.data-00000-of-00001", "epoch-2.index",
                                                        "epoch-4.data-00000-of-00001", "epoch-4.index"]
    expected, got = kept_weights(whole), kept_weights(parts)
    assert expected.keys() == got.keys() and expected
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, atol=1e-6, err_msg=str(key))


@pytest.mark.slow  # trains through the command line's entry point
def test_the_flags_keep_average_and_refuse_through_the_command_line(demo_data, tmp_path, capsys, monkeypatch):
    wd = tmp_path / "wd"
    train_in_process(*train_args(demo_data, wd, "--model=encdec", "--seed=3", "--max_epochs=3", "--keep_checkpoints=2"))
    capsys.readouterr()  # the training's log: the query's output is what is read below
    assert json.loads((wd / "hparams.json").read_text())["keep_checkpoints"] == 2
    assert {p.name.split(".")[0] for p in (wd / "epochs").iterdir()} >= {"epoch-2", "epoch-3"}
    status, answer, err = cli_in_process(["--query=-", f"--working_dir={wd}", "--average_checkpoints=2"], capsys,
                                         stdin=b"the dog sees a cat .\n", monkeypatch=monkeypatch)
    assert status == 0 and answer.count("\n") == 1
    assert err.splitlines()[-1] == f"{wd}: the mean of the weights of epochs 2, 3"
    status, _, err = cli_in_process(["--query=a dog", f"--working_dir={wd}", "--average_checkpoints=3"], capsys)
    assert status == 1 and err == (f"error: --average_checkpoints=3: {wd}/epochs holds the "
                                   "last 2 epochs (train with --keep_checkpoints=3)\n")

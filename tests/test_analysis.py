"""TensorBoard summaries, progress bars and ``--analyze`` (thesis figures and PB diagnostics)."""

import glob
import json
import shutil
import sys

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt import progress
from rnnpb_nmt.data.dataset import read_parallel
from rnnpb_nmt.infer import analysis, plots
from rnnpb_nmt.models.rnnpb import analysis as rnnpb_analysis
from rnnpb_nmt.train import workdir

from rnnpb_nmt.tasks.translation.task import TranslationTask
from rnnpb_nmt.train.step import Trainer

from helpers import cli_in_process, first_batch, make_model, models, random_corpus, translator_of


def event_scalars(logdir):
    """{tag: {step: value}} of every scalar in the event files below ``logdir``."""
    scalars = {}
    for path in glob.glob(f"{logdir}/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                scalars.setdefault(value.tag, {})[event.step] = float(tf.make_ndarray(value.tensor))
    return scalars


def test_tensorboard_holds_the_listed_scalars_of_every_epoch(trained_rnnpb):
    scalars = event_scalars(trained_rnnpb / "logs")
    stats = json.loads((trained_rnnpb / "training_stats.json").read_text())
    expected = {"perplexity/train": "train_perplexity", "perplexity/dev": "dev_perplexity",
                "train/prediction_a": "mean_prediction_a", "train/prediction_b": "mean_prediction_b",
                "train/binding": "mean_binding", "train/grad_norm_weights": "mean_grad_norm_weights",
                "train/grad_norm_pb": "mean_grad_norm_pb", "learning_rate/weights": "learning_rate/weights",
                "learning_rate/pb": "learning_rate/pb", "pb/mean_norm_a": "pb/mean_norm_a",
                "pb/mean_bound_distance": "pb/mean_bound_distance", "pb/binding_ratio": "pb/binding_ratio"}
    for tag, key in expected.items():
        assert set(scalars[tag]) == {1, 2}, tag
        for row in stats["epochs"]:
            assert scalars[tag][row["epoch"]] == pytest.approx(row[key], rel=1e-6), tag
    assert scalars["learning_rate/pb"][1] == pytest.approx(0.01)
    assert 0 < scalars["pb/binding_ratio"][2] < 1.5
    assert set(scalars["monitor/dev_bleu"]) == {2}  # --monitor_every=2: the second epoch only
    assert 0 <= scalars["monitor/dev_bleu"][2] <= 100


def test_progress_bar_only_on_a_terminal(capsys, monkeypatch):
    def run():
        with progress.bar("epoch 2", 3) as bar:
            for step in range(1, 4):
                bar.update(step, {"mean loss": 1.5})
        return capsys.readouterr().out

    assert run() == ""  # pytest's captured stdout is not a terminal
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    shown = run()
    assert shown.endswith("\n") and shown.count("\n") == 1
    assert shown.rstrip().rsplit("\r", 1)[-1].startswith("epoch 2: 3/3 [====================] 0:00  mean loss 1.5")


@pytest.fixture
def clock(monkeypatch):
    """The progress bars' clock, moved by hand: [seconds]."""
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def test_progress_bar_shows_the_total_the_time_left_and_its_values(clock):
    bar = progress.bar("epoch 3", 10, estimated=True, enabled=False)
    bar.update(1, {"mean loss": 40.0})  # the first step (tracing) sets no pace
    assert bar.line(clock[0]) == "epoch 3: 1/~10 [==>                 ] 0:00  mean loss 40"
    clock[0] += 30  # 10 s a step since the first: 6 steps left
    bar.update(4, {"mean loss": 30.25})
    assert bar.line(clock[0]) == "epoch 3: 4/~10 [========>           ] 0:30, ETA 1:00  mean loss 30.25"
    bar.update(12)  # past the estimate: a count
    assert bar.line(clock[0]) == "epoch 3: 12 steps, 0:30  mean loss 30.25"
    assert bar.line(clock[0], done=True) == "epoch 3: 12/12 [====================] 0:30  mean loss 30.25"
    unknown = progress.bar("epoch 1", enabled=False)
    clock[0] += 3600
    unknown.update(5)
    assert unknown.line(clock[0]) == "epoch 1: 5 steps, 1:00:00"


def test_a_stopped_loop_ends_its_progress_line(capsys, monkeypatch):
    """Ctrl-C inside a bar: "interrupted" (printed after it) starts a line of its own."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with pytest.raises(KeyboardInterrupt), progress.bar("dev perplexity", 4) as bar:
        bar.update(1)
        raise KeyboardInterrupt
    shown = capsys.readouterr().out
    assert shown.startswith("\rdev perplexity: 1/4 [=====>") and shown.endswith("\n")
    assert "4/4" not in shown  # not drawn as finished


def load_checkpoint_tables(working_dir):
    """A's and B's PB tables as saved in ``best/``, read without building a model."""
    reader = tf.train.load_checkpoint(str(working_dir / "best"))
    names = reader.get_variable_to_shape_map()
    a, = [n for n in names if "pbs/a/" in n]
    b, = [n for n in names if "pbs/b/" in n]
    return reader.get_tensor(a), reader.get_tensor(b)


@pytest.fixture(scope="module")
def analysed_run(trained_rnnpb, tmp_path_factory):
    """A copy of the shared bound run, for --analyze to write its analysis/ into."""
    return shutil.copytree(trained_rnnpb, tmp_path_factory.mktemp("analysed") / "wd")


@pytest.fixture(scope="module")
def analysed(analysed_run, monkeypatch_module):
    """Runs --analyze in process, recording each saved figure's title and axis labels."""
    figures = {}
    save = plots.save

    def recording_save(fig, out_dir, name):
        figures[name] = (fig.get_suptitle(), [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes])
        return save(fig, out_dir, name)

    monkeypatch_module.setattr(plots, "save", recording_save)
    model = workdir.load_model(str(analysed_run), models())
    return analysis.analyze(translator_of(model), TranslationTask(), str(analysed_run), log=lambda *_: None), figures


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_analyze_writes_every_figure_with_titles_and_labels(analysed_run, analysed):
    summary, figures = analysed
    out = analysed_run / "analysis"
    assert sorted(summary["figures"].values()) == sorted(figures) == [
        "fig5_1_trained_vs_recognised.png", "fig5_2_perplexity.png", "fig5_3_bound_pairs.png",
        "fig5_4_recognition_paths.png"]
    for name, (title, axes) in figures.items():
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (out / name).stat().st_size > 10_000
        assert title and axes[-1][0] and all(y for _, y in axes), name
    written = json.loads((out / "summary.json").read_text())
    assert written["translations"] == summary["translations"] and len(written["translations"]) == 10
    md = (out / "summary.md").read_text()
    assert "| source | reference | translation |" in md and "fig5_3_bound_pairs.png" in md


def test_analyze_binding_figures_are_recomputed_from_the_saved_tables(trained_rnnpb, analysed):
    summary, _ = analysed
    a, b = (t.astype(np.float64) for t in load_checkpoint_tables(trained_rnnpb))
    assert len(a) == 400  # the demo corpus: every pair is in the sample
    bound = np.linalg.norm(a - b, axis=1).mean()
    pairwise = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)
    random = pairwise[~np.eye(len(a), dtype=bool)].mean()
    assert summary["pb_mean_bound_distance"] == pytest.approx(bound, rel=1e-6)
    assert summary["pb_mean_random_distance"] == pytest.approx(random, rel=1e-6)
    assert summary["pb_binding_ratio"] == pytest.approx(bound / random, rel=1e-6)
    assert summary["trained_recognised_sentences"] == 100 and summary["trained_recognised_mean_distance"] > 0


def test_analysis_dir_takes_the_analysis_elsewhere_and_leaves_the_working_dirs_alone(trained_rnnpb, demo_data, tmp_path,
                                                                                    capsys):
    wd = shutil.copytree(trained_rnnpb, tmp_path / "wd")
    before = sorted(p.relative_to(wd) for p in wd.rglob("*"))
    status, out, err = cli_in_process(["--analyze", f"--working_dir={wd}", f"--analysis_dir={tmp_path}/dev",
                                       f"--test_set={demo_data}/dev.en", f"--test_ref={demo_data}/dev.de"], capsys)
    assert status == 0, err
    summary = json.loads((tmp_path / "dev" / "summary.json").read_text())
    assert summary["test_set"] == f"{demo_data}/dev.en" and 0 <= summary["retrieval_p_at_1_source_to_target"] <= 1
    assert sorted(p.relative_to(wd) for p in wd.rglob("*")) == before


@pytest.mark.slow  # trains a bound model
def test_hard_binding_has_bound_distance_and_ratio_zero(tmp_path, demo_data):
    model = make_model(bind_hard=True, num_train=32)
    src, tgt = random_corpus(32), random_corpus(32, 1)
    trainer = Trainer(model)
    trainer.dataset("parallel", src, tgt)
    for size in (16, 32):
        trainer.train_step(first_batch(src, tgt, size))
    pairs = list(zip(*read_parallel(str(demo_data / "test.en"), str(demo_data / "test.de"))))
    train_pairs = [(model.vocab1.decode(s), model.vocab2.decode(t)) for s, t in zip(src, tgt)]
    result = rnnpb_analysis.analyze(model, train_pairs, pairs, str(tmp_path))
    assert result["summary"]["pb_mean_bound_distance"] == 0 and result["summary"]["pb_binding_ratio"] == 0
    assert result["summary"]["pb_mean_random_distance"] > 0
    assert (tmp_path / "fig5_3_bound_pairs.png").is_file()


def test_seq2seq_analysis_has_the_generic_figures_only(trained_encdec, capsys, tmp_path):
    wd = shutil.copytree(trained_encdec, tmp_path / "wd")  # --analyze writes into it: the shared run stays as trained
    assert cli_in_process(["--analyze", f"--working_dir={wd}"], capsys)[0] == 0
    summary = json.loads((wd / "analysis" / "summary.json").read_text())
    assert list(summary["figures"].values()) == ["fig5_2_perplexity.png"] and len(summary["translations"]) == 10

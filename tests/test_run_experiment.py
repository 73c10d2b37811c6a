"""run_scripts/run_experiment.py: what a trained and tested working directory's record says."""

import json
import os
import subprocess
import sys

import pytest

import run_experiment

ROW = {"name": "r", "folder": "easy/easy20000", "flags": ["--model=encdec"], "thesis": None}


def record_of(tmp_path, epochs, best_epoch):
    stats = {"epochs": epochs, "best_epoch": best_epoch, "best_dev_perplexity": 9.0, "total_seconds": 12.3}
    (tmp_path / "training_stats.json").write_text(json.dumps(stats))
    return run_experiment.summarize(ROW, str(tmp_path), ["train"], {"forward": {"bleu": 30.0}})


def test_a_record_names_the_dev_score_of_the_epoch_the_score_chose_and_none_when_perplexity_chose(tmp_path):
    by_score = [{"epoch": 1, "dev_perplexity": 9.0, "dev_score": 21.0}, {"epoch": 2, "dev_perplexity": 10.0,
                                                                          "dev_score": 25.12346}]
    record = record_of(tmp_path, by_score, best_epoch=2)
    assert (record["best_epoch"], record["best_dev_score"], record["bleu"], record["epochs"]) == (2, 25.1235, 30.0, 2)
    assert "best_dev_score" not in record_of(tmp_path, [{"epoch": 1, "dev_perplexity": 9.0}], best_epoch=1)


BOUND_ROW = {**ROW, "name": "bound", "target": "de", "test_flags": [], "analyze": True}


def test_an_analysed_row_is_analysed_on_the_test_set_and_on_the_dev_set_with_its_reference_apart(tmp_path):
    (test, test_command), (dev, dev_command) = run_experiment.commands(BOUND_ROW, "/d", str(tmp_path))[2]
    assert (test, dev) == ("test", "dev")
    assert test_command[-2:] == [f"--analysis_dir={tmp_path}/analysis", "--test_set=/d/easy/easy20000/test.en"]
    assert dev_command[-3:] == [f"--analysis_dir={tmp_path}/analysis_dev", "--test_set=/d/easy/easy20000/dev.en",
                                "--test_ref=/d/easy/easy20000/dev.de"]


def test_dev_analysis_adds_the_dev_figures_to_a_recorded_row_and_keeps_the_rest(tmp_path, monkeypatch):
    results = tmp_path / "results"
    results.mkdir()
    recorded = [{"name": "bound", "bleu": 30.0, "retrieval_p_at_1_source_to_target": 0.8, "date": "2026-11-27"},
                {"name": "other", "bleu": 1.0}]
    (results / "x.json").write_text(json.dumps(recorded))
    monkeypatch.setattr(run_experiment, "HERE", str(tmp_path))
    wd = tmp_path / "wd"
    wd.mkdir()

    def fake_analysis(command, **_):  # what nmt.py --analyze writes into --analysis_dir
        out = next(c.split("=", 1)[1] for c in command if c.startswith("--analysis_dir="))
        os.makedirs(out)
        with open(os.path.join(out, "summary.json"), "w") as f:
            json.dump({"retrieval_p_at_1_source_to_target": 0.912345, "epochs": 3}, f)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(run_experiment.subprocess, "run", fake_analysis)
    row = run_experiment.add_dev_analysis("x", BOUND_ROW, "/d", str(wd), log=lambda _: None)
    run_experiment.record("x", row)
    bound, other = json.loads((results / "x.json").read_text())  # where it stood
    assert other == recorded[1] and not (wd / "analysis").exists()
    assert {k: bound[k] for k in recorded[0]} == recorded[0]
    assert bound["dev_retrieval_p_at_1_source_to_target"] == 0.9123 and "--test_ref" in bound["dev_analyze_command"]
    (results / "x.json").write_text("[]")
    with pytest.raises(SystemExit, match="--dev_analysis: bound is not a recorded row"):
        run_experiment.add_dev_analysis("x", BOUND_ROW, "/d", str(wd), log=lambda _: None)


def test_a_failing_step_ends_the_script_in_one_line_naming_the_row_and_the_logs_last_line(tmp_path):
    """A row whose training nmt.py refuses (as the unbound variant once did) stops with nmt.py's own
    one-line error and where its log is, and the log keeps what came before."""
    log = tmp_path / "train_log.txt"
    log.write_text("an earlier run's output\n")
    failing = [sys.executable, "-c", "print('loading'); print('error: --x=1: only for --model=y'); raise SystemExit(2)"]
    with open(log, "a") as out, pytest.raises(SystemExit) as stop:
        run_experiment.run_logged(failing, out, "row_a", "training")
    assert str(stop.value) == f"run_experiment.py: row_a: training failed: error: --x=1: only for --model=y (the log: {log})"
    assert log.read_text().startswith("an earlier run's output\nloading\n")
    with open(log, "a") as out:
        run_experiment.run_logged([sys.executable, "-c", "print('fine')"], out, "row_a", "training")


def test_a_test_s_bleu_by_source_length_is_recorded_from_its_testing_statistics(tmp_path):
    row = {**ROW, "raw": True, "target": "de"}
    stats = {"bleu": 50.123, "bleu_detokenized": 49.5, "testing_time": 3.2,
             "bleu_by_source_length": {"1-5": {"bleu": 60.004, "sentences": 61}, "9+": {"bleu": 41.456, "sentences": 20}}}
    for reverse in (False, True):
        translations, statistics = run_experiment.prediction.outputs(reverse)
        (tmp_path / statistics).write_text(json.dumps(stats))
        (tmp_path / translations).write_text("")
        found = run_experiment.test_result(row, "/d", str(tmp_path), ["test"], reverse, row["folder"])
        assert found["bleu_by_length"] == {"1-5": {"sentences": 61, "bleu": 60.0}, "9+": {"sentences": 20, "bleu": 41.46}}
    del stats["bleu_by_source_length"]  # a test written before the figure: none recorded
    (tmp_path / "testing_stats.json").write_text(json.dumps(stats))
    assert "bleu_by_length" not in run_experiment.test_result(row, "/d", str(tmp_path), ["t"], False, row["folder"])


def test_refine_sweep_at_the_models_own_steps_gives_training_s_dev_bleu_and_each_steps_figure_each_way(
        demo_data, tmp_path, monkeypatch):
    """A real tiny amortised bound model, trained with the dev score: the sweep scores as training's
    dev score does (its best epoch's figure, at the K it trained with), so the other K's are comparable
    with it; both ways; other rows are refused."""
    from helpers import train_args, train_in_process
    wd = tmp_path / "wd"
    train_in_process(*train_args(demo_data, wd, "--model=rnnpbnmt", "--num_PB=128", "--proposal_layers=2", "--refine_steps=1",
                                 "--refine_gradient=stop", "--sigma=0.1", "--amortize=encoder", "--both_directions",
                                 "--proposal_output=state", "--pb_input=state", "--learning_rate=0.01",
                                 "--max_epochs=4", "--early_stopping_metric=score", "--beam_size=2"))
    stats = json.loads((wd / "training_stats.json").read_text())
    trained = max(e["dev_score"] for e in stats["epochs"])
    results = tmp_path / "results"
    results.mkdir()
    (results / "x.json").write_text(json.dumps([{"name": "bound", "bleu": 30.0}]))
    monkeypatch.setattr(run_experiment, "HERE", str(tmp_path))
    row = {**BOUND_ROW, "folder": demo_data.name, "source": "en"}
    found = run_experiment.add_refine_sweep("x", row, str(demo_data.parent), str(wd), [1, 0])
    assert found["bleu"] == 30.0 and sorted(found["refine_sweep"]) == ["0", "1"]
    assert trained > 0 and found["refine_sweep"]["1"]["en→de"] == round(trained, 2)
    assert all(set(figures) == {"en→de", "de→en"} and all(0 <= b <= 100 for b in figures.values())
               for figures in found["refine_sweep"].values())
    with pytest.raises(SystemExit, match="--refine_sweep: other is not a recorded row"):
        run_experiment.add_refine_sweep("x", {**row, "name": "other"}, str(demo_data.parent), str(wd), [0])


def test_refine_sweep_refuses_a_model_that_is_not_amortised(tmp_path, monkeypatch):
    results = tmp_path / "results"
    results.mkdir()
    (results / "x.json").write_text(json.dumps([{"name": "bound", "bleu": 30.0}]))
    monkeypatch.setattr(run_experiment, "HERE", str(tmp_path))
    model = type("Model", (), {"config": type("Config", (), {"to_flat": lambda _: {"amortize": "none"}})()})()
    with pytest.raises(SystemExit, match="--refine_sweep: bound is not an amortised bound model"):
        run_experiment.add_refine_sweep("x", BOUND_ROW, str(tmp_path), "wd", [0], load=lambda wd, refine_steps: model)

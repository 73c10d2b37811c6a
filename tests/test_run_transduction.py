"""run_scripts/run_transduction.py: a cell's record (its commands, scores and times), with training
and testing faked; the data generation is real (the generator run in this process), and the
recorded command is checked by running it as shown."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ScriptsInProcess

import budgeted_runs
import run_transduction as runner


def flag(command, name):
    return next(a.split("=", 1)[1] for a in command if a.startswith(f"--{name}="))


def fake_cell(tmp_path, monkeypatch, task, model, seeds=(), train_perplexities=None, dev_perplexities=None, **options):
    """run_cell (with ``options``) with a training that writes training_stats.json (the best epoch's
    training and dev perplexity by the run's directory name, from ``train_perplexities`` and
    ``dev_perplexities``) and tests that score by test set and note the directory they tested."""
    trained, tested = [], []

    def train_within_budget(command, working_dir, budget, log):
        trained.append((command, budget))
        name = Path(working_dir).name
        epochs = [{"seconds": 60, "train_perplexity": p} for p in (9.0, (train_perplexities or {}).get(name, 3.0), 1.0)]
        Path(working_dir, "training_stats.json").write_text(json.dumps(
            {"epochs": epochs, "best_epoch": 2, "best_dev_perplexity": (dev_perplexities or {}).get(name, 1.5),
             "total_seconds": 180}))
        return "time budget"

    def run_test(command, working_dir, name):
        tested.append(working_dir)
        coarse = {"test": 0.75, "test_long": 0.25}[name]
        return {"coarse_accuracy": coarse, "fine_accuracy": coarse + 0.1, "testing_time": 2.4}

    monkeypatch.setattr(runner, "train_within_budget", train_within_budget)
    monkeypatch.setattr(runner, "run_test", run_test)
    monkeypatch.setattr(runner, "machine", lambda: "M")
    monkeypatch.setattr(budgeted_runs, "subprocess", ScriptsInProcess())  # the generator
    monkeypatch.setattr(runner, "GENERATE", "--seed=3 --train=6 --dev=2 --test=2 --vocab_size=10".split())
    cell = runner.run_cell(task, model, str(tmp_path / "work"), print, seeds, **options)
    return cell, trained, tested


def test_a_cell_records_its_commands_scores_and_times(tmp_path, monkeypatch):
    cell, trained, _ = fake_cell(tmp_path, monkeypatch, "reverse", "deque_lstm")
    data = tmp_path / "work" / "transduction" / "data" / "reverse"
    [(command, budget)] = trained
    assert budget == runner.TRAIN_SECONDS and flag(command, "train_set2") == str(data / "train.tgt")
    assert {"--model=deque_lstm", "--optimizer=rmsprop", "--task=transduction"} <= set(command)
    # Reversal's DeQue has its own biases and rate (TASK_FLAGS), each given once.
    assert [a for a in command if a.startswith(("--deque_biases", "--learning_rate"))] == [
        "--deque_biases=same", "--learning_rate=0.001"]
    assert flag(command, "working_dir") == str(tmp_path / "work" / "transduction" / "reverse" / "deque_lstm")
    assert (cell["stopped"], cell["epochs"], cell["best_epoch"], cell["train_seconds"]) == ("time budget", 3, 2, 180)
    assert cell["training_lengths"]["coarse"] == 0.75 and cell["longer"]["fine"] == 0.35
    assert cell["longer"]["test_command"].endswith("test_long.src --working_dir=" + runner.shown([flag(command, "working_dir")]))


def test_the_papers_grammars_are_written_with_its_word_classes(tmp_path, monkeypatch):
    # Table 1's classes of about 100 / k words: --vocab_size=100 in place of the cells' 128 (here 10)
    cell, _, _ = fake_cell(tmp_path, monkeypatch, "svo_sov_paper", "queue_lstm")
    assert "--task=svo_sov_paper" in cell["generate_command"].split()
    assert [a for a in cell["generate_command"].split() if a.startswith("--vocab_size")] == ["--vocab_size=100"]
    data = tmp_path / "work" / "transduction" / "data" / "svo_sov_paper"
    assert json.loads((data / "generator.json").read_text())["vocab_size"] == 100


@pytest.mark.slow  # the recorded command line, run as a new process
def test_the_recorded_generate_command_run_as_shown_writes_the_same_files(tmp_path, monkeypatch):
    cell, _, _ = fake_cell(tmp_path, monkeypatch, "copy", "stack_lstm")
    data = tmp_path / "work" / "transduction" / "data" / "copy"
    written = {p.name: p.read_text() for p in data.iterdir()}
    assert set(written) == {f"{n}.{s}" for n in ("train", "dev", "test", "test_long") for s in ("src", "tgt")} | {
        "generator.json"}
    shutil.rmtree(data)
    assert cell["generate_command"].split()[0] == runner.shown([sys.executable])
    subprocess.run(cell["generate_command"].split(), check=True, capture_output=True, cwd=os.getcwd())
    assert {p.name: p.read_text() for p in data.iterdir()} == written


def test_seeds_train_a_run_each_and_the_lowest_dev_perplexity_is_kept_and_tested_alone(tmp_path, monkeypatch):
    # the best epoch's dev perplexity decides, not its training perplexity (seed 3's is the lowest)
    cell, trained, tested = fake_cell(tmp_path, monkeypatch, "reverse", "stack_lstm", seeds=(2, 3),
                                      train_perplexities={"stack_lstm": 5.0, "stack_lstm_seed2": 4.0, "stack_lstm_seed3": 2.0},
                                      dev_perplexities={"stack_lstm": 1.5, "stack_lstm_seed2": 1.1, "stack_lstm_seed3": 1.3})
    base = tmp_path / "work" / "transduction" / "reverse"
    assert [flag(command, "working_dir") for command, _ in trained] == [
        str(base / "stack_lstm"), str(base / "stack_lstm_seed2"), str(base / "stack_lstm_seed3")]
    # the cell's own run keeps the toolkit's default seed (its flags as before); the others name theirs
    assert [next((a for a in command if a.startswith("--seed=")), None) for command, _ in trained] == [
        None, "--seed=2", "--seed=3"]
    assert set(tested) == {str(base / "stack_lstm_seed2")} and len(tested) == 2
    assert cell["kept_seed"] == 2 and "--seed=2" in cell["train_command"]
    assert [(r["seed"], r["train_perplexity"], r["best_dev_perplexity"]) for r in cell["restarts"]] == [
        ("default", 5.0, 1.5), (2, 4.0, 1.1), (3, 2.0, 1.3)]
    assert all(r["train_command"].endswith(f"--working_dir={runner.shown([str(base / d)])}") for r, d in
               zip(cell["restarts"], ("stack_lstm", "stack_lstm_seed2", "stack_lstm_seed3")))


def test_a_cell_of_one_run_records_no_restarts(tmp_path, monkeypatch):
    cell, _, _ = fake_cell(tmp_path, monkeypatch, "copy", "queue_lstm")
    assert "restarts" not in cell and "kept_seed" not in cell


def test_a_rate_grid_trains_every_seed_at_every_rate_with_the_given_flags_and_keeps_the_lowest_perplexity(
        tmp_path, monkeypatch):
    cell, trained, tested = fake_cell(
        tmp_path, monkeypatch, "svo_sov", "queue_lstm", seeds=(2,), learning_rates=(0.005, 0.0005),
        extra=["--fresh_data", "--units=256"], budget=600,
        dev_perplexities={"queue_lstm_lr0.005": 3.0, "queue_lstm_lr0.005_seed2": 2.5,
                          "queue_lstm_lr0.0005": 1.5, "queue_lstm_lr0.0005_seed2": 4.0})
    base = tmp_path / "work" / "transduction" / "svo_sov"
    names = ["queue_lstm_lr0.005", "queue_lstm_lr0.005_seed2", "queue_lstm_lr0.0005", "queue_lstm_lr0.0005_seed2"]
    assert [flag(command, "working_dir") for command, _ in trained] == [str(base / n) for n in names]
    for (command, budget), rate in zip(trained, (0.005, 0.005, 0.0005, 0.0005)):
        names_given = [a.split("=")[0] for a in command if a.startswith("--")]
        assert len(names_given) == len(set(names_given)) and budget == 600  # each flag once, the cell's replaced
        assert flag(command, "learning_rate") == str(rate) and flag(command, "units") == "256"
        assert "--fresh_data" in command and "--optimizer=rmsprop" in command
    assert set(tested) == {str(base / "queue_lstm_lr0.0005")}
    assert (cell["kept_seed"], cell["kept_learning_rate"], cell["budget_seconds"]) == ("default", 0.0005, 600)
    assert [(r["seed"], r["learning_rate"]) for r in cell["restarts"]] == [
        ("default", 0.005), (2, 0.005), ("default", 0.0005), (2, 0.0005)]


def test_a_grid_trained_two_runs_at_a_time_is_recorded_as_one_at_a_time(tmp_path, monkeypatch):
    grid = dict(seeds=(2,), learning_rates=(0.005, 0.0005), budget=600, dev_perplexities={
        "queue_lstm_lr0.005": 3.0, "queue_lstm_lr0.005_seed2": 2.5, "queue_lstm_lr0.0005": 1.5,
        "queue_lstm_lr0.0005_seed2": 4.0})
    one, trained_one, _ = fake_cell(tmp_path, monkeypatch, "svo_sov", "queue_lstm", **grid)
    two, trained_two, _ = fake_cell(tmp_path, monkeypatch, "svo_sov", "queue_lstm", jobs=2, **grid)
    assert two == one and sorted(trained_two) == sorted(trained_one) and len(trained_two) == 4


def test_a_written_task_directory_holds_the_generator_fresh_data_draws_from(tmp_path, monkeypatch):
    fake_cell(tmp_path, monkeypatch, "gender_conjugation", "stack_lstm")
    data = tmp_path / "work" / "transduction" / "data" / "gender_conjugation"
    assert json.loads((data / "generator.json").read_text()) == {
        "task": "gender_conjugation", "seed": 3, "min_len": 8, "max_len": 64, "vocab_size": 10}


def test_seeds_out_of_range_or_the_default_one_are_usage_errors(monkeypatch, capsys):
    for value, message in (("-1", "-1: a seed from 0 to 2**32 - 1 other than the default 1234"),
                           ("1234", "1234: a seed from 0"), ("two", "invalid seed value: 'two'")):
        monkeypatch.setattr(sys, "argv", ["run_transduction.py", "reverse", "--seeds", value])
        with pytest.raises(SystemExit) as stop:
            runner.main()
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_rate_or_budget_not_above_zero_or_not_a_number_is_a_usage_error(monkeypatch, capsys):
    for flags, message in ((["--learning_rates", "0"], "argument --learning_rates: 0: must be above 0"),
                           (["--learning_rates", "fast"], "argument --learning_rates: invalid positive value: 'fast'"),
                           (["--budget_minutes", "-5"], "argument --budget_minutes: -5: must be above 0"),
                           (["--jobs", "0"], "argument --jobs: 0: from 1 to")):
        monkeypatch.setattr(sys, "argv", ["run_transduction.py", "reverse", *flags])
        with pytest.raises(SystemExit) as stop:
            runner.main()
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_task_s_own_flag_replaces_its_model_s_and_other_cells_keep_the_model_s():
    from transduction_experiments import MODELS, TASK_FLAGS, cell_flags
    for (task, model), own in TASK_FLAGS.items():
        flags = cell_flags(task, model)
        names = [f.split("=")[0] for f in flags]
        assert set(own) <= set(flags) and len(names) == len(set(names))
    assert cell_flags("copy", "deque_lstm") == MODELS["deque_lstm"]
    assert "--deque_biases=per_end" in cell_flags("copy", "deque_lstm")


def test_a_budget_in_batches_caps_the_epochs_with_no_time_limit_and_is_recorded(tmp_path, monkeypatch):
    # 6 training pairs in batches of 4: 2 batches an epoch, so 25 batches are 13 epochs, 7 of patience 4
    cell, trained, _ = fake_cell(tmp_path, monkeypatch, "copy", "stack_lstm", extra=["--batch_size=4"],
                                 batches=25, patience_batches=7)
    [(command, budget)] = trained
    assert budget is None and flag(command, "max_epochs") == "13" and flag(command, "early_stopping_steps") == "4"
    assert [a for a in command if a.startswith("--max_epochs")] == ["--max_epochs=13"]  # the cell's cap replaced
    assert (cell["budget_batches"], cell["patience_batches"], cell["batches"]) == (25, 7, 6) and "budget_seconds" not in cell
    assert [p["batches"] for p in cell["curve"]] == [6]  # 3 epochs, none reaching 1000 batches: the last only


def test_the_paper_s_rule_keeps_the_run_of_the_lowest_training_perplexity(tmp_path, monkeypatch):
    cell, _, tested = fake_cell(tmp_path, monkeypatch, "reverse", "stack_lstm", seeds=(2, 3), keep_by="train",
                                train_perplexities={"stack_lstm": 5.0, "stack_lstm_seed2": 4.0, "stack_lstm_seed3": 2.0},
                                dev_perplexities={"stack_lstm": 1.5, "stack_lstm_seed2": 1.1, "stack_lstm_seed3": 1.3})
    assert (cell["kept_seed"], cell["kept_by"]) == (3, "train") and set(tested) == {
        str(tmp_path / "work" / "transduction" / "reverse" / "stack_lstm_seed3")}


def test_a_learning_curve_is_read_at_the_first_epoch_past_each_point_and_at_the_last():
    stats = {"epochs": [{"train_perplexity": 100.0 / e, "dev_perplexity": 50.0 / e} for e in range(1, 301)]}
    curve = runner.learning_curve(stats, 400)  # 400 batches an epoch, 300 epochs
    assert [p["batches"] for p in curve] == [1200, 3200, 10000, 30000, 100000, 120000]
    assert curve[2] == {"batches": 10000, "train_perplexity": 4.0, "dev_perplexity": 2.0}  # epoch 25
    assert runner.learning_curve({"epochs": [{"train_perplexity": 3.0}]}, 400) == [
        {"batches": 400, "train_perplexity": 3.0, "dev_perplexity": None}]


def test_batch_budget_options_alone_or_with_a_time_budget_or_token_batches_are_errors(monkeypatch, capsys, tmp_path):
    for flags, message in ((["--patience_batches", "100"], "--patience_batches: only with --batches"),
                           (["--batches", "100", "--budget_minutes", "5"], "--batches: a budget in batches, not with"),
                           (["--batches", "100", "--budget_minutes=5"], "--batches: a budget in batches, not with"),
                           (["--batches", "0"], "argument --batches: 0: must be a whole number above 0")):
        monkeypatch.setattr(sys, "argv", ["run_transduction.py", "reverse", *flags])
        with pytest.raises(SystemExit) as stop:
            runner.main()
        assert stop.value.code == 2 and message in capsys.readouterr().err
    (tmp_path / "train.src").write_text("a b\n")
    with pytest.raises(SystemExit, match="counts batches of --batch_size pairs, not --batch_tokens"):
        runner.batch_budget(str(tmp_path), ["--batch_size=10", "--batch_tokens=500"], 100)


def test_a_time_budgeted_cell_with_token_batches_is_recorded_without_a_batch_count(tmp_path, monkeypatch):
    cell, _, _ = fake_cell(tmp_path, monkeypatch, "copy", "stack_lstm", extra=["--batch_tokens=500"])
    assert cell["epochs"] == 3 and "batches" not in cell and "curve" not in cell


def test_the_command_line_passes_a_time_budget_by_default_and_a_batch_budget_instead_when_given(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run_cell", lambda *a: calls.append(a) or {})
    monkeypatch.setattr(runner, "record", lambda cell, note: None)
    for flags in ([], ["--budget_minutes", "5"], ["--batches", "100000", "--patience_batches", "20000", "--keep_by",
                                                  "train"]):
        monkeypatch.setattr(sys, "argv", ["run_transduction.py", "copy", "--models", "stack_lstm", *flags])
        runner.main()
    assert [c[7] for c in calls] == [runner.TRAIN_SECONDS, 300, runner.TRAIN_SECONDS]  # the seconds, unused with batches
    assert [c[9:] for c in calls] == [(None, None, "dev"), (None, None, "dev"), (100000, 20000, "train")]

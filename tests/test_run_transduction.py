"""run_scripts/run_transduction.py: a cell's record (its commands, scores and times), with training
and testing faked; the data generation is real, so that the recorded command is checked by running it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

sys.path.insert(0, str(ROOT / "run_scripts"))
import run_transduction as runner  # noqa: E402


def flag(command, name):
    return next(a.split("=", 1)[1] for a in command if a.startswith(f"--{name}="))


def fake_cell(tmp_path, monkeypatch, task, model):
    """run_cell with a training that writes training_stats.json and tests that score by test set."""
    trained = []

    def train_within_budget(command, working_dir, budget, log):
        trained.append((command, budget))
        Path(working_dir, "training_stats.json").write_text(json.dumps(
            {"epochs": [{"seconds": 60}] * 3, "best_epoch": 2, "best_dev_perplexity": 1.5, "total_seconds": 180}))
        return True

    def run_test(command, working_dir, name):
        coarse = {"test": 0.75, "test_long": 0.25}[name]
        return {"coarse_accuracy": coarse, "fine_accuracy": coarse + 0.1, "testing_time": 2.4}

    monkeypatch.setattr(runner, "train_within_budget", train_within_budget)
    monkeypatch.setattr(runner, "run_test", run_test)
    monkeypatch.setattr(runner, "machine", lambda: "M")
    monkeypatch.setattr(runner, "GENERATE", "--seed=3 --train=6 --dev=2 --test=2 --vocab_size=10".split())
    return runner.run_cell(task, model, str(tmp_path / "work"), print), trained


def test_a_cell_records_its_commands_scores_and_times(tmp_path, monkeypatch):
    cell, trained = fake_cell(tmp_path, monkeypatch, "reverse", "deque_lstm")
    data = tmp_path / "work" / "transduction" / "data" / "reverse"
    [(command, budget)] = trained
    assert budget == runner.TRAIN_SECONDS and flag(command, "train_set2") == str(data / "train.tgt")
    assert {"--model=deque_lstm", "--learning_rate=0.002", "--task=transduction"} <= set(command)
    assert flag(command, "working_dir") == str(tmp_path / "work" / "transduction" / "reverse" / "deque_lstm")
    assert (cell["stopped"], cell["epochs"], cell["best_epoch"], cell["train_seconds"]) == ("time budget", 3, 2, 180)
    assert cell["training_lengths"]["coarse"] == 0.75 and cell["longer"]["fine"] == 0.35
    assert cell["longer"]["test_command"].endswith("test_long.src --working_dir=" + runner.shown([flag(command, "working_dir")]))


def test_the_recorded_generate_command_run_as_shown_writes_the_same_files(tmp_path, monkeypatch):
    cell, _ = fake_cell(tmp_path, monkeypatch, "copy", "stack_lstm")
    data = tmp_path / "work" / "transduction" / "data" / "copy"
    written = {p.name: p.read_text() for p in data.iterdir()}
    assert set(written) == {f"{n}.{s}" for n in ("train", "dev", "test", "test_long") for s in ("src", "tgt")}
    shutil.rmtree(data)
    assert cell["generate_command"].split()[0] == runner.shown([sys.executable])
    subprocess.run(cell["generate_command"].split(), check=True, capture_output=True, cwd=os.getcwd())
    assert {p.name: p.read_text() for p in data.iterdir()} == written

#!/usr/bin/env python3
"""Run transduction cells (Grefenstette et al. 2015, Figure 2a) and record them in
``run_scripts/results/transduction.json``.

    python3 run_scripts/run_transduction.py copy --models queue_lstm [--work runs]

For each cell: write the task's files once (``data/generate_transduction.py``, into
``<work>/transduction/data/<task>``), train (or resume an interrupted training: the same command
again) within TRAIN_SECONDS, test on the training-length and on the longer test sequences, and
record the commands, coarse and fine accuracy of both, epochs, and train and test seconds. A cell
already in the results file is replaced; other cells are kept.

The time budget (``budgeted_runs.py``) counts finished epochs; a cell that training stops at
the budget is recorded as ``"stopped": "time budget"`` and tested on its best epoch.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from budgeted_runs import NMT, generate_once, run_test, shown, train_within_budget  # noqa: E402
from run_experiment import machine  # noqa: E402
from transduction_experiments import GENERATE, MODELS, TASKS, TESTING, TRAIN_SECONDS, TRAINING  # noqa: E402

TEST_SETS = {"training_lengths": "test", "longer": "test_long"}


def train_command(model, data, working_dir):
    files = [f"--{flag}={data}/{name}" for flag, name in (
        ("train_set1", "train.src"), ("train_set2", "train.tgt"), ("dev_set1", "dev.src"), ("dev_set2", "dev.tgt"))]
    return [sys.executable, "-u", NMT, *TRAINING, *MODELS[model], *files, f"--working_dir={working_dir}"]


def test(data, working_dir, name):
    """``--do_testing`` on ``data/name.src``: (command, its testing_stats.json)."""
    command = [sys.executable, "-u", NMT, *TESTING, f"--test_set={data}/{name}.src", f"--working_dir={working_dir}"]
    return command, run_test(command, working_dir, name)


def run_cell(task, model, work, log):
    data = os.path.abspath(os.path.join(work, "transduction", "data", task))
    working_dir = os.path.abspath(os.path.join(work, "transduction", task, model))
    # The task's files depend on GENERATE alone, so one writing serves every cell of the task.
    generated = generate_once("generate_transduction.py", [f"--task={task}", f"--out={data}", *GENERATE],
                              os.path.join(data, "test_long.tgt"))
    train = train_command(model, data, working_dir)
    os.makedirs(working_dir, exist_ok=True)
    stopped = train_within_budget(train, working_dir, TRAIN_SECONDS, log)
    with open(os.path.join(working_dir, "training_stats.json")) as f:
        stats = json.load(f)
    cell = {"task": task, "model": model, "generate_command": shown(generated),
            "train_command": shown(train), "stopped": "time budget" if stopped else "finished",
            "epochs": len(stats["epochs"]), "best_epoch": stats["best_epoch"],
            "best_dev_perplexity": stats["best_dev_perplexity"], "train_seconds": round(stats["total_seconds"]),
            "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    for key, name in TEST_SETS.items():
        command, scores = test(data, working_dir, name)
        cell[key] = {"coarse": scores["coarse_accuracy"], "fine": scores["fine_accuracy"],
                     "test_seconds": round(scores["testing_time"]), "test_command": shown(command)}
    return cell


def record(cell, note):
    path = os.path.join(HERE, "results", "transduction.json")
    cells = json.load(open(path)) if os.path.isfile(path) else []
    cells = [c for c in cells if (c["task"], c["model"]) != (cell["task"], cell["model"])]
    with open(path, "w") as f:
        json.dump([*cells, dict(cell, note=note)], f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("--models", nargs="*", choices=sorted(MODELS), help="cells to run (default: all)")
    parser.add_argument("--work", default="runs", help="parent of the data and working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    args = parser.parse_args()
    for model in args.models or MODELS:
        cell = run_cell(args.task, model, args.work, lambda m: print(m, flush=True))
        record(cell, args.note)
        print(json.dumps(cell), flush=True)


if __name__ == "__main__":
    main()

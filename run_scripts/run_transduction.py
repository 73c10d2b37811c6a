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

``--seeds S ...`` trains the cell again from other initialisations (``--seed=S``, into
``<model>_seed<S>``; the cell's own run keeps the toolkit's default seed and its directory) and
keeps the run of the lowest training perplexity at its best epoch, as the paper selected its
models ("based on average training perplexity", §5): each run within the time budget, only the
kept one tested; every run's figures are recorded under ``"restarts"``.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from budgeted_runs import NMT, generate_once, run_test, shown, train_within_budget, training_record  # noqa: E402
from rnnpb_nmt.config import Config  # noqa: E402
from run_experiment import machine  # noqa: E402
from transduction_experiments import GENERATE, MODELS, TASKS, TESTING, TRAIN_SECONDS, TRAINING, cell_flags  # noqa: E402

TEST_SETS = {"training_lengths": "test", "longer": "test_long"}


def train_command(task, model, data, working_dir, seed=None):
    files = [f"--{flag}={data}/{name}" for flag, name in (
        ("train_set1", "train.src"), ("train_set2", "train.tgt"), ("dev_set1", "dev.src"), ("dev_set2", "dev.tgt"))]
    seeded = [] if seed is None else [f"--seed={seed}"]
    return [sys.executable, "-u", NMT, *TRAINING, *cell_flags(task, model), *seeded, *files, f"--working_dir={working_dir}"]


def test(data, working_dir, name):
    """``--do_testing`` on ``data/name.src``: (command, its testing_stats.json)."""
    command = [sys.executable, "-u", NMT, *TESTING, f"--test_set={data}/{name}.src", f"--working_dir={working_dir}"]
    return command, run_test(command, working_dir, name)


def run_cell(task, model, work, log, seeds=()):
    data = os.path.abspath(os.path.join(work, "transduction", "data", task))
    # The task's files depend on GENERATE alone, so one writing serves every cell of the task.
    generated = generate_once("generate_transduction.py", [f"--task={task}", f"--out={data}", *GENERATE],
                              os.path.join(data, "test_long.tgt"))
    runs = [train_run(task, model, work, seed, data, log) for seed in (None, *seeds)]
    kept = min(runs, key=lambda run: run["train_perplexity"])
    cell = {"task": task, "model": model, "generate_command": shown(generated),
            **{k: v for k, v in kept.items() if k not in ("seed", "train_perplexity", "working_dir")},
            "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    if seeds:
        cell.update(restarts=[{k: v for k, v in run.items() if k != "working_dir"} for run in runs],
                    kept_seed=kept["seed"])
    for key, name in TEST_SETS.items():
        command, scores = test(data, kept["working_dir"], name)
        cell[key] = {"coarse": scores["coarse_accuracy"], "fine": scores["fine_accuracy"],
                     "test_seconds": round(scores["testing_time"]), "test_command": shown(command)}
    return cell


def train_run(task, model, work, seed, data, log):
    """Train one run of the cell within TRAIN_SECONDS (``seed`` None: the toolkit's default seed,
    in the cell's own directory); what is recorded of it, with its directory and the training
    perplexity of its best epoch, by which the paper chose among initialisations."""
    name = model if seed is None else f"{model}_seed{seed}"
    working_dir = os.path.abspath(os.path.join(work, "transduction", task, name))
    command = train_command(task, model, data, working_dir, seed)
    os.makedirs(working_dir, exist_ok=True)
    stopped = train_within_budget(command, working_dir, TRAIN_SECONDS, log)
    recorded = training_record(command, working_dir, stopped, TRAIN_SECONDS)
    with open(os.path.join(working_dir, "training_stats.json")) as f:
        stats = json.load(f)
    return {"seed": "default" if seed is None else seed, **recorded, "working_dir": working_dir,
            "train_perplexity": stats["epochs"][stats["best_epoch"] - 1]["train_perplexity"]}


def record(cell, note):
    path = os.path.join(HERE, "results", "transduction.json")
    cells = json.load(open(path)) if os.path.isfile(path) else []
    cells = [c for c in cells if (c["task"], c["model"]) != (cell["task"], cell["model"])]
    with open(path, "w") as f:
        json.dump([*cells, dict(cell, note=note)], f, indent=2)
        f.write("\n")


def seed(text):
    """A ``--seeds`` value: a seed nmt.py takes (its --seed's range) other than its default, which
    the cell's own run has."""
    value, default = int(text), Config().training.seed
    if not 0 <= value < 2**32 or value == default:
        raise argparse.ArgumentTypeError(f"{text}: a seed from 0 to 2**32 - 1 other than the default {default}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("--models", nargs="*", choices=sorted(MODELS), help="cells to run (default: all)")
    parser.add_argument("--work", default="runs", help="parent of the data and working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    parser.add_argument("--seeds", type=seed, nargs="+", default=[], metavar="S",
                        help="also train from these seeds and keep the run of the lowest training perplexity")
    args = parser.parse_args()
    for model in args.models or MODELS:
        cell = run_cell(args.task, model, args.work, lambda m: print(m, flush=True), list(dict.fromkeys(args.seeds)))
        record(cell, args.note)
        print(json.dumps(cell), flush=True)


if __name__ == "__main__":
    main()

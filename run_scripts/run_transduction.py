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
the budget is recorded as ``"stopped": "time budget"`` and tested on its best epoch; one whose
loss went non-finite (a high rate of the grid) as ``"diverged"``, its best epoch before that kept.

The paper's protocol (§5: a grid of learning rates, several initialisations, the best model
kept) is three options: ``--seeds S ...`` trains the cell again from other initialisations
(``--seed=S``; the cell's own run keeps the toolkit's default seed), ``--learning_rates LR ...``
trains each of them at each rate instead of the cell's own, and the run of the lowest dev
perplexity at its best epoch is kept and alone tested; every run's figures, its training
perplexity too, are recorded under ``"restarts"``. The paper kept the lowest "average training
perplexity" (§5): its pairs were all fresh, so that too was a perplexity on pairs the model had not
trained on, but averaged over the steps of training, and ours (the thesis's eq. 2.19 over an
epoch's pairs: the mean of each pair's exp(cross-entropy per word)) follows the one pair the model
gets confidently wrong: once a memory read slips by a position every later word costs 5-27 nats.
On 2026-12-02 an SVO→SOV Queue-LSTM run had dev perplexity 1.016 at its best epoch and training
perplexity 4983 there, and would have lost to a run of dev 1.17 and training 3.27. The dev
perplexity is of the weights kept, on held-out pairs of the training lengths. A run's directory is
the model's name, with ``_lr<LR>`` and ``_seed<S>`` for a rate or seed not the cell's.
``--train_flags "FLAGS"`` replaces or adds nmt.py flags in every run (``--fresh_data``, the
paper's ``--units=256``), ``--budget_minutes`` sets each run's time budget; both go in the record.
``--jobs 2`` trains two of a cell's runs at a time, each on a core of its own.

The paper's protocol trains "at convergence" (§5), an unbounded number of steps. ``--batches N``
budgets each run in batches instead of minutes: at most N (the paper's scale: 100000), as an epoch
cap (an epoch is the training file's pairs, or as many fresh ones, in batches of ``--batch_size``),
with no time limit, so a run cut by a session's stop resumes where it was and trains what an
uninterrupted one does; ``--patience_batches P`` stops a run whose dev perplexity has not improved
for P batches (as epochs of patience). ``--keep_by train`` keeps the run of the lowest training
perplexity at its best epoch, the paper's criterion, instead of the lowest dev perplexity. Every
run's record has its learning curve in a few points (``learning_curve``).
Another protocol of a cell that already ran belongs in another ``--work`` (a run refuses to
resume under other flags).
"""

import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from budgeted_runs import NMT, generate_once, in_parallel, job_count, run_test, shown  # noqa: E402
from budgeted_runs import train_within_budget, training_record, whole_number  # noqa: E402
from rnnpb_nmt.config import Config  # noqa: E402
from rnnpb_nmt.tasks.transduction import synthetic  # noqa: E402
from run_experiment import machine  # noqa: E402
from transduction_experiments import GENERATE, MODELS, TASK_GENERATE, TASKS, TESTING, TRAIN_SECONDS, TRAINING  # noqa: E402
from transduction_experiments import cell_flags, replaced  # noqa: E402

TEST_SETS = {"training_lengths": "test", "longer": "test_long"}


def train_command(task, model, data, working_dir, seed=None, learning_rate=None, extra=()):
    """nmt.py's training command of one run: the cell's flags, each of ``extra`` (and the
    ``learning_rate``, ``seed`` other than the cell's) replacing the flag of its name or added."""
    files = [f"--{flag}={data}/{name}" for flag, name in (
        ("train_set1", "train.src"), ("train_set2", "train.tgt"), ("dev_set1", "dev.src"), ("dev_set2", "dev.tgt"))]
    own = [*extra, *([] if learning_rate is None else [f"--learning_rate={learning_rate}"]),
           *([] if seed is None else [f"--seed={seed}"])]
    return [sys.executable, "-u", NMT, *replaced([*TRAINING, *cell_flags(task, model)], own), *files,
            f"--working_dir={working_dir}"]


def test(data, working_dir, name):
    """``--do_testing`` on ``data/name.src``: (command, its testing_stats.json)."""
    command = [sys.executable, "-u", NMT, *TESTING, f"--test_set={data}/{name}.src", f"--working_dir={working_dir}"]
    return command, run_test(command, working_dir, name)


def run_cell(task, model, work, log, seeds=(), learning_rates=(), extra=(), budget=TRAIN_SECONDS, jobs=1,
             batches=None, patience_batches=None, keep_by="dev"):
    """Train, keep and test one cell (``batches``: a budget in batches in place of ``budget``'s
    seconds; ``keep_by``: "dev" or "train", whose perplexity at the best epoch picks the kept run)."""
    data = os.path.abspath(os.path.join(work, "transduction", "data", task))
    # The task's files depend on GENERATE alone, so one writing serves every cell of the task.
    generated = generate_once("generate_transduction.py",
                              [f"--task={task}", f"--out={data}", *replaced(GENERATE, TASK_GENERATE.get(task, []))],
                              os.path.join(data, synthetic.GENERATOR_FILE))
    if batches is not None:
        extra = [*extra, *batch_budget(data, replaced([*TRAINING, *cell_flags(task, model)], extra), batches,
                                       patience_batches)]
        budget = None
    runs = in_parallel(lambda run: train_run(task, model, work, data, log, *run, extra, budget),
                       [(seed, rate) for rate in (learning_rates or [None]) for seed in (None, *seeds)], jobs)
    kept = min(runs, key=lambda run: run["best_dev_perplexity" if keep_by == "dev" else "train_perplexity"])
    cell = {"task": task, "model": model, "generate_command": shown(generated),
            **{k: v for k, v in kept.items() if k not in ("seed", "learning_rate", "train_perplexity", "working_dir")},
            **({"budget_seconds": budget} if batches is None else
               {"budget_batches": batches, "patience_batches": patience_batches}),
            "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    if len(runs) > 1:
        cell.update(restarts=[{k: v for k, v in run.items() if k != "working_dir"} for run in runs],
                    kept_seed=kept["seed"], kept_learning_rate=kept["learning_rate"], kept_by=keep_by)
    for key, name in TEST_SETS.items():
        command, scores = test(data, kept["working_dir"], name)
        cell[key] = {"coarse": scores["coarse_accuracy"], "fine": scores["fine_accuracy"],
                     "test_seconds": round(scores["testing_time"]), "test_command": shown(command)}
    return cell


def batch_budget(data, flags, batches, patience=None):
    """The nmt.py flags that budget a run of ``flags`` in batches: at most ``batches`` (an epoch cap)
    and, if given, ``patience`` batches without dev improvement (epochs of patience), each rounded up
    to whole epochs."""
    per_epoch = epoch_batches(data, flags)
    if per_epoch is None:
        raise SystemExit("--batches: counts batches of --batch_size pairs, not --batch_tokens (in --train_flags)")
    return [f"--max_epochs={math.ceil(batches / per_epoch)}",
            *([] if patience is None else [f"--early_stopping_steps={math.ceil(patience / per_epoch)}"])]


def epoch_batches(data, flags):
    """The batches of an epoch of a run of ``flags`` on the task files in ``data``: the training
    file's pairs (--fresh_data draws as many an epoch) in batches of --batch_size, the last smaller;
    None under token batches, whose count the flags do not say."""
    if any(f.startswith("--batch_tokens=") and f != "--batch_tokens=0" for f in flags):
        return None
    with open(os.path.join(data, "train.src")) as f:
        pairs = sum(1 for _ in f)
    size = [int(f.split("=", 1)[1]) for f in flags if f.startswith("--batch_size=")][-1]
    return math.ceil(pairs / size)


# The batches after which a run's learning curve is summarised (``learning_curve``), up to the paper's scale.
CURVE_BATCHES = (1000, 3000, 10000, 30000, 100000)


def learning_curve(stats, per_epoch):
    """A run's training and dev perplexity (``stats``: its training_stats.json) at the first epoch
    that reaches each of CURVE_BATCHES batches, and at its last: its learning curve in a few points."""
    epochs = stats["epochs"]
    reached = {next((i for i in range(len(epochs)) if (i + 1) * per_epoch >= n), len(epochs) - 1) for n in CURVE_BATCHES}
    return [{"batches": (i + 1) * per_epoch, "train_perplexity": round(epochs[i]["train_perplexity"], 4),
             "dev_perplexity": round(epochs[i]["dev_perplexity"], 4) if "dev_perplexity" in epochs[i] else None}
            for i in sorted(reached | {len(epochs) - 1})]


def train_run(task, model, work, data, log, seed=None, learning_rate=None, extra=(), budget=TRAIN_SECONDS):
    """Train one run of the cell within ``budget`` seconds (``seed``, ``learning_rate`` None: the
    cell's own; ``budget`` None: no time limit); what is recorded of it, with its directory, the
    training perplexity of its best epoch (the paper's criterion, recorded beside ours), the batches
    it trained and its learning curve."""
    name = model + (f"_lr{learning_rate}" if learning_rate is not None else "") + (f"_seed{seed}" if seed is not None else "")
    working_dir = os.path.abspath(os.path.join(work, "transduction", task, name))
    command = train_command(task, model, data, working_dir, seed, learning_rate, extra)
    os.makedirs(working_dir, exist_ok=True)
    stopped = train_within_budget(command, working_dir, budget, log)
    recorded = training_record(command, working_dir, stopped, budget)
    with open(os.path.join(working_dir, "training_stats.json")) as f:
        stats = json.load(f)
    rate = float(next(a for a in reversed(command) if a.startswith("--learning_rate=")).split("=", 1)[1])
    per_epoch = epoch_batches(data, command)
    counted = {} if per_epoch is None else {"batches": len(stats["epochs"]) * per_epoch,
                                            "curve": learning_curve(stats, per_epoch)}
    return {"seed": "default" if seed is None else seed, "learning_rate": rate, **recorded, "working_dir": working_dir,
            "train_perplexity": stats["epochs"][stats["best_epoch"] - 1]["train_perplexity"], **counted}


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


def positive(text):
    """A ``--learning_rates`` or ``--budget_minutes`` value: a number above 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: must be above 0")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("task", choices=TASKS)
    parser.add_argument("--models", nargs="*", choices=sorted(MODELS), help="cells to run (default: all)")
    parser.add_argument("--work", default="runs", help="parent of the data and working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    parser.add_argument("--seeds", type=seed, nargs="+", default=[], metavar="S",
                        help="also train from these seeds and keep the run of the lowest dev perplexity")
    parser.add_argument("--learning_rates", type=positive, nargs="+", default=[], metavar="LR",
                        help="train every seed at each of these rates instead of the cell's own (the paper's grid)")
    parser.add_argument("--train_flags", type=str.split, default=[], metavar='"FLAGS"',
                        help="nmt.py flags replacing the cells' of their names, or added (e.g. \"--fresh_data --units=256\")")
    parser.add_argument("--budget_minutes", type=positive,
                        help=f"training time of each run (default {TRAIN_SECONDS // 60})")
    parser.add_argument("--batches", type=whole_number, metavar="N",
                        help="budget each run in batches, at most N, with no time limit (the paper's scale: 100000)")
    parser.add_argument("--patience_batches", type=whole_number, metavar="P",
                        help="with --batches: stop a run after P batches without dev improvement")
    parser.add_argument("--keep_by", choices=("dev", "train"), default="dev",
                        help="keep the run of the lowest dev (default) or training (the paper's) perplexity")
    parser.add_argument("--jobs", type=job_count, default=1,
                        help="runs of a cell (seeds, rates) trained at once, each pinned to a core of its own (default 1)")
    args = parser.parse_args()
    if args.patience_batches is not None and args.batches is None:
        parser.error("--patience_batches: only with --batches")
    if args.batches is not None and args.budget_minutes is not None:
        parser.error("--batches: a budget in batches, not with --budget_minutes")
    minutes = TRAIN_SECONDS / 60 if args.budget_minutes is None else args.budget_minutes
    for model in args.models or MODELS:
        cell = run_cell(args.task, model, args.work, lambda m: print(m, flush=True), list(dict.fromkeys(args.seeds)),
                        list(dict.fromkeys(args.learning_rates)), args.train_flags, round(minutes * 60),
                        args.jobs, args.batches, args.patience_batches, args.keep_by)
        record(cell, args.note)
        print(json.dumps(cell), flush=True)


if __name__ == "__main__":
    main()

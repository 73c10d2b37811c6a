#!/usr/bin/env python3
"""Run inflection sets (Aharoni & Goldberg 2017, tables 1-3) and record them in
``run_scripts/results/inflection.json``.

    python3 run_scripts/run_inflection.py sigmorphon2016 --sets german [--model soft] [--members 5] [--work runs]

For each set (``inflection_experiments.py``) and the model (``hard``, the default, or ``soft``):
train the members (seeds 1, 2, ...; each within the time budget of ``budgeted_runs.py``,
resuming an interrupted one: the same command again) into
``<work>/<folder>/<collection>/<set>/seed<N>`` (folder: ``inflection`` for hard,
``inflection_soft`` for soft), test each on dev, test their majority vote (``--ensemble``, into
``.../ensemble``) on dev, and with the best of these dev configurations (the vote on a tie)
predict the set's covered test file, copied to ``run_scripts/results/<folder>/<collection>/``.
Recorded: every command, dev accuracy and mean Levenshtein distance, epochs, train and test
seconds, under the model's name (``hard_attention``, ``soft_attention``). A set already recorded
for the model is replaced.
"""

import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from budgeted_runs import NMT, run_test, shown, train_within_budget, training_record  # noqa: E402
from inflection_experiments import COLLECTIONS, MODELS, SEEDS, TESTING, TRAIN_SECONDS, files  # noqa: E402
from inflection_experiments import predictions_name  # noqa: E402
from inflection_experiments import training_flags  # noqa: E402
from run_experiment import machine  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def scores(stats, command):
    """What a recorded test keeps of its testing_stats.json."""
    return {"accuracy": stats["accuracy"], "mean_levenshtein": stats["mean_levenshtein"],
            "test_seconds": round(stats["testing_time"], 1), "test_command": shown(command)}


def testing_command(test_set, working_dir, *flags):
    return [sys.executable, "-u", NMT, *TESTING, *flags, f"--test_set={test_set}", f"--working_dir={working_dir}"]


def run_member(collection, seed, train, dev, working_dir, budget, log, model="hard"):
    """Train one member of ``model`` within ``budget`` seconds and test it on dev: its record."""
    command = [sys.executable, "-u", NMT, *training_flags(collection, seed, model), f"--train_set1={train}",
               f"--dev_set1={dev}", f"--working_dir={working_dir}"]
    trained = training_record(command, working_dir, train_within_budget(command, working_dir, budget, log), budget)
    tested = testing_command(dev, working_dir)
    return {"seed": seed, **trained, "dev": scores(run_test(tested, working_dir, "dev"), tested)}


def best_configuration(members, member_dirs, vote, vote_dir):
    """(name, working directory, --do_testing flags) of the best dev accuracy; the vote on a tie."""
    candidates = [(m["dev"]["accuracy"], 0, f"seed{m['seed']}", d, []) for m, d in zip(members, member_dirs)]
    if vote:
        candidates.append((vote["accuracy"], 1, "ensemble", vote_dir, [f"--ensemble={','.join(member_dirs)}"]))
    _, _, name, working_dir, flags = max(candidates, key=lambda c: c[:2])  # max keeps the first of equals
    return name, working_dir, flags


def run_set(collection, name, data, work, members, budget, log, results=RESULTS, model="hard"):
    """Train, test and vote one set with ``model`` (a key of MODELS); write its covered test
    file's predictions; return its cell."""
    train, dev, covered = files(collection, name, data)
    folder = MODELS[model]["folder"]
    base = os.path.abspath(os.path.join(work, folder, collection, name))
    member_dirs = [os.path.join(base, f"seed{seed}") for seed in SEEDS[:members]]
    recorded = [run_member(collection, seed, train, dev, d, budget, log, model) for seed, d in zip(SEEDS, member_dirs)]
    vote_dir, vote = os.path.join(base, "ensemble"), None
    if members > 1:
        command = testing_command(dev, vote_dir, f"--ensemble={','.join(member_dirs)}")
        vote = scores(run_test(command, vote_dir, "dev"), command)
    chosen, working_dir, flags = best_configuration(recorded, member_dirs, vote, vote_dir)
    command = testing_command(covered, working_dir, *flags)
    stats = run_test(command, working_dir, "test")
    predictions = os.path.join(results, folder, collection, predictions_name(os.path.basename(covered)))
    os.makedirs(os.path.dirname(predictions), exist_ok=True)
    shutil.copy(os.path.join(working_dir, "test_trans_test.txt"), predictions)
    return {"collection": collection, "set": name, "model": MODELS[model]["name"], "members": recorded, "ensemble": vote,
            "train_seconds_budget": budget,
            "predictions": {"file": os.path.relpath(predictions, os.path.dirname(HERE)), "configuration": chosen,
                            "lines": stats["sentences"], "test_seconds": round(stats["testing_time"], 1),
                            "test_command": shown(command)},
            "machine": machine(), "date": time.strftime("%Y-%m-%d")}


def record(cell, note, results=RESULTS):
    """Keep ``cell`` in results/inflection.json, replacing the same set's (and model's) earlier one."""
    path = os.path.join(results, "inflection.json")
    cells = json.load(open(path, encoding="utf-8")) if os.path.isfile(path) else []
    key = lambda c: (c["collection"], c["set"], c["model"])
    cells = [c for c in cells if key(c) != key(cell)]
    with open(path, "w", encoding="utf-8") as f:
        json.dump([*cells, dict(cell, note=note)], f, indent=2, ensure_ascii=False)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--sets", nargs="*", help="sets to run (default: all of the collection)")
    parser.add_argument("--model", choices=sorted(MODELS), default="hard",
                        help="the paper's hard-attention model or its soft-attention baseline")
    parser.add_argument("--members", type=int, default=len(SEEDS), choices=range(1, len(SEEDS) + 1),
                        help="models per set (the paper's ensembles: 5)")
    parser.add_argument("--train_seconds", type=int, default=TRAIN_SECONDS, help="training budget of each model")
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data", "inflection"))
    parser.add_argument("--work", default="runs", help="parent of the working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    args = parser.parse_args()
    sets = COLLECTIONS[args.collection]["sets"]
    for name in args.sets or sets:
        if name not in sets:
            parser.error(f"--sets: {name} is not a set of {args.collection} ({', '.join(sets)})")
        cell = run_set(args.collection, name, os.path.abspath(args.data), args.work, args.members,
                       args.train_seconds, lambda m: print(m, flush=True), model=args.model)
        record(cell, args.note)
        print(json.dumps(cell, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Run inflection sets (Aharoni & Goldberg 2017, tables 1-3) and record them in
``run_scripts/results/inflection.json``.

    python3 run_scripts/run_inflection.py sigmorphon2016 --sets german [--model soft] [--members 5]
        [--aligner levenshtein] [--recipe paper_stopping|per_example|...] [--dev_only] [--work runs] [--jobs 2]

For each set (``inflection_experiments.py``) and the model (``hard``, the default, with the corpus
aligner's oracle unless ``--aligner levenshtein``; or ``soft``): train the members (seeds 1, 2,
...; each within the time budget of ``budgeted_runs.py``, resuming an interrupted one: the same
command again) into ``<work>/<folder>/<collection>/<set>/seed<N>`` (folder: ``inflection_corpus``
for hard with the corpus aligner's oracle, ``inflection`` with Levenshtein's, ``inflection_soft``
for soft), test each on dev, test their majority vote (``--ensemble``, into ``.../ensemble``) on
dev, and predict the set's covered test file with the vote (with one member: that member), copied
to ``run_scripts/results/inflection/<collection>/`` (``inflection_soft`` for soft; the same file
whichever the aligner, so the last run replaces it). One protocol for every set, fixed before
testing: the predictions are always the vote's, never a member chosen by its dev accuracy (which
showed optimism: notes/inflection.md, 2026-11-27). ``--dev_only`` stops after dev (a choice such
as the aligner is made on dev before any test prediction is written). ``--recipe`` trains the hard
model another way (``inflection_experiments.RECIPES``, into a folder of its own), on dev only: a
recipe becomes the protocol's only by winning on dev. ``--jobs 2`` trains two
members at a time, each on a core of its own (``budgeted_runs.in_parallel``).
Recorded: every command, dev accuracy and mean Levenshtein distance, epochs, train and test
seconds, under the model's name (``hard_attention``, ``soft_attention``) and its aligner. Beside
each dev accuracy (each member's, the vote's), ``novel_accuracy``: the accuracy on the dev pairs
whose (lemma, tag bundle) is not in the training file, ``dev_novel_pairs`` of them (a SIGMORPHON
2016 dev pair can be a training pair, a test pair never: for Navajo these are the dev pairs that
look like the test set, notes/inflection.md, 2026-12-06); each member's and the vote's dev
predictions stay in their working directory as ``test_trans_dev.txt`` (``predictions`` in the
record). A set already recorded for the model and aligner is replaced.
"""

import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from budgeted_runs import NMT, in_parallel, job_count, run_test, shown, train_within_budget, training_record, whole_number  # noqa: E402
from inflection_breakdown import accuracy, predicted_forms  # noqa: E402
from inflection_experiments import ALIGNERS, COLLECTIONS, MODELS, ORACLE, SEEDS, TESTING, TRAIN_SECONDS, files  # noqa: E402
from inflection_experiments import RECIPE, RECIPES, aligner_of, predictions_name, recipe_of  # noqa: E402
from inflection_experiments import training_flags  # noqa: E402
from run_experiment import machine  # noqa: E402
from rnnpb_nmt.errors import UserError  # noqa: E402
from rnnpb_nmt.tasks.inflection.task import read_examples  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def scores(stats, command):
    """What a recorded test keeps of its testing_stats.json."""
    return {"accuracy": stats["accuracy"], "mean_levenshtein": stats["mean_levenshtein"],
            "test_seconds": round(stats["testing_time"], 1), "test_command": shown(command)}


def novel_pairs(train, dev):
    """(the dev examples, the indices of those whose lemma and tag bundle are not a training
    example's): the dev pairs like a test set's, which never holds a training pair. A tag bundle is
    its set of tags (their order in the line aside)."""
    seen = {(lemma, frozenset(features)) for lemma, features, _ in read_examples(train)}
    gold = read_examples(dev)
    return gold, [k for k, (lemma, features, _) in enumerate(gold) if (lemma, frozenset(features)) not in seen]


def dev_scores(stats, command, working_dir, novel):
    """``scores`` of a dev test, with the accuracy of its predictions (kept in ``working_dir``) on
    the ``novel`` pairs (``novel_pairs``; None where there are none) and where they are."""
    gold, indices = novel
    kept = os.path.join(working_dir, "test_trans_dev.txt")
    return dict(scores(stats, command), novel_accuracy=accuracy(predicted_forms(gold, kept), gold, indices),
                predictions=shown([kept]))


def testing_command(test_set, working_dir, *flags):
    return [sys.executable, "-u", NMT, *TESTING, *flags, f"--test_set={test_set}", f"--working_dir={working_dir}"]


def run_member(collection, seed, train, dev, working_dir, budget, log, model="hard", aligner="levenshtein", novel=None,
               recipe=RECIPE):
    """Train one member of ``model`` within ``budget`` seconds and test it on dev (``novel``: the
    dev set's ``novel_pairs``, read from the files if not given): its record."""
    command = [sys.executable, "-u", NMT, *training_flags(collection, seed, model, aligner, recipe), f"--train_set1={train}",
               f"--dev_set1={dev}", f"--working_dir={working_dir}"]
    trained = training_record(command, working_dir, train_within_budget(command, working_dir, budget, log), budget)
    tested, novel = testing_command(dev, working_dir), novel or novel_pairs(train, dev)
    return {"seed": seed, **trained, "dev": dev_scores(run_test(tested, working_dir, "dev"), tested, working_dir, novel)}


def run_set(collection, name, data, work, members, budget, log, results=RESULTS, model="hard", aligner="levenshtein",
            dev_only=False, jobs=1, recipe=RECIPE):
    """Train, test and vote one set with ``model`` (a key of MODELS), ``aligner`` and ``recipe``,
    ``jobs`` members at a time; unless ``dev_only``, write the vote's predictions of its covered test
    file; return its cell."""
    train, dev, covered = files(collection, name, data)
    novel = novel_pairs(train, dev)
    folder = MODELS[model]["folder"]
    suffix = ALIGNERS[aligner]["suffix"] + RECIPES[recipe]["suffix"]
    base = os.path.abspath(os.path.join(work, folder + suffix, collection, name))
    member_dirs = [os.path.join(base, f"seed{seed}") for seed in SEEDS[:members]]
    recorded = in_parallel(lambda n: run_member(collection, SEEDS[n], train, dev, member_dirs[n], budget, log, model,
                                                aligner, novel, recipe), range(members), jobs)
    vote_dir, vote, flags = os.path.join(base, "ensemble"), None, []
    if members > 1:
        flags = [f"--ensemble={','.join(member_dirs)}"]
        command = testing_command(dev, vote_dir, *flags)
        vote = dev_scores(run_test(command, vote_dir, "dev"), command, vote_dir, novel)
    cell = {"collection": collection, "set": name, "model": MODELS[model]["name"], "aligner": aligner, "recipe": recipe,
            "members": recorded, "ensemble": vote, "dev_novel_pairs": len(novel[1]), "train_seconds_budget": budget,
            "predictions": None, "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    if dev_only:
        return cell
    working_dir = vote_dir if vote else member_dirs[0]
    command = testing_command(covered, working_dir, *flags)
    stats = run_test(command, working_dir, "test")
    predictions = os.path.join(results, folder, collection, predictions_name(os.path.basename(covered)))
    os.makedirs(os.path.dirname(predictions), exist_ok=True)
    shutil.copy(os.path.join(working_dir, "test_trans_test.txt"), predictions)
    cell["predictions"] = {"file": os.path.relpath(predictions, os.path.dirname(HERE)),
                           "configuration": "ensemble" if vote else "seed1", "lines": stats["sentences"],
                           "test_seconds": round(stats["testing_time"], 1), "test_command": shown(command)}
    return cell


def cell_key(cell):
    """What makes a recorded cell: its set, model, aligner, recipe and whether it predicted the test
    set, so that a dev-only run never replaces a cell's predictions."""
    return cell["collection"], cell["set"], cell["model"], aligner_of(cell), recipe_of(cell), cell["predictions"] is None


def record(cell, note, results=RESULTS):
    """Keep ``cell`` in results/inflection.json, replacing the same set's (model's, aligner's, recipe's) earlier one."""
    path = os.path.join(results, "inflection.json")
    cells = json.load(open(path, encoding="utf-8")) if os.path.isfile(path) else []
    cells = [c for c in cells if cell_key(c) != cell_key(cell)]
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
    parser.add_argument("--aligner", choices=sorted(ALIGNERS),
                        help=f"hard model: the step/write oracle's alignments (nmt.py --aligner; default {ORACLE})")
    parser.add_argument("--recipe", choices=sorted(RECIPES), default=RECIPE,
                        help=f"hard model: how it trains (inflection_experiments.RECIPES; default {RECIPE}, the "
                             "protocol's); another recipe needs --dev_only")
    parser.add_argument("--dev_only", action="store_true",
                        help="train and vote on dev only: no test predictions (choices are made on dev)")
    parser.add_argument("--train_seconds", type=whole_number, default=TRAIN_SECONDS, help="training budget of each model")
    parser.add_argument("--jobs", type=job_count, default=1,
                        help="members trained at once, each pinned to a core of its own (default 1)")
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data", "inflection"))
    parser.add_argument("--work", default="runs", help="parent of the working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    args = parser.parse_args()
    if args.aligner not in (None, "levenshtein") and args.model != "hard":
        parser.error(f"--aligner={args.aligner}: only the hard model reads an oracle (--model=hard)")
    if args.recipe != RECIPE and (args.model != "hard" or not args.dev_only):
        parser.error(f"--recipe={args.recipe}: the hard model only, and with --dev_only (the test predictions "
                     f"are the protocol's, recipe {RECIPE}, until another wins on dev)")
    # The soft model's cells are recorded under the aligner whose folders and flags are none.
    args.aligner = args.aligner or (ORACLE if args.model == "hard" else "levenshtein")
    sets = COLLECTIONS[args.collection]["sets"]
    for name in args.sets or sets:
        if name not in sets:
            parser.error(f"--sets: {name} is not a set of {args.collection} ({', '.join(sets)})")
        try:  # a damaged data or predictions file: one line naming it, not a traceback
            cell = run_set(args.collection, name, os.path.abspath(args.data), args.work, args.members,
                           args.train_seconds, lambda m: print(m, flush=True), model=args.model,
                           aligner=args.aligner, dev_only=args.dev_only, jobs=args.jobs, recipe=args.recipe)
        except UserError as e:
            parser.exit(2, f"{parser.prog}: error: {e}\n")
        record(cell, args.note)
        print(json.dumps(cell, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()

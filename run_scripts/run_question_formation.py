#!/usr/bin/env python3
"""Run question-formation cells (McCoy, Frank & Linzen 2018) and record them in
``run_scripts/results/question_formation.json``.

    python3 run_scripts/run_question_formation.py gru_location lstm_none [--restarts 10] [--work runs] [--jobs 2]
                                                  [--stopping authors|score|perplexity]
                                                  [--recipe layers|adam|sgd|combined|n01|noclip] [--every_restart]

Writes the data once (``data/generate_questions.py``, into ``<work>/question_formation/data``;
the files depend on its flags alone), then for each cell (``question_experiments.py``) trains its
restarts (seeds 1..N, each within the time budget of ``budgeted_runs.py``) into
``<work>/question_formation/<run name>/seed<N>``, the run name saying the protocol
(``question_experiments.run_name``). The default is the main table's (issue 46's one protocol):
``--stopping authors``, the authors' code's criterion (``question_experiments.STOPPING``), and
``--recipe layers``, ours with their decoder input layer and embedding initialisation
(``RECIPES``), into ``<cell>.authors.layers/``. The others stay for the cells recorded under them:
``--stopping score`` (dev full-sentence accuracy once a pass, ``.score`` after the cell's name),
``--stopping perplexity`` (our first protocol, no suffix), ``--recipe adam`` (ours alone, no suffix:
``<cell>.score/`` and ``<cell>/`` are those criteria with it),
``--recipe sgd`` (as the authors' code trained: plain SGD on batches of 5, teacher forcing on half of
them, ``.sgd``), ``combined`` and ``n01`` (each of the layers recipe's two details alone), ``noclip``
(the layers recipe without gradient clipping), ``their_code`` (``sgd`` and ``layers`` with the authors'
initialisation, cut free-running loss and fixed batch order).
The same command again resumes an interrupted
restart and skips a finished one (and its kept tests, unless it trained further or the test command changed).
Each restart is tested on the shared ``question.dev`` and the generator's ``gen`` set (scored:
dev figures) and predicts ``question.test-covered`` and ``question.gen-covered`` (gold withheld).
Recorded per cell: every restart's commands, scores, epochs and seconds, the two medians over the
restarts, and the median restart, whose two prediction files are copied to
``run_scripts/results/question_formation/<run name>.test.tsv`` / ``<run name>.gen.tsv``. With
``--every_restart`` every restart's two files are also copied, to ``<run name>/seed<N>.test.tsv`` /
``.gen.tsv`` in that folder, and named in the restart's record (``predictions``), so that the
withheld scores can be a median over the restarts like the paper's (notes/question_formation.md,
2026-12-06).
A cell already recorded under the same stopping criterion and recipe is replaced; the others are kept.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from budgeted_runs import NMT, generate_once, in_parallel, job_count, run_test, shown  # noqa: E402
from budgeted_runs import train_within_budget, training_record, whole_number  # noqa: E402
from question_experiments import CELLS, GENERATE, MAIN_RECIPE, MAIN_STOPPING, RECIPES, RESTARTS, STOPPING  # noqa: E402
from question_experiments import TESTING, TRAIN_SECONDS, protocol_of, run_name, training_flags  # noqa: E402
from run_experiment import machine  # noqa: E402

RESULTS = os.path.join(HERE, "results")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "data", "question_formation")
# Test name -> the file tested: the generator's (in the data directory) or the shared one.
SCORED = {"dev": ("shared", "question.dev"), "gen": ("generated", "gen.src")}
PREDICTED = {"test": "question.test-covered", "gen": "question.gen-covered"}


def test(test_set, working_dir, name):
    """Test the restart on ``test_set`` as ``name``: what the record keeps of its scores."""
    command = [sys.executable, "-u", NMT, *TESTING, f"--test_set={test_set}", f"--working_dir={working_dir}"]
    stats = run_test(command, working_dir, name)
    kept = {key: value for key, value in stats.items() if key not in ("test_set", "testing_time")}
    return dict(kept, test_seconds=round(stats["testing_time"], 1), test_command=shown(command))


def run_restart(cell, seed, data, shared, working_dir, budget, log, stopping=MAIN_STOPPING, recipe=MAIN_RECIPE):
    """Train one restart within ``budget`` seconds (or resume it, or skip it when finished) and test it."""
    command = [sys.executable, "-u", NMT, *training_flags(cell, seed, stopping, recipe), f"--grammar={shared}/question.gr",
               f"--train_set1={data}/train.src", f"--train_set2={data}/train.tgt", f"--dev_set1={data}/dev.src",
               f"--dev_set2={data}/dev.tgt", f"--working_dir={working_dir}"]
    trained = training_record(command, working_dir, train_within_budget(command, working_dir, budget, log), budget)
    folders = {"shared": shared, "generated": data}
    return {"seed": seed, **trained,
            **{name: test(os.path.join(folders[where], file), working_dir, name)
               for name, (where, file) in SCORED.items()},
            **{f"{name}_covered": test(os.path.join(shared, file), working_dir, f"{name}_covered")
               for name, file in PREDICTED.items()}}


def median_restart(restarts):
    """The restart of median generalization first-word accuracy (the lower of the two middle ones
    for an even number; equal accuracies ordered by dev full-sentence accuracy, then seed)."""
    ordered = sorted(restarts, key=lambda r: (r["gen"]["first_word_accuracy"], r["dev"]["full_sentence_accuracy"],
                                              r["seed"]))
    return ordered[(len(ordered) - 1) // 2]


def medians(restarts):
    """The cell's figures, each the median over its restarts (as the paper's), and its median restart."""
    return {"dev_full_sentence_accuracy": statistics.median(r["dev"]["full_sentence_accuracy"] for r in restarts),
            "gen_first_word_accuracy": statistics.median(r["gen"]["first_word_accuracy"] for r in restarts),
            "restart": median_restart(restarts)["seed"]}


def kept_predictions(working_dir, results, name):
    """Copy a restart's predictions of the covered test and gen files (from ``working_dir``) to
    ``<name>.test.tsv`` and ``<name>.gen.tsv`` under results/question_formation; their paths,
    relative to the repository."""
    kept = {}
    for test_name in PREDICTED:
        path = os.path.join(results, "question_formation", f"{name}.{test_name}.tsv")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy(os.path.join(working_dir, f"test_trans_{test_name}_covered.txt"), path)
        kept[test_name] = os.path.relpath(path, ROOT)
    return kept


def run_cell(cell, restarts, shared, work, budget, log, results=RESULTS, stopping=MAIN_STOPPING, recipe=MAIN_RECIPE,
             jobs=1, every_restart=False):
    """Train and test ``restarts`` restarts of ``cell`` stopped by ``stopping`` and optimised by
    ``recipe``, ``jobs`` at a time; keep its median restart's predictions (and with ``every_restart``
    each restart's, in a folder of the run's name); its record."""
    data = os.path.abspath(os.path.join(work, "question_formation", "data"))
    generated = generate_once("generate_questions.py", [f"--out={data}", f"--data_dir={shared}", *GENERATE],
                              os.path.join(data, "gen.tgt"))
    name = run_name(cell, stopping, recipe)
    base = os.path.abspath(os.path.join(work, "question_formation", name))
    recorded = in_parallel(lambda seed: run_restart(cell, seed, data, shared, os.path.join(base, f"seed{seed}"), budget,
                                                    log, stopping, recipe), range(1, restarts + 1), jobs)
    middle = medians(recorded)
    predictions = kept_predictions(os.path.join(base, f"seed{middle['restart']}"), results, name)
    for restart in recorded if every_restart else ():
        seed = f"seed{restart['seed']}"
        restart["predictions"] = kept_predictions(os.path.join(base, seed), results, os.path.join(name, seed))
    return {"cell": cell, "stopping": stopping, "recipe": recipe, "generate_command": shown(generated),
            "train_seconds_budget": budget,
            "restarts": recorded, "median": middle, "predictions": predictions, "machine": machine(),
            "date": time.strftime("%Y-%m-%d")}


def record(cell, note, results=RESULTS):
    """Keep ``cell`` in results/question_formation.json, replacing the same cell's earlier one
    under the same stopping criterion and recipe."""
    path = os.path.join(results, "question_formation.json")
    cells = json.load(open(path)) if os.path.isfile(path) else []
    cells = [c for c in cells if (c["cell"], protocol_of(c)) != (cell["cell"], protocol_of(cell))]
    with open(path, "w") as f:
        json.dump([*cells, dict(cell, note=note)], f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cells", nargs="+", choices=list(CELLS), metavar="CELL",
                        help=f"cells to run: {', '.join(CELLS)}")
    parser.add_argument("--restarts", type=whole_number, default=RESTARTS, help="restarts per cell (seeds 1..N)")
    parser.add_argument("--train_seconds", type=whole_number, default=TRAIN_SECONDS, help="training budget of each restart")
    parser.add_argument("--jobs", type=job_count, default=1,
                        help="restarts trained at once, each pinned to a core of its own (default 1)")
    parser.add_argument("--stopping", choices=list(STOPPING), default=MAIN_STOPPING,
                        help="what chooses a restart's best epoch and stops it: the authors' code's criterion "
                             "(authors, the main table's: the dev full-sentence accuracy every 5000 pairs, patience 3, "
                             "no stop before 150 000 pairs), the same accuracy once a pass (score), or the dev "
                             "perplexity (our first protocol)")
    parser.add_argument("--recipe", choices=list(RECIPES), default=MAIN_RECIPE,
                        help="how a restart is trained: Adam on batches of 128 with the authors' decoder input "
                             "layer and N(0, 1) embeddings (layers, the main table's), the same without gradient "
                             "clipping (noclip), or with one of the two (combined, n01), Adam alone (adam, ours), or as "
                             "the authors' code (sgd: plain SGD on batches of 5, teacher forcing on half of them)")
    parser.add_argument("--every_restart", action="store_true",
                        help="keep every restart's test and gen predictions (in results/question_formation/<run name>/), "
                             "not only the median restart's")
    parser.add_argument("--data", default=SHARED, help="the shared question-formation sets (default: %(default)s)")
    parser.add_argument("--work", default="runs", help="parent of the data and working directories")
    parser.add_argument("--note", default="", help="the conditions of the run, e.g. other load on the machine")
    args = parser.parse_args()
    missing = [name for name in ("question.gr", "question.dev", *PREDICTED.values())
               if not os.path.isfile(os.path.join(args.data, name))]
    if missing:
        parser.error(f"--data={args.data}: no {', '.join(missing)}")
    for cell in args.cells:
        recorded = run_cell(cell, args.restarts, os.path.abspath(args.data), args.work, args.train_seconds,
                            lambda m: print(m, flush=True), stopping=args.stopping, recipe=args.recipe, jobs=args.jobs,
                            every_restart=args.every_restart)
        record(recorded, args.note)
        print(json.dumps(recorded), flush=True)


if __name__ == "__main__":
    main()

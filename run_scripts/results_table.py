#!/usr/bin/env python3
"""Write ``run_scripts/results/README.md`` from the results JSON files, so that every figure in it
is one a run recorded (``run_experiment.py``); rows not run yet say so."""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from experiments import EXPERIMENTS  # noqa: E402
from inflection_experiments import COLLECTIONS, MODELS  # noqa: E402
from inflection_experiments import PAPER as INFLECTION_PAPER  # noqa: E402
from question_experiments import CELLS, MAIN_STOPPING, TRAIN_SECONDS, stopping_of  # noqa: E402
from question_experiments import PAPER as QUESTION_PAPER  # noqa: E402
from transduction_experiments import PAPER, TASKS  # noqa: E402


def fmt(x, digits=0):
    return "–" if x is None else f"{x:.{digits}f}"


def model_name(spec):
    flags = spec["flags"]
    if "--model=encdec" not in flags:
        return "bound RNNPB"
    attention = next((f.split("=")[1] for f in flags if f.startswith("--attention=")), "none")
    return "seq2seq" if attention == "none" else f"seq2seq + {attention} attention"


def speedup(thesis_seconds, our_seconds, spec):
    """The thesis's seconds over ours ("–" for a row the thesis did not run)."""
    return "–" if thesis_seconds is None else f"{thesis_seconds / max(our_seconds, 1):{spec}}×"


def table(experiment, rows):
    done = {r["name"]: r for r in rows}
    lines = [f"### {experiment}", "",
             "| row | data | model | BLEU (ours) | BLEU (thesis) | epochs (ours / thesis) | best epoch | "
             "train s (ours / thesis V100) | train speed-up | test s (ours / thesis) | test speed-up |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for spec in EXPERIMENTS[experiment]:
        t = spec["thesis"] or {}  # empty: a row the thesis did not run
        r = done.get(spec["name"])
        if r is None:
            lines.append(f"| {spec['name']} | {spec['folder']} | {model_name(spec)} | not run yet | "
                         f"{fmt(t.get('bleu'), 2)} | – / {fmt(t.get('epochs'))} | – | – / "
                         f"{fmt(t.get('train_seconds'))} | – | – / {fmt(t.get('test_seconds'))} | – |")
            continue
        lines.append(f"| {spec['name']} | {spec['folder']} | {model_name(spec)} | **{r['bleu']:.2f}** | "
                     f"{fmt(t.get('bleu'), 2)} | {r['epochs']} / {fmt(t.get('epochs'))} | {r['best_epoch']} | "
                     f"{r['train_seconds']} / {fmt(t.get('train_seconds'))} | "
                     f"{speedup(t.get('train_seconds'), r['train_seconds'], '.2g')} | "
                     f"{r['test_seconds']} / {fmt(t.get('test_seconds'))} | "
                     f"{speedup(t.get('test_seconds'), r['test_seconds'], '.0f')} |")
    lines.append("")
    for spec in EXPERIMENTS[experiment]:
        r = done.get(spec["name"])
        if r:
            thesis_ppl = (spec["thesis"] or {}).get("dev_perplexity")
            lines += [f"`{spec['name']}` ({r['date']}, {r['machine']}): best dev perplexity "
                      f"{r['best_dev_perplexity']:.2f}" + (f" (thesis {thesis_ppl:.2f})" if thesis_ppl else "")
                      + f", detokenized sacreBLEU {r['bleu_detokenized']:.2f}." + (f" {r['note']}." if r.get("note") else ""),
                      "", "```", r["train_command"], r["test_command"], "```", ""]
    return lines


# benchmark.py keys, what issue 4 asks of them, and whether a value meets it.
TARGETS = [("recognition_batched_speedup", "≥ 5", lambda v: v >= 5),
           ("recognition_max_pb_diff", "< 1e-4", lambda v: v < 1e-4),
           ("train_step_ratio_vs_lstm_lm", "≤ 1.25", lambda v: v <= 1.25),
           ("beam_batched_speedup", "–", None),
           ("test_seconds_per_1000_sentences", "≤ 312 (1/100 of the thesis's 62 438 s per 2000)", lambda v: v <= 312.19),
           *[(f"train_step_ratio_{name}_vs_lstm2", "≤ 3 (issue 17)", lambda v: v <= 3)
             for name in ("stack_lstm", "queue_lstm", "deque_lstm")],
           ("hard_attention_test_characters_per_second", "– (issue 19: reported)", None),
           *[(f"translation_seconds_per_1000_{name}", "– (issue 16: measured side by side)", None)
             for name in ("bound", "seq2seq")],
           ("translation_cost_ratio_bound_vs_seq2seq", "–", None)]


def accuracies(scores):
    """coarse / fine on training-length, then on longer test sequences."""
    return " | ".join(f"{scores[i]:.2f} / {scores[i + 1]:.2f}" for i in (0, 2))


def transduction_table(cells):
    """Figure 2a of Grefenstette et al. 2015 beside our cells (``run_transduction.py``): per task,
    the Deep LSTM of the paper's best depth and the three memory LSTMs."""
    done = {(c["task"], c["model"]): c for c in cells}
    lines = ["### Transduction (Grefenstette et al. 2015, Figure 2a)", "",
             "Coarse / fine accuracy (§4.3) on 1000 test sequences of the training lengths (8-64) and on 1000",
             "longer ones (65-128); greedy decoding. The paper's Deep LSTM row is its best depth of 1, 2, 4 and 8",
             "layers; ours is the same depth. See `run_scripts/transduction_experiments.py` for how our",
             "settings differ from the paper's (hidden size, optimiser, training sample, a 30-minute budget).", "",
             "| task | model | ours: training lengths | ours: longer | paper: training lengths | paper: longer | "
             "epochs (best) | train s | test s (both sets) |", "|---|---|---|---|---|---|---|---|---|"]
    for task in TASKS:
        for model, paper in PAPER[task].items():
            c = done.get((task, model))
            ours = "not run yet | –" if c is None else " | ".join(
                f"**{c[key]['coarse']:.2f}** / {c[key]['fine']:.2f}" for key in ("training_lengths", "longer"))
            run = "– | – | –" if c is None else (
                f"{c['epochs']} ({c['best_epoch']}){', stopped by the time budget' if c.get('stopped') == 'time budget' else ''}"
                f" | {c['train_seconds']} | "
                f"{c['training_lengths']['test_seconds'] + c['longer']['test_seconds']}")
            lines.append(f"| {task} | {model} | {ours} | {accuracies(paper)} | {run} |")
    lines.append("")
    for c in cells:
        restarts = c.get("restarts", [])
        lines += [f"`{c['task']}` × `{c['model']}` ({c['date']}, {c['machine']}): best dev perplexity "
                  f"{c['best_dev_perplexity']:.3f}. {c['note']}{restarts_sentence(c)}", "", "```",
                  c["generate_command"], *([r["train_command"] for r in restarts] or [c["train_command"]]),
                  c["training_lengths"]["test_command"], c["longer"]["test_command"], "```", ""]
    return lines


def restarts_sentence(cell):
    """The runs of a cell trained from several seeds (``run_transduction.py --seeds``), and which
    one the paper's criterion kept; empty for a cell of one run."""
    if "restarts" not in cell:
        return ""
    runs = "; ".join(f"seed {r['seed']}: {r['train_perplexity']:.2f} (dev {r['best_dev_perplexity']:.2f}, "
                     f"best epoch {r['best_epoch']} of {r['epochs']}, {r['train_seconds']} s)" for r in cell["restarts"])
    return (f" Runs from {len(cell['restarts'])} seeds, training perplexity at the best epoch (the paper kept the "
            f"lowest): {runs}; kept: seed {cell['kept_seed']}, the one tested.")


def percent(x):
    return "–" if x is None else f"{100 * x:.2f}"


def inflection_table(cells):
    """Tables 1-3 of Aharoni & Goldberg 2017 beside our sets (``run_inflection.py``): per set a row
    for each of the paper's models (hard attention, the soft baseline) with the first model's and
    the vote's dev accuracy, the paper's test accuracy of that model, and the run's figures; per
    collection and model the average over the sets recorded."""
    done = {(c["collection"], c["set"], c["model"]): c for c in cells}
    lines = ["### Morphological inflection (Aharoni & Goldberg 2017, tables 1-3), hard and soft attention", "",
             "Exact-match accuracy (%) on **dev** (ours) beside the paper's **test** accuracy of its 5-model",
             "ensembles (the test gold is withheld: our test predictions are in `results/inflection/` (hard) and",
             "`results/inflection_soft/` (soft), scored outside the project). Single: the first model (seed 1);",
             "vote: the majority vote of all the set's models. See `run_scripts/inflection_experiments.py` for",
             "how our training differs from the paper's.", ""]
    for collection, spec in COLLECTIONS.items():
        paper = INFLECTION_PAPER[collection]
        lines += [f"#### {collection}", "",
                  "| set | model | single | vote (models) | paper (that model) | mean Levenshtein (vote, else single) | "
                  "epochs (best) per model | train s per model | predictions of |", "|---|" + "---|" * 8]
        ours = {kind: [] for kind in MODELS}
        for name in spec["sets"]:
            for kind, model in MODELS.items():
                lines.append(inflection_row(done.get((collection, name, model["name"])), name, kind,
                                            fmt(paper.get(kind, {}).get(name), 2), ours[kind]))
        for kind in MODELS:
            recorded = ours[kind]
            average = f"{percent(sum(recorded) / len(recorded))} ({len(recorded)} of {len(spec['sets'])} sets)" \
                if recorded else "–"
            lines.append(f"| average | {kind} | | {average} | | | | | |")
        others = ", ".join(f"{system} {value:.2f}" for system, value in paper["average"].items())
        lines += ["", f"Paper's averages: {others or '–'}. \\* stopped by the time budget. Average of ours: the "
                  "vote's (the single model's where there is no vote).", ""]
    for c in cells:
        commands = [m["train_command"] for m in c["members"]] + [m["dev"]["test_command"] for m in c["members"]]
        commands += ([c["ensemble"]["test_command"]] if c["ensemble"] else []) + [c["predictions"]["test_command"]]
        lines += [f"`{c['collection']}` `{c['set']}` ({c['model']}, {c['date']}, {c['machine']}): "
                  f"{c['predictions']['lines']} test predictions in `{c['predictions']['file']}`. {c['note']}", "",
                  "```", *commands, "```", ""]
    return lines


def inflection_row(c, name, kind, paper, ours):
    """The table row of one set's cell ``c`` (None: not run) of model ``kind``; appends the
    accuracy it counts in the average to ``ours``."""
    if c is None:
        return f"| {name} | {kind} | not run yet | – | {paper} | – | – | – | – |"
    vote, single = c["ensemble"] or {}, c["members"][0]["dev"]
    ours.append(vote.get("accuracy", single["accuracy"]))
    voted = f"**{percent(vote['accuracy'])}**" if vote else "–"
    runs = ", ".join(f"{m['epochs']} ({m['best_epoch']})" + ("*" if m["stopped"] == "time budget" else "")
                     for m in c["members"])
    return (f"| {name} | {kind} | {percent(single['accuracy'])} | "
            f"{voted} ({len(c['members'])}) | {paper} | "
            f"{fmt(vote.get('mean_levenshtein', single['mean_levenshtein']), 3)} | {runs} | "
            f"{', '.join(str(m['train_seconds']) for m in c['members'])} | {c['predictions']['configuration']} |")


def question_formation_table(cells):
    """McCoy, Frank & Linzen 2018's medians beside our cells (``run_question_formation.py``): per
    cell the medians over its restarts of full-sentence accuracy on a set drawn like the test set
    and of first-word accuracy on the generalization set, and the minutes one restart trained; the
    main table's stopping criterion first, then the cells stopped by another."""
    lines = ["### Question formation (McCoy, Frank & Linzen 2018), seq-to-seq with attention", "",
             "Medians over a cell's restarts (seeds 1..N) of full-sentence accuracy and of generalization first-word",
             "accuracy (is the main auxiliary in front?). Ours are **dev** figures: the shared `question.dev` (drawn",
             "like the test set) and the generator's own generalization set; the paper's are test and generalization",
             "figures, medians over 100 restarts. The test and generalization gold is withheld: the median restart's",
             "predictions (by generalization first-word accuracy) are in `results/question_formation/`, scored",
             "outside the project. See `run_scripts/question_experiments.py` for our settings and the time budget:",
             f"a restart trains at most {TRAIN_SECONDS // 60} minutes; the table gives each cell's minutes and epochs, and",
             "marks the restarts the budget stopped. Each restart's best epoch is the first of its best dev",
             "full-sentence accuracy (1 epoch's patience), as the authors' code stopped.", "", *QUESTION_HEADER]
    lines += question_rows(cells, MAIN_STOPPING, with_missing=True)
    by_perplexity = question_rows(cells, "perplexity")
    if by_perplexity:
        lines += ["", "Cells stopped on the dev perplexity (`run_question_formation.py --stopping perplexity`, our first",
                  "protocol): the best epoch is that of the best dev perplexity, 2 epochs' patience.", "",
                  *QUESTION_HEADER, *by_perplexity]
    lines += ["", "\\* stopped by the time budget.", ""]
    for c in sorted(cells, key=lambda c: (stopping_of(c) != MAIN_STOPPING, list(CELLS).index(c["cell"]))):
        median = next(r for r in c["restarts"] if r["seed"] == c["median"]["restart"])
        tests = [median[name]["test_command"] for name in ("dev", "gen", "test_covered", "gen_covered")]
        lines += [f"`{c['cell']} (--stopping {stopping_of(c)})` ({c['date']}, {c['machine']}): predictions of its median "
                  f"restart in `{c['predictions']['test']}` and `{c['predictions']['gen']}`. {c['note']}", "",
                  "```", c["generate_command"], *[r["train_command"] for r in c["restarts"]], *tests, "```", ""]
    return lines


QUESTION_HEADER = ["| cell | restarts | ours: dev full-sentence | ours: gen first-word (dev) | paper: test full-sentence | "
                   "paper: gen first-word | minutes per restart: training (median, max) | epochs (best) per restart | "
                   "median restart |", "|---|" + "---|" * 8]


def question_rows(cells, stopping, with_missing=False):
    """The table rows of the cells recorded under ``stopping``, in the paper's order (``with_missing``:
    also those not run yet)."""
    done = {c["cell"]: c for c in cells if stopping_of(c) == stopping}
    return [question_row(name, done.get(name)) for name in CELLS if with_missing or name in done]


def question_row(name, c):
    """The table row of cell ``name``, recorded as ``c`` (None: not run yet)."""
    paper = " | ".join(fmt(x, 3) for x in QUESTION_PAPER[name])
    if c is None:
        return f"| {name} | not run yet | – | – | {paper} | – | – | – |"
    minutes = [r["train_seconds"] / 60 for r in c["restarts"]]
    runs = ", ".join(f"{r['epochs']} ({r['best_epoch']})" + ("*" if r["stopped"] == "time budget" else "")
                     for r in c["restarts"])
    return (f"| {name} | {len(c['restarts'])} | **{fmt(c['median']['dev_full_sentence_accuracy'], 3)}** | "
            f"**{fmt(c['median']['gen_first_word_accuracy'], 3)}** | {paper} | "
            f"{fmt(statistics.median(minutes), 1)} ({fmt(max(minutes), 1)}) | {runs} | seed{c['median']['restart']} |")


def benchmark_table(recorded):
    lines = ["### Speed benchmark (`run_scripts/benchmark.py`)", "",
             "| key | " + " | ".join(recorded) + " | target (thesis sizes, judged on the `full` modes only) |",
             "|---|" + "---|" * len(recorded) + "---|"]
    for key, target, meets in TARGETS:
        cells = []
        for mode, run in recorded.items():
            v = run["results"].get(key)
            judged = meets is not None and mode.startswith("full")  # the targets are for the thesis's sizes
            cells.append("–" if v is None else f"{v:.3g}" + ((" ✓" if meets(v) else " ✗") if judged else ""))
        lines.append(f"| `{key}` | " + " | ".join(cells) + f" | {target} |")
    lines.append("")
    for mode, run in recorded.items():
        lines += [f"`{mode}` ({run['date']}, commit {run['commit']}, {run['machine']}): `{run['command']}`. {run['note']}", ""]
    return lines


def main():
    out = ["# Thesis reproductions", "",
           "Generated by `run_scripts/results_table.py` from the JSON files beside it, which",
           "`run_scripts/run_experiment.py EXPERIMENT --rows NAME` writes. *Ours* columns are runs made with",
           "this code on the machine named under each table; *thesis* columns are the thesis's own figures",
           "(SPEC §8: training on a V100, testing on a CPU, one sentence at a time). Times are wall-clock",
           "seconds; train time is the whole run including the epochs after the best one. A speed-up is the",
           "thesis's seconds divided by ours: above 1, our 2-core CPU was faster than the thesis's GPU",
           "(training) or its one-sentence-at-a-time CPU testing.", ""]
    for experiment in EXPERIMENTS:
        path = os.path.join(HERE, "results", f"{experiment}.json")
        rows = json.load(open(path)) if os.path.isfile(path) else []
        out += table(experiment, rows)
    path = os.path.join(HERE, "results", "transduction.json")
    out += transduction_table(json.load(open(path)) if os.path.isfile(path) else [])
    path = os.path.join(HERE, "results", "inflection.json")
    out += inflection_table(json.load(open(path, encoding="utf-8")) if os.path.isfile(path) else [])
    path = os.path.join(HERE, "results", "question_formation.json")
    out += question_formation_table(json.load(open(path)) if os.path.isfile(path) else [])
    path = os.path.join(HERE, "results", "benchmark.json")
    if os.path.isfile(path):
        out += benchmark_table(json.load(open(path)))
    with open(os.path.join(HERE, "results", "README.md"), "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()

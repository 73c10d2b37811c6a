#!/usr/bin/env python3
"""Run thesis experiments and record what they measured in ``run_scripts/results/<experiment>.json``.

    python3 run_scripts/run_experiment.py exp1_autoencode --rows rnnpb20000 [--data ../shared/data]

Each row trains with the thesis's command line, tests on the 2000-sentence test set, and records
the commands, test BLEU, best dev perplexity, epochs, best epoch, train and test seconds and the
machine. A row already in the results file is replaced; other rows are kept.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
from budgeted_runs import last_line  # noqa: E402
import experiments  # noqa: E402
from experiments import EXPERIMENTS, TESTING, TRAINING, promoted  # noqa: E402
from rnnpb_nmt import registry  # noqa: E402
from rnnpb_nmt.data.files import write_text  # noqa: E402
from rnnpb_nmt.infer import prediction  # noqa: E402
from rnnpb_nmt.metrics import bleu  # noqa: E402
from rnnpb_nmt.run_stats import load_stats  # noqa: E402
from rnnpb_nmt.train import loop as training  # noqa: E402
from rnnpb_nmt.train import workdir  # noqa: E402

NMT = os.path.join(os.path.dirname(HERE), "nmt.py")
COPIED = "copied_from_trial.txt"  # in a final row's working directory that started as its trial's copy


def machine():
    """The CPU and its cores, and the GPUs TensorFlow trains on (tests run with --device=cpu)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return f"{cpu}, {os.cpu_count()} cores, CPU only"
    name = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
    return f"{cpu}, {os.cpu_count()} cores, {len(gpus)} x {name}"


def raw_copy(folder, out, languages):
    """The files of a tokenized data ``folder`` Moses-detokenized into ``out`` (once): raw text, for
    a row that prepares its own (``raw=True``). Returns ``out``."""
    from sacremoses import MosesDetokenizer

    os.makedirs(out, exist_ok=True)
    for part in ("train", "dev", "test"):
        for language in languages:
            target = os.path.join(out, f"{part}.{language}")
            if os.path.isfile(target):
                continue
            detokenizer = MosesDetokenizer(lang=language)
            with open(os.path.join(folder, f"{part}.{language}"), encoding="utf-8") as f:
                lines = [detokenizer.detokenize(line.split()) for line in f]
            write_text(target, "".join(line + "\n" for line in lines))
    return out


OPEN = "open_"  # the prefix of an open-vocabulary test's name and of its files


def commands(row, data, working_dir):
    """(training command, [(test name, test command)]): a row is tested source -> target, and a
    reversible row (``reverse_test``) also target -> source from the same model."""
    d = os.path.join(data, row["folder"])
    source, target = row.get("source", "en"), row["target"]
    if row.get("raw"):
        d = raw_copy(d, os.path.join(os.path.dirname(os.path.dirname(working_dir)), "raw_data", row["folder"]),
                     sorted({source, target}))
    files = [f"--train_set1={d}/train.{source}", f"--train_set2={d}/train.{target}",
             f"--dev_set1={d}/dev.{source}", f"--dev_set2={d}/dev.{target}"]
    train = [sys.executable, "-u", NMT, *row.get("training", TRAINING), *row["flags"], *files,
             f"--working_dir={working_dir}"]
    test = [sys.executable, "-u", NMT, *TESTING, *row["test_flags"], f"--working_dir={working_dir}"]
    tests = [("forward", [*test, f"--test_set={d}/test.{source}"])]
    if row.get("reverse_test"):
        tests.append(("reverse", [*test, "--reverse_translation", f"--test_set={d}/test.{target}"]))
    if row.get("open_test"):  # the same model on another test set, first: its files are then renamed
        o = os.path.join(data, row["open_test"])  # (OPEN), and the row's own tests write theirs after
        tests = [(OPEN + name, [*command[:-1], command[-1].replace(f"{d}/", f"{o}/")]) for name, command in tests] + tests
    return train, tests, analyses(d, source, target, working_dir) if row.get("analyze") else []


# An analysed row is analysed on the forward test set (with its reference) and on the dev set, where
# choices are made (e.g. a binding strength by bitext retrieval): part -> (folder, prefix of its figures).
ANALYSES = {"test": ("analysis", ""), "dev": ("analysis_dev", "dev_")}


def analyses(d, source, target, working_dir):
    """[(part, --analyze command)] for ANALYSES' parts, of the data in folder ``d``."""
    files = {"test": [f"--test_set={d}/test.{source}"], "dev": [f"--test_set={d}/dev.{source}",
                                                                f"--test_ref={d}/dev.{target}"]}
    return [(part, [sys.executable, "-u", NMT, "--analyze", "--device=cpu", f"--working_dir={working_dir}",
                    f"--analysis_dir={os.path.join(working_dir, folder)}", *files[part]])
            for part, (folder, _) in ANALYSES.items()]


def analyze(parts, working_dir, log):
    """Run ``parts`` ([(part, command)]); the record's figures of each (bitext retrieval) and its command."""
    found = {}
    for part, command in parts:
        folder, prefix = ANALYSES[part]
        log(" ".join(command))
        with open(os.path.join(working_dir, f"analyze_log{'_' + part if prefix else ''}.txt"), "w") as out:
            run_logged(command, out, os.path.basename(working_dir), f"its {part} analysis")
        with open(os.path.join(working_dir, folder, "summary.json")) as f:
            summary = json.load(f)
        found.update({prefix + k: round(v, 4) for k, v in summary.items() if k.startswith("retrieval_")})
        found[f"{prefix}analyze_command"] = _relative(command)
    return found


def run_row(row, data, working_dir, log, epochs=None):
    """Train (or resume an interrupted training), test (and analyse) one row; a tuning trial
    (``tune``) is trained only, to ``epochs`` (its rung) or under its full schedule: the test set
    decides nothing."""
    train, tests, to_analyze = commands(row, data, working_dir)
    if row.get("tune"):
        tests, to_analyze = [], []
    if epochs:
        train.append(f"--max_epochs={epochs}")
    os.makedirs(working_dir, exist_ok=True)
    with open(os.path.join(working_dir, "train_log.txt"), "a") as out:
        if needs_training(working_dir, epochs or (_cap(row) if row.get("tune") else None)):
            log(" ".join(train))
            run_logged(train, out, row["name"], "training")
    tested = {}
    for name, test in tests:  # the reverse test writes its own files (prediction.outputs)
        with open(os.path.join(working_dir, f"test_log_{name}.txt" if len(tests) > 1 else "test_log.txt"), "w") as out:
            log(" ".join(test))
            run_logged(test, out, row["name"], "testing")
        tested[name] = test_result(row, data, working_dir, test, reverse=name.endswith("reverse"),
                                   folder=row["open_test"] if name.startswith(OPEN) else row["folder"])
    return {**summarize(row, working_dir, train, tested), **analyze(to_analyze, working_dir, log)}


def run_logged(command, out, name, what):
    """Run ``command`` with its output appended to the open file ``out``; if it fails, exit with one
    line naming the row, the step and the log's last line (nmt.py's one-line error), not a traceback."""
    if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode == 0:
        return
    out.flush()
    sys.exit(f"run_experiment.py: {name}: {what} failed: {last_line(out.name) or '(no output)'} (the log: {out.name})")


def _cap(row):
    """The --max_epochs of ``row``'s schedule (its last, as the command line reads it)."""
    return [int(f.split("=", 1)[1]) for f in row["flags"] if f.startswith("--max_epochs=")][-1]


def needs_training(working_dir, epochs=None):
    """Whether ``working_dir`` holds no run, or one that neither stopped early nor reached
    ``epochs`` (default: its own --max_epochs)."""
    if not workdir.is_trained(working_dir):
        return True
    config = workdir.load_config(working_dir, registry.models())
    return not training.is_finished(load_stats(working_dir), config.replace(max_epochs=epochs) if epochs else config)


def _relative(command):
    return " ".join(os.path.relpath(c) if os.path.isabs(c) and os.path.exists(c) else c for c in command)


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f]


def unseen_bleu(test_set, train_set, translations, references):
    """BLEU (multi-bleu, tokenized) on the test sentences whose source is not a training sentence,
    and how many there are: what the model does on sentences it cannot have memorised."""
    seen = set(_lines(train_set))
    keep = [i for i, line in enumerate(_lines(test_set)) if line not in seen]
    hypotheses, refs = _lines(translations), _lines(references)
    return bleu([hypotheses[i] for i in keep], [refs[i] for i in keep]), len(keep)


def test_result(row, data, working_dir, test, reverse, folder):
    """One test's figures, read from what it wrote (on the test set of data ``folder``); an
    open-vocabulary test's files are then renamed with the prefix OPEN, so that the row's own
    test's stay as they were."""
    translations, stats = (os.path.join(working_dir, name) for name in prediction.outputs(reverse))
    if folder != row["folder"]:
        for path in (translations, stats):
            os.replace(path, os.path.join(working_dir, OPEN + os.path.basename(path)))
        translations, stats = (os.path.join(working_dir, OPEN + os.path.basename(p)) for p in (translations, stats))
    with open(stats) as f:
        testing = json.load(f)
    d = os.path.join(data, row["folder"])
    source, target = row.get("source", "en"), row["target"]
    if reverse:
        source, target = target, source
    found = {"bleu": round(testing["bleu"], 2), "bleu_detokenized": round(testing["bleu_detokenized"], 2),
             "sacrebleu_signature": testing.get("sacrebleu_signature"), "test_seconds": round(testing["testing_time"]),
             "test_command": _relative(test)}
    if "bleu_by_source_length" in testing:  # the test's BLEU by the source's length in words (tasks/translation)
        found["bleu_by_length"] = {name: {"sentences": b["sentences"], "bleu": round(b["bleu"], 2)}
                                   for name, b in testing["bleu_by_source_length"].items()}
    if not row.get("raw"):  # the unseen subset is read from the tokenized files
        t = os.path.join(data, folder)
        score, count = unseen_bleu(f"{t}/test.{source}", f"{d}/train.{source}", translations, f"{t}/test.{target}")
        found.update(bleu_unseen=round(score, 2), unseen_sentences=count)
    return found


def parameters(working_dir):
    """The number of trained numbers of the model (each shared variable once; PB tables count)."""
    model = workdir.load_model(working_dir, registry.models())
    return int(sum(np.prod(v.shape) for v in {id(v): v for v in model.trainable_variables}.values()))


def summarize(row, working_dir, train, tested):
    """The results row of a trained and tested working directory: the forward test's figures at
    the top level (as the thesis rows have always had them), a reverse test's under ``reverse``."""
    with open(os.path.join(working_dir, "training_stats.json")) as f:
        training = json.load(f)
    flags = row["flags"]
    model = next((f.split("=", 1)[1] for f in flags if f.startswith("--model=")), "rnnpbnmt")
    result = {"name": row["name"], "dataset": row["folder"], "model": model,
              "train_command": _relative(train), **tested.get("forward", {}),
              "best_dev_perplexity": training["best_dev_perplexity"], "epochs": len(training["epochs"]),
              "best_epoch": training["best_epoch"], "train_seconds": round(training["total_seconds"]),
              "machine": machine(), "date": time.strftime("%Y-%m-%d"), "thesis": row["thesis"],
              **({"note": row["note"]} if row.get("note") else {})}
    for key in ("config", "seed", "source", "target", "trial", "point", "selected_by"):
        if key in row:
            result[key] = row[key]
    chosen = next((e for e in training["epochs"] if e["epoch"] == training["best_epoch"]), {})
    if "dev_score" in chosen:  # --early_stopping_metric=score chose the epoch
        result["best_dev_score"] = round(chosen["dev_score"], 4)
        # best_dev_perplexity is then the chosen epoch's; this is the lowest of any measured epoch.
        measured = [e["dev_perplexity"] for e in training["epochs"] if e.get("dev_perplexity") is not None]
        result["lowest_dev_perplexity"] = min(measured)
    if row.get("tune"):
        result.update(tuning_figures(row, training, working_dir))
    if "config" in row:  # issue 47's rows: sizes are part of the comparison
        result["parameters"] = parameters(working_dir)
    if "reverse" in tested:
        result["reverse"] = tested["reverse"]
    if row.get("open_test"):
        result["open_test"] = {"folder": row["open_test"], **{name[len(OPEN):]: figures for name, figures
                                                             in tested.items() if name.startswith(OPEN)}}
    return result


def tuning_figures(row, training, working_dir):
    """A tuning trial's dev BLEU within its rung (the best of its first ``rung`` epochs, what
    promotes it) and whether it has finished the full schedule (what makes it a finalist)."""
    scores = [e["dev_score"] for e in training["epochs"] if e["epoch"] <= row["rung"] and "dev_score" in e]
    found = {"rung": row["rung"], "full_schedule": not needs_training(working_dir, _cap(row))}
    if len(training["epochs"]) >= row["rung"] or found["full_schedule"]:  # a run may stop early before it
        found["rung_dev_score"] = round(max(scores), 4)
    return found


def records(experiment):
    return experiments.records(experiment, os.path.join(HERE, "results"))


def record(experiment, result):
    """Replace ``result``'s row in the experiment's results file where it stands (or add it at the
    end), the other rows kept."""
    rows = records(experiment)
    names = [r["name"] for r in rows]
    if result["name"] in names:
        rows[names.index(result["name"])] = result
    else:
        rows.append(result)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    write_text(os.path.join(HERE, "results", f"{experiment}.json"), json.dumps(rows, indent=2, ensure_ascii=False) + "\n")


def add_dev_analysis(experiment, row, data, working_dir, log):
    """The recorded ``row`` with the dev set's analysis added (its model neither retrained nor
    retested): for rows recorded before the dev set was analysed."""
    found = next((r for r in records(experiment) if r["name"] == row["name"]), None)
    if found is None or not row.get("analyze"):
        raise SystemExit(f"--dev_analysis: {row['name']} is not a recorded row with an analysis")
    dev = [(part, command) for part, command in commands(row, data, working_dir)[2] if part == "dev"]
    return {**found, **analyze(dev, working_dir, log)}


def add_refine_sweep(experiment, row, data, working_dir, steps, load=None):
    """The recorded ``row`` with ``refine_sweep``: its dev BLEU (multi-bleu, tokenized, the beam it
    was trained with) each way it translates, with each of ``steps`` refinement steps of the PB at
    test time (its model neither retrained nor retested): does recognition by more gradient steps
    than training used translate better? ``load``: ``rnnpb_nmt.load`` (a test's stand-in)."""
    found = next((r for r in records(experiment) if r["name"] == row["name"]), None)
    if found is None:
        raise SystemExit(f"--refine_sweep: {row['name']} is not a recorded row")
    if load is None:
        from rnnpb_nmt import load
    from rnnpb_nmt.errors import UserError
    dev = os.path.join(data, row["folder"], "dev.{}")
    source, target = row.get("source", "en"), row["target"]
    sweep = {}
    for k in steps:
        try:
            model = load(working_dir, refine_steps=k)
        except UserError as e:
            raise SystemExit(f"--refine_sweep: {row['name']}: {e}") from None
        flat = model.config.to_flat()
        if flat.get("amortize", "none") == "none":
            raise SystemExit(f"--refine_sweep: {row['name']} is not an amortised bound model (--amortize)")
        ways = [(False, source, target)] + ([(True, target, source)] if flat["both_directions"] else [])
        sweep[str(k)] = {f"{a}→{b}": round(dev_bleu(model, dev.format(a), dev.format(b), b, reverse), 2)
                         for reverse, a, b in ways}
    return {**found, "refine_sweep": sweep}


def dev_bleu(model, sources, references, target, reverse):
    """A loaded model's BLEU on the files ``sources`` -> ``references`` as training's dev score and
    ``nmt.py --do_testing`` count it: the files read as the task reads a test set (not as raw text,
    which the API tokenizes again, nor its restored output, whose punctuation sticks to the words),
    multi-bleu on the output symbols (``task.score``)."""
    translator = model.backward if reverse else model.translator
    inputs, gold, _ = model.task.read_test(sources, references, target)
    return model.task.score(inputs, translator.translate(inputs), gold, target)["bleu"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data"))
    parser.add_argument("--rows", nargs="*", help="row names (default: all)")
    parser.add_argument("--work", default="runs", help="parent of the working directories")
    parser.add_argument("--run_note", help="recorded with each row, e.g. which core it ran on and beside what")
    parser.add_argument("--dev_analysis", action="store_true",
                        help="only add the dev set's analysis to rows already recorded (no training, no testing)")
    parser.add_argument("--refine_sweep", type=int, nargs="+", metavar="K",
                        help="only add to recorded rows of an amortised bound model (--amortize) their dev BLEU "
                             "each way with K refinement steps at test time, for each K (no training, no testing)")
    args = parser.parse_args()
    log = lambda m: print(m, flush=True)  # noqa: E731
    rows = [row for row in EXPERIMENTS[args.experiment] if not args.rows or row["name"] in args.rows]
    data = os.path.abspath(args.data)
    for row in rows:
        working_dir = os.path.join(args.work, args.experiment, row["name"])
        if args.dev_analysis:
            record(args.experiment, add_dev_analysis(args.experiment, row, data, working_dir, log))
        elif args.refine_sweep:
            record(args.experiment, add_refine_sweep(args.experiment, row, data, working_dir, args.refine_sweep))
        else:
            run_and_record(args, row, data, working_dir, log, row.get("rung"))
    if args.dev_analysis or args.refine_sweep:
        return
    # Successive halving: the tuning trials that the rung promotes go on under their full schedule.
    chosen = {name for family in {row["config"] for row in rows if row.get("rung")}
              for name in promoted(records(args.experiment), family)}
    for row in (row for row in rows if row["name"] in chosen):
        run_and_record(args, row, data, os.path.join(args.work, args.experiment, row["name"]), log)


def run_and_record(args, row, data, working_dir, log, epochs=None):
    if row.get("continues") and not os.path.exists(working_dir):
        continue_trial(os.path.join(args.work, "tuning", row["continues"]), working_dir, log)
    result = run_row(row, data, working_dir, log, epochs)
    if row.get("continues"):  # a resumed retraining too: the copy leaves its mark
        copied = os.path.isfile(os.path.join(working_dir, COPIED))
        result["trial_run"] = "copied" if copied else "retrained by the same command"
    if args.run_note:
        result["run_note"] = args.run_note
    record(args.experiment, result)
    print(json.dumps(result), flush=True)


def continue_trial(trial_dir, working_dir, log):
    """A final row that is its tuning trial's own run (the same command) starts from a copy of the
    trial's working directory, which the trial itself keeps: trained already, it is only tested.
    Whether it was copied: where the trial's run is gone (a machine lost with its working
    directories), the row trains by the same command from the start, as the trial did."""
    if not workdir.is_trained(trial_dir):
        log(f"{trial_dir} holds no trained run: the row trains by the trial's command from the start")
        return False
    log(f"copying {trial_dir} to {working_dir}")
    shutil.copytree(trial_dir, working_dir + ".part", dirs_exist_ok=True)
    write_text(os.path.join(working_dir + ".part", COPIED), os.path.abspath(trial_dir) + "\n")
    os.replace(working_dir + ".part", working_dir)
    return True


if __name__ == "__main__":
    main()

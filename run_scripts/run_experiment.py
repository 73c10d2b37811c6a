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
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
HERE = os.path.dirname(os.path.abspath(__file__))
from experiments import EXPERIMENTS, TESTING, TRAINING  # noqa: E402
from rnnpb_nmt import registry  # noqa: E402
from rnnpb_nmt.data.files import write_text  # noqa: E402
from rnnpb_nmt.train import loop as training  # noqa: E402
from rnnpb_nmt.train import workdir  # noqa: E402

NMT = os.path.join(os.path.dirname(HERE), "nmt.py")


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


def commands(row, data, working_dir):
    d = os.path.join(data, row["folder"])
    if row.get("raw"):
        d = raw_copy(d, os.path.join(os.path.dirname(os.path.dirname(working_dir)), "raw_data", row["folder"]),
                     sorted({"en", row["target"]}))
    files = [f"--train_set1={d}/train.en", f"--train_set2={d}/train.{row['target']}",
             f"--dev_set1={d}/dev.en", f"--dev_set2={d}/dev.{row['target']}"]
    train = [sys.executable, "-u", NMT, *TRAINING, *row["flags"], *files, f"--working_dir={working_dir}"]
    test = [sys.executable, "-u", NMT, *TESTING, *row["test_flags"], f"--test_set={d}/test.en",
            f"--working_dir={working_dir}"]
    return train, test


def run_row(row, data, working_dir, log):
    """Train (or resume an interrupted training) and test one row."""
    train, test = commands(row, data, working_dir)
    os.makedirs(working_dir, exist_ok=True)
    with open(os.path.join(working_dir, "train_log.txt"), "a") as out:
        if not (workdir.is_trained(working_dir) and training.is_finished(
                training.load_stats(working_dir), workdir.load_config(working_dir, registry.models()))):
            log(" ".join(train))
            subprocess.run(train, stdout=out, stderr=subprocess.STDOUT, check=True)
    with open(os.path.join(working_dir, "test_log.txt"), "w") as out:
        log(" ".join(test))
        subprocess.run(test, stdout=out, stderr=subprocess.STDOUT, check=True)
    return summarize(row, working_dir, train, test)


def summarize(row, working_dir, train, test):
    """The results row of a trained and tested working directory."""
    with open(os.path.join(working_dir, "training_stats.json")) as f:
        training = json.load(f)
    with open(os.path.join(working_dir, "testing_stats.json")) as f:
        testing = json.load(f)
    rel = lambda cmd: " ".join(os.path.relpath(c) if os.path.isabs(c) and os.path.exists(c) else c
                               for c in cmd)
    return {"name": row["name"], "dataset": row["folder"],
            "model": "encdec" if "--model=encdec" in row["flags"] else "rnnpbnmt",
            "train_command": rel(train), "test_command": rel(test),
            "bleu": round(testing["bleu"], 2), "bleu_detokenized": round(testing["bleu_detokenized"], 2),
            "best_dev_perplexity": training["best_dev_perplexity"], "epochs": len(training["epochs"]),
            "best_epoch": training["best_epoch"], "train_seconds": round(training["total_seconds"]),
            "test_seconds": round(testing["testing_time"]), "machine": machine(),
            "date": time.strftime("%Y-%m-%d"), "thesis": row["thesis"], **({"note": row["note"]} if row.get("note") else {})}


def record(experiment, result):
    path = os.path.join(HERE, "results", f"{experiment}.json")
    rows = []
    if os.path.isfile(path):
        with open(path) as f:
            rows = [r for r in json.load(f) if r["name"] != result["name"]]
    rows.append(result)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data"))
    parser.add_argument("--rows", nargs="*", help="row names (default: all)")
    parser.add_argument("--work", default="runs", help="parent of the working directories")
    args = parser.parse_args()
    for row in EXPERIMENTS[args.experiment]:
        if args.rows and row["name"] not in args.rows:
            continue
        working_dir = os.path.join(args.work, args.experiment, row["name"])
        result = run_row(row, os.path.abspath(args.data), working_dir, lambda m: print(m, flush=True))
        record(args.experiment, result)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

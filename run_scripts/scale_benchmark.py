#!/usr/bin/env python3
"""The scale benchmark (issue 91, ``benchmark.py --part=scale``): memory and time of preparing and
training on generated corpora of about 25-word sentence pairs, by size.

    python3 run_scripts/scale_benchmark.py --pairs=50000 [--out=DIR] [--compare_lists] [--steps=30]

Each size's corpus is N pairs of about 26 words, written under ``--out`` (never into the
repository): each pair three sentence pairs of the demo grammar joined, drawn at random from a base
of ``BASE_PAIRS`` distinct ones (``data/generate_demo.py``, made once under ``--out``; the generator
keeps every pair in memory to keep them distinct and makes about 2,000 a second, so that 13.5 M of
its own for 4.5 M pairs would neither fit nor finish); the dev set is 200 pairs, three of its dev
pairs each. Each
measurement is a child process of its own (a fresh interpreter), its peak memory the child's
``ru_maxrss``:
- ``prepare``: the translation task's ``load_corpus`` into a new working directory: the files read
  as they stream, in parts in worker processes (``--prepare_workers``' default), the corpus written
  packed to ``prepared/`` (``peak_prepare_memory_mb``: the largest of the child's and its workers'
  peaks, as ``ru_maxrss`` of a process and the children it waited for counts them;
  ``prepare_main_memory_mb``: the child's own; ``prepare_worker_memory_mb``: the largest of the
  processes it waited for, its workers and any helper process forked (whose peak starts at the size
  it was forked at); ``prepare_seconds``);
- ``train``: a resumed run's start (the corpus read from ``prepared/``'s files), a tiny seq-to-seq
  (``--units=32 --batch_size=64``) and its ``Trainer`` taking ``--steps`` steps of the first epoch
  (``peak_train_memory_mb``; ``seconds_to_first_step``: the child's start to its first step's end,
  imports included; ``train_target_tokens_per_second``: the target tokens, ``<end>`` included, of
  the steps after the first, per second; ``train_corpus_mapped_mb``: of its memory at the end, the
  resident pages of memory maps of ``prepared/``'s files: none since batches read them with
  positioned reads; before, the pages batches had read, a file's neighbouring pages with them,
  counted in ``ru_maxrss``, but the system's file cache);
- with ``--compare_lists``, at sizes up to ``LISTS_MAX_PAIRS``, ``lists``: the path before issue 91 on
  the same files (every file a list of word lists, a list of symbol lists beside it, then a list of id arrays:
  ``peak_lists_memory_mb``, ``lists_seconds``).
Prints one JSON object per size, and all of them as the last line.
"""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

STARTED = time.perf_counter()  # before the imports the training child times
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = {"train_set1": "train.en", "train_set2": "train.de", "dev_set1": "dev.en", "dev_set2": "dev.de"}
DEV_PAIRS = 200
BASE_PAIRS = 300_000
# The lists of before issue 91 hold about 5 KB a pair (5.0 GB measured at 1 M pairs): measured up to
# here; at 4.5 M pairs they would need about 23 GB, nearly all the machine has.
LISTS_MAX_PAIRS = 1_000_000


def make_corpus(pairs, out):
    """``out``/train.{en,de} of ``pairs`` joined pairs and dev.{en,de} of ``DEV_PAIRS`` (made once)."""
    if all(os.path.isfile(os.path.join(out, name)) for name in SETS.values()):
        return
    base = base_corpus(os.path.dirname(os.path.abspath(out)))
    rng, part = random.Random(pairs), out + ".part"  # written whole, then moved into place
    shutil.rmtree(part, ignore_errors=True)
    os.makedirs(part)
    draws = {"train": ([rng.randrange(len(base["train"][0])) for _ in range(3)] for _ in range(pairs)),
             "dev": (range(3 * k, 3 * k + 3) for k in range(DEV_PAIRS))}
    for name, lines in base.items():
        with open(os.path.join(part, f"{name}.en"), "w", encoding="utf-8") as en, \
                open(os.path.join(part, f"{name}.de"), "w", encoding="utf-8") as de:
            for drawn in draws[name]:
                en.write(" ".join(lines[0][k] for k in drawn) + "\n")
                de.write(" ".join(lines[1][k] for k in drawn) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(part, out)


def base_corpus(out):
    """{"train": (English lines, German lines), "dev": likewise}: the demo grammar's ``BASE_PAIRS``
    distinct training pairs and 3 x ``DEV_PAIRS`` dev pairs, generated once into ``out``/base."""
    base = os.path.join(out, "base")
    if not os.path.isfile(os.path.join(base, "test.de")):  # generate_demo.py's last file
        os.makedirs(out, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "data", "generate_demo.py"), f"--train={BASE_PAIRS}",
                        f"--dev={3 * DEV_PAIRS}", "--test=1", f"--out={base}"], check=True, stdout=subprocess.DEVNULL)
    return {split: tuple(_lines(os.path.join(base, f"{split}.{lang}")) for lang in ("en", "de"))
            for split in ("train", "dev")}


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f]


def measure(kind, corpus_dir, working_dir, steps):
    """(the JSON a child of ``kind`` printed, its peak memory in MB)."""
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), f"--child={kind}", f"--corpus={corpus_dir}",
                              f"--working_dir={working_dir}", f"--steps={steps}"], stdout=subprocess.PIPE, text=True)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"the {kind} child failed (exit {child.returncode})")
    return json.loads(output.splitlines()[-1]), usage.ru_maxrss / 1024  # KB on Linux


def scale(pairs, out, steps, compare_lists):
    """The keys of one corpus size."""
    corpus_dir, working_dir = os.path.join(out, f"corpus{pairs}"), os.path.join(out, f"run{pairs}")
    make_corpus(pairs, corpus_dir)
    subprocess.run(["rm", "-rf", working_dir], check=True)
    result = {"pairs": pairs}
    prepared, result["peak_prepare_memory_mb"] = measure("prepare", corpus_dir, working_dir, steps)
    trained, result["peak_train_memory_mb"] = measure("train", corpus_dir, working_dir, steps)
    result.update(prepared, **trained)
    if compare_lists and pairs <= LISTS_MAX_PAIRS:
        lists, result["peak_lists_memory_mb"] = measure("lists", corpus_dir, working_dir, steps)
        result.update(lists)
    return result


# ----- the children ------------------------------------------------------------------------------

def _files(corpus_dir):
    return {flag: os.path.join(corpus_dir, name) for flag, name in SETS.items()}


def _config():
    from rnnpb_nmt.config import Config

    return Config().replace(model="encdec", units=32, embedding_size=32, batch_size=64, lang1="en", lang2="de")


def child_prepare(corpus_dir, working_dir, steps):
    from rnnpb_nmt.tasks.translation.task import TranslationTask

    started, config = time.perf_counter(), _config()
    task = TranslationTask(config, working_dir)
    task.load_corpus(_files(corpus_dir), config)
    task.save(working_dir)  # as a new run does before its first step
    return {"prepare_seconds": time.perf_counter() - started,
            "prepare_main_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "prepare_worker_memory_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def child_lists(corpus_dir, working_dir, steps):
    """What the translation task did before issue 91: the words of every file as lists, the symbols
    as lists beside them, the vocabularies built from those, the sentences encoded one array each."""
    from rnnpb_nmt.data.dataset import encode_all, read_parallel, read_sentences
    from rnnpb_nmt.data.text import TextPipeline
    from rnnpb_nmt.data.vocabulary import Vocabulary

    started, files, text = time.perf_counter(), _files(corpus_dir), TextPipeline()
    words = {flag: read_sentences(path, lambda line: text.words(line, "en")) for flag, path in files.items()}
    symbols = {flag: [text.symbols(w, 1) for w in sentences] for flag, sentences in words.items()}
    train1, train2 = read_parallel("train_set1", "train_set2", symbols.get, symbols.get)
    vocab1, vocab2 = Vocabulary.build(train1), Vocabulary.build(train2)
    encoded = [encode_all(vocab, symbols[flag]) for vocab, flag in ((vocab1, "train_set1"), (vocab2, "train_set2"),
                                                                     (vocab1, "dev_set1"), (vocab2, "dev_set2"))]
    return {"lists_seconds": time.perf_counter() - started, "lists_sentences": len(encoded[0])}


def child_train(corpus_dir, working_dir, steps):
    import numpy as np

    from rnnpb_nmt import registry
    from rnnpb_nmt.data.vocabulary import PAD_ID, Vocabulary
    from rnnpb_nmt.train.step import Trainer

    config = _config()
    task = registry.tasks()["translation"](config, working_dir)
    vocabularies = [Vocabulary.load(os.path.join(working_dir, "prepared", f"vocab{side}.txt")) for side in (1, 2)]
    corpus = task.load_corpus(_files(corpus_dir), config, vocabularies)  # resumed: read from prepared/
    config = config.replace(**task.derived(_files(corpus_dir), corpus))
    trainer = Trainer(registry.models()[config.model.model](config, corpus.vocab1, corpus.vocab2))
    tokens, first = 0, None
    for step, (kind, batch) in enumerate(trainer.epoch_batches(corpus, 1, np.random.default_rng(1))):
        float(trainer.train_step(batch, kind)["loss"])  # waits for the step
        if first is None:
            first = time.perf_counter()
        else:
            tokens += int(np.sum(batch["tgt"].numpy() != PAD_ID))
        if step + 1 == steps:
            break
    return {"seconds_to_first_step": first - STARTED,
            "train_target_tokens_per_second": tokens / (time.perf_counter() - first),
            "train_corpus_mapped_mb": _mapped_kb(os.path.join(working_dir, "prepared")) / 1024}


def _mapped_kb(directory):
    """The resident pages (KB) of this process's memory maps of files in ``directory``: the part of
    its ``ru_maxrss`` that is the system's cache of those files, which it may drop and read again."""
    total, mapped = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            fields = line.split()
            if fields[0].endswith(":"):  # a mapping's "Name: value kB" lines
                total += int(fields[1]) if mapped and fields[0] == "Rss:" else 0
            else:  # a mapping's first line: addresses, permissions, offset, device, inode, path
                mapped = len(fields) >= 6 and os.path.dirname(fields[5]) == os.path.realpath(directory)
    return total


CHILDREN = {"prepare": child_prepare, "lists": child_lists, "train": child_train}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="500000,1000000,2000000,4500000", help="corpus sizes, comma-separated")
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "rnnpb_scale"),
                        help="where the corpora and runs are made")
    parser.add_argument("--steps", type=int, default=30, help="training steps measured")
    parser.add_argument("--compare_lists", action="store_true", help="also measure the lists of before issue 91")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--working_dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        print(json.dumps(CHILDREN[args.child](args.corpus, args.working_dir, args.steps)))
        return None
    results = []
    for pairs in (int(p) for p in args.pairs.split(",")):
        results.append(scale(pairs, args.out, args.steps, args.compare_lists))
        print(json.dumps(results[-1]), flush=True)
    print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()

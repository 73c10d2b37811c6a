#!/usr/bin/env python3
"""Turn the Tatoeba/Anki English-German download into the thesis's data sets (thesis 5.2.1).

    python3 data/prepare_tatoeba.py deu.txt --out mydata --sizes 20000 50000

Input lines are ``English<TAB>German<TAB>attribution``. Output, like ``../shared/data``:
``mydata/easy/easyN/{train,dev,test}.{en,de}`` (parallel) and ``mydata/autoenc/easyN/*.en``
(English only, duplicates removed before selection so that no sentence is in two splits).

Steps: Moses tokenization with sacremoses (``'`` -> ``&apos;``, ``"`` -> ``&quot;``, cased);
identical pairs kept once; the "easy" selection: count word frequencies over the whole (target
side) corpus, rank sentences by the frequency of their least frequent word, keep the top
N + dev + test; shuffle those (fixed seed) into dev, test and train.
"""

import argparse
import collections
import os
import random
import sys

from sacremoses import MosesTokenizer


class DataError(Exception):
    pass


def read_pairs(path):
    """(English, German) pairs of a tab-separated file; a line without a tab is an error."""
    pairs = []
    with open(path, encoding="utf-8-sig", errors="strict", newline=None) as f:
        try:
            lines = f.read().split("\n")
        except UnicodeDecodeError as e:
            raise DataError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise DataError(f"{path}:{number}: expected English<TAB>German<TAB>attribution")
        pairs.append((fields[0].strip(), fields[1].strip()))
    return pairs


def tokenize_pairs(pairs):
    en, de = MosesTokenizer(lang="en"), MosesTokenizer(lang="de")
    return [(en.tokenize(e, escape=True, return_str=True), de.tokenize(g, escape=True, return_str=True))
            for e, g in pairs]


def unique(items):
    """Items in first-seen order, each once."""
    return list(dict.fromkeys(items))


def easiest(sentences, key, count):
    """The ``count`` items whose least frequent word (in ``key(item)``) is most frequent.

    Frequencies are counted over all ``sentences``; ties keep corpus order.
    """
    freq = collections.Counter(w for s in sentences for w in key(s).split())
    rank = sorted(range(len(sentences)), key=lambda i: -min(freq[w] for w in key(sentences[i]).split()))
    return [sentences[i] for i in rank[:count]]


def split(items, num_dev, num_test, seed):
    items = list(items)
    random.Random(seed).shuffle(items)
    return {"dev": items[:num_dev], "test": items[num_dev:num_dev + num_test], "train": items[num_dev + num_test:]}


def write_lines(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)


def prepare(raw, out, sizes, num_dev=256, num_test=2000, seed=1):
    """Write the parallel and autoencoding subsets of every size; returns {folder: train lines}."""
    pairs = unique(tokenize_pairs(read_pairs(raw)))
    english = unique(e for e, _ in pairs)
    written = {}
    for n in sizes:
        needed = n + num_dev + num_test
        if needed > len(english):
            raise DataError(f"{raw}: {len(english)} distinct English sentences, too few for "
                            f"{n} + {num_dev} + {num_test}")
        parallel = split(easiest(pairs, lambda p: p[1], needed), num_dev, num_test, seed)
        for name, part in parallel.items():
            write_lines(os.path.join(out, "easy", f"easy{n}", f"{name}.en"), [e for e, _ in part])
            write_lines(os.path.join(out, "easy", f"easy{n}", f"{name}.de"), [g for _, g in part])
        mono = split(easiest(english, lambda e: e, needed), num_dev, num_test, seed)
        for name, part in mono.items():
            write_lines(os.path.join(out, "autoenc", f"easy{n}", f"{name}.en"), part)
        written[f"easy{n}"] = len(parallel["train"])
    return written


def main():
    parser = argparse.ArgumentParser(description="Prepare the thesis's easy data sets from a Tatoeba/Anki file.")
    parser.add_argument("raw", help="tab-separated English/German file (e.g. deu.txt)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 50000], help="training-set sizes")
    parser.add_argument("--dev", type=int, default=256)
    parser.add_argument("--test", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        written = prepare(args.raw, args.out, args.sizes, args.dev, args.test, args.seed)
    except (DataError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for name, n in written.items():
        print(f"{name}: {n} training sentences in {args.out}/easy/{name} and {args.out}/autoenc/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

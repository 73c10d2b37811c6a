#!/usr/bin/env python3
"""How far each inflection set's dev and withheld test sets lie from its training data, beside the
drop from our dev vote to our withheld-test score (issue 94, item 2: what on dev predicts the drop).

    python3 run_scripts/inflection_shift.py [--data ../shared/data] [--save]

Per set and split: the pairs, the share whose lemma never occurs in training, whose (lemma, tag
bundle) is not a training pair, whose tag bundle never occurs in training, and the lemmas' mean
length in characters. Beside them the committed protocol's dev vote (hard attention, corpus
aligner: the record in ``inflection.json`` whose predictions were scored) and its withheld-test
score (``withheld_scores.json``). Reads the covered test files' inputs only: no gold is needed.
``--save`` writes ``results/inflection_shift.json`` (the figures and this command); a markdown table
is printed either way.
"""

import argparse
import datetime
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # rnnpb_nmt imports TensorFlow; its start-up chatter is not for users
from inflection_experiments import COLLECTIONS, files  # noqa: E402
from rnnpb_nmt.errors import UserError  # noqa: E402
from rnnpb_nmt.tasks.inflection.task import read_examples  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def shift(train, examples):
    """The figures of ``examples`` against the ``train`` examples (each (lemma, tags, form))."""
    lemmas = {lemma for lemma, _, _ in train}
    pairs = {(lemma, frozenset(tags)) for lemma, tags, _ in train}
    bundles = {frozenset(tags) for _, tags, _ in train}
    n = len(examples)

    def share(test):
        return round(100.0 * sum(1 for e in examples if test(e)) / n, 2)

    return {"pairs": n, "lemma_unseen": share(lambda e: e[0] not in lemmas),
            "pair_unseen": share(lambda e: (e[0], frozenset(e[1])) not in pairs),
            "bundle_unseen": share(lambda e: frozenset(e[1]) not in bundles),
            "lemma_length": round(sum(len(e[0]) for e in examples) / n, 2)}


def committed_votes():
    """{(collection, set): dev vote accuracy (%)} of the hard-attention corpus-aligner votes, the
    protocol whose predictions were scored; the latest record of a set counts."""
    with open(os.path.join(RESULTS, "inflection.json"), encoding="utf-8") as f:
        records = json.load(f)
    return {(r["collection"], r["set"]): round(100.0 * r["ensemble"]["accuracy"], 2) for r in records
            if r["model"] == "hard_attention" and r.get("aligner") == "corpus" and r.get("ensemble")}


def withheld():
    """{(collection, set): withheld-test accuracy (%)} of the hard-attention votes."""
    with open(os.path.join(RESULTS, "withheld_scores.json"), encoding="utf-8") as f:
        scores = json.load(f)
    return {(s["collection"], s["set"]): s["test"] for s in scores["inflection"]["scores"] if s["model"] == "hard"}


def rows(data):
    votes, tests = committed_votes(), withheld()
    found = []
    for collection, spec in COLLECTIONS.items():
        for name in spec["sets"]:
            train_file, dev_file, test_file = files(collection, name, data)
            train, dev, test = read_examples(train_file), read_examples(dev_file), read_examples(test_file, (2,))
            test_score, dev_vote = tests.get((collection, name)), votes.get((collection, name))
            found.append({"collection": collection, "set": name, "train_pairs": len(train),
                          "dev": shift(train, dev), "test": shift(train, test), "dev_vote": dev_vote,
                          "test_score": test_score,
                          "drop": None if None in (test_score, dev_vote) else round(dev_vote - test_score, 2)})
    return found


def markdown(found):
    lines = ["| set | train pairs | lemma unseen: dev / test (%) | (lemma, tags) unseen: dev / test (%) | "
             "tag bundle unseen: dev / test (%) | lemma length: dev / test | dev vote | withheld test | drop |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in found:
        d, t = r["dev"], r["test"]
        cells = [f"{d[k]:g} / {t[k]:g}" for k in ("lemma_unseen", "pair_unseen", "bundle_unseen", "lemma_length")]
        figures = [("–" if r[k] is None else f"{r[k]:.2f}") for k in ("dev_vote", "test_score", "drop")]
        lines.append(f"| {r['collection']} {r['set']} | {r['train_pairs']} | {' | '.join(cells)} | {' | '.join(figures)} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data"))
    parser.add_argument("--save", action="store_true", help="write results/inflection_shift.json")
    args = parser.parse_args()
    data = os.path.join(os.path.abspath(args.data), "inflection")
    if not os.path.isdir(data):
        raise SystemExit(f"error: --data={args.data}: no inflection/ folder there")
    try:
        found = rows(data)
    except UserError as e:
        raise SystemExit(f"error: {e}") from None
    print(markdown(found))
    if args.save:
        record = {"command": "python3 run_scripts/inflection_shift.py --save", "date": str(datetime.date.today()),
                  "sets": found}
        path = os.path.join(RESULTS, "inflection_shift.json")
        with open(path + ".part", "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(path + ".part", path)


if __name__ == "__main__":
    main()

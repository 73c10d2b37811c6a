#!/usr/bin/env python3
"""How far issue 90's open-vocabulary test set lies from the training data the tuned rows learned
from: the words of ``easy/easy-full``'s test pairs (and, for contrast, ``easy/easy20000``'s own test
pairs) that ``easy/easy20000``'s training data never has.

    python3 run_scripts/open_vocabulary.py [--data ../shared/data] [--save]

Per language: the training data's word types, and per test set its tokens, the share of them unseen
in training and the share of sentences with at least one unseen word (words are the files' tokens,
split at spaces, as the models read them). ``--save`` writes ``results/open_vocabulary.json`` (the
figures and this command), which the bound-translation page reads; a summary is printed either way.
"""

import argparse
import datetime
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
TRAINING = "easy/easy20000"
TEST_SETS = ("easy/easy-full", "easy/easy20000")
LANGUAGES = ("en", "de")


def sentences(path):
    """The token lists of ``path``'s lines; a one-line error naming a missing file."""
    if not os.path.isfile(path):
        raise SystemExit(f"open_vocabulary.py: error: {path}: no such file (give --data, the shared data folder)")
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f]


def unseen(known, test):
    """The figures of the sentences ``test`` (token lists) against the word types ``known``."""
    tokens = sum(len(s) for s in test)
    return {"sentences": len(test), "tokens": tokens,
            "tokens_unseen_percent": round(100.0 * sum(w not in known for s in test for w in s) / tokens, 2),
            "sentences_with_unseen_percent": round(100.0 * sum(any(w not in known for w in s) for s in test)
                                                   / len(test), 2)}


def figures(data):
    """{language: {"training_types": N, TEST_SET: unseen(...)}} for the test sets against TRAINING."""
    found = {}
    for language in LANGUAGES:
        known = {w for s in sentences(os.path.join(data, TRAINING, f"train.{language}")) for w in s}
        found[language] = {"training_types": len(known),
                           **{folder: unseen(known, sentences(os.path.join(data, folder, f"test.{language}")))
                              for folder in TEST_SETS}}
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(os.path.dirname(HERE), "..", "shared", "data"))
    parser.add_argument("--save", action="store_true", help="write results/open_vocabulary.json")
    args = parser.parse_args()
    found = figures(args.data)
    for language, by_set in found.items():
        print(f"{language}: {by_set['training_types']} word types in {TRAINING}'s training data")
        for folder in TEST_SETS:
            f = by_set[folder]
            print(f"  {folder} test: {f['tokens_unseen_percent']} % of {f['tokens']} tokens unseen, "
                  f"{f['sentences_with_unseen_percent']} % of {f['sentences']} sentences with one")
    if args.save:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # the package imports TensorFlow; its chatter is not for users
        from rnnpb_nmt.data.files import write_json
        write_json(os.path.join(RESULTS, "open_vocabulary.json"),
                   {"command": "python3 run_scripts/open_vocabulary.py --save", "date": str(datetime.date.today()),
                    "training": TRAINING, "languages": found})


if __name__ == "__main__":
    main()

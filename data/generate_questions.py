#!/usr/bin/env python3
"""Write the question-formation data of McCoy, Frank & Linzen (2018) from its grammar.

    python3 data/generate_questions.py --out=questions --seed=1

draws declarative sentences from ``question.gr`` (``--grammar``) and writes NAME.src / NAME.tgt
(one space-separated sequence per line, line-aligned: the files of ``nmt.py --train_set1`` etc.)
for NAME in train (--train examples, the paper's 100 000), dev, test (drawn like train) and gen
(the generalization set: ``quest`` examples whose subject has a relative clause, so that the
main auxiliary is not the first, with two auxiliaries of one number but different words, as in
the shared ``question.gen-covered``: ``questions.contrasting``). A source is the sentence and
its task word (``decl`` or ``quest``); training ``quest`` examples move a main auxiliary that is
also the first one (``rnnpb_nmt/tasks/question_formation/questions.py``). No declarative sentence occurs twice across the
files, nor in the shared sets of --data_dir (question.dev, question.test-covered,
question.gen-covered, those that exist), so that the generalization set's sentences never occur
in training. Each file is drawn from (--seed, its own index), so the same flags always write the
same files.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from rnnpb_nmt.data.dataset import read_sentences  # noqa: E402
from rnnpb_nmt.errors import UserError  # noqa: E402
from rnnpb_nmt.tasks.question_formation import questions  # noqa: E402
from rnnpb_nmt.tasks.question_formation.grammar import Grammar  # noqa: E402
from rnnpb_nmt.tasks.transduction import synthetic  # noqa: E402

DATA_DIR = os.path.join(os.path.dirname(ROOT), "shared", "data", "question_formation")
SHARED_SETS = ("question.dev", "question.test-covered", "question.gen-covered")


def shared_sentences(data_dir):
    """The declarative sentences of the shared sets in ``data_dir`` (inputs without task word)."""
    found = set()
    for name in SHARED_SETS:
        path = os.path.join(data_dir, name)
        if os.path.isfile(path):
            # A line is INPUT or INPUT<TAB>OUTPUT; read as tokens, the input is what precedes the task word.
            for number, tokens in enumerate(read_sentences(path), 1):
                end = next((i for i, t in enumerate(tokens) if t in (questions.DECL, questions.QUEST)), None)
                if end is None:
                    raise UserError(f"{path}:{number}: no task word ({questions.DECL} or {questions.QUEST})")
                found.add(tuple(tokens[:end]))
    return found


def write_sets(args):
    grammar = Grammar.read(args.grammar)
    seen = shared_sentences(args.data_dir)
    for index, (name, size, kind) in enumerate([("train", args.train, "train"), ("dev", args.dev, "train"),
                                                ("test", args.test, "train"), ("gen", args.gen, "gen")]):
        examples = questions.generate(grammar, size, seed=f"{args.seed}-{index}", exclude=seen, kind=kind)
        seen.update(tuple(source[:-1]) for source, _ in examples)
        synthetic.write(examples, args.out, name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--data_dir", default=DATA_DIR, help="the shared question-formation sets (default: %(default)s)")
    parser.add_argument("--grammar", help="the grammar (default: question.gr in --data_dir)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=int, default=100000, help="training examples (the paper's 100 000)")
    parser.add_argument("--dev", type=int, default=1000)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--gen", type=int, default=1000, help="generalization examples")
    args = parser.parse_args(argv)
    args.grammar = args.grammar or os.path.join(args.data_dir, "question.gr")
    try:
        write_sets(args)
    except (UserError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

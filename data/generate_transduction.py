#!/usr/bin/env python3
"""Write one of the five synthetic transduction tasks of Grefenstette et al. 2015 as text files.

    python3 data/generate_transduction.py --task=copy --out=data/copy --seed=1

writes NAME.src / NAME.tgt (one space-separated sequence per line) for NAME in train, dev and
test (source lengths --min_len..--max_len, the paper's 8-64) and test_long (--test_min_len..
--test_max_len, the paper's 65-128): the files of ``nmt.py --task=transduction``. Each split is
drawn from (--seed, its own index) alone, so the same flags always write the same files.

The paper drew every training sequence fresh ("the impossibility of overfitting"). By default the
toolkit trains on a fixed sample, --train sequences; with ``nmt.py --fresh_data`` it draws
--train new ones every epoch, as ``generator.json`` (also written here) says the training file's
were drawn.
"""

import argparse
import sys


from rnnpb_nmt.errors import UserError
from rnnpb_nmt.tasks.transduction import synthetic


def splits(args):
    """(name, size, min_len, max_len) of each file pair to write."""
    return [("train", args.train, args.min_len, args.max_len), ("dev", args.dev, args.min_len, args.max_len),
            ("test", args.test, args.min_len, args.max_len),
            ("test_long", args.test, args.test_min_len, args.test_max_len)]


def write_task(args):
    for index, (name, size, low, high) in enumerate(splits(args)):
        pairs = synthetic.generate(args.task, size, low, high, seed=[args.seed, index], vocab_size=args.vocab_size)
        synthetic.write(pairs, args.out, name)
    synthetic.write_generator(args.out, vars(args))


def main(argv=None):
    low, high = synthetic.TRAIN_LENGTHS
    test_low, test_high = synthetic.TEST_LENGTHS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", required=True, help=f"one of {', '.join(synthetic.TASKS)}")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--train", type=int, default=100000, help="training pairs")
    parser.add_argument("--dev", type=int, default=1000, help="dev pairs")
    parser.add_argument("--test", type=int, default=1000, help="pairs in each test file (the paper's 1000)")
    parser.add_argument("--min_len", type=int, default=low)
    parser.add_argument("--max_len", type=int, default=high)
    parser.add_argument("--test_min_len", type=int, default=test_low)
    parser.add_argument("--test_max_len", type=int, default=test_high)
    parser.add_argument("--vocab_size", type=int, default=128, help="content symbols (the paper's 128)")
    args = parser.parse_args(argv)
    try:
        write_task(args)
    except UserError as e:  # its message names the argument, which is the flag's name
        print(f"error: --{e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Where an inflection model's errors are: exact-match accuracy by groups of feature tags.

    python3 run_scripts/inflection_breakdown.py GOLD PREDICTIONS... [--by pos num]
        [--where pos=N num=PL] [--ending '(āt|ūn|īn)(u|i|a|un|in|an)?']

GOLD is a ``LEMMA<TAB>FEATURES<TAB>FORM`` file (a dev set); each PREDICTIONS file holds the same
lemmas and features in the same order with a model's forms (a working directory's
``test_trans_dev.txt``, a vote's included). A single accuracy hides what a language's hard part
is (docs/models/hard_attention.md, Arabic noun plurals); this prints a markdown table of the examples' count and
each file's accuracy per group: the examples' values of the ``--by`` features (``-`` where an
example has no such tag). ``--where`` keeps the examples that have all its tags and adds a row of
the others; ``--ending REGEX`` splits each group by whether its gold form ends in a match of
REGEX (for Arabic, -āt/-ūn/-īn before an optional case ending: a proxy for sound plurals against
broken ones, which some of each defeat: faʿālīl plurals of n-final roots, sound plurals in
construct without their -n).
"""

import argparse
import os
import re
import sys
from collections import defaultdict
from typing import NamedTuple

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # rnnpb_nmt imports TensorFlow; its start-up chatter is not for users
from rnnpb_nmt.data.dataset import read_lines
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import coarse_accuracy
from rnnpb_nmt.tasks.inflection.task import FEATURE_SEPARATOR, read_examples


class Ending(NamedTuple):
    """``--ending``: the regex as given (the rows' label) and compiled to match at a form's end."""

    text: str
    pattern: re.Pattern

    @classmethod
    def of(cls, text):
        return cls(text, re.compile(rf"(?:{text})\Z"))


def predicted_forms(gold, path):
    """The forms of a predictions file, checked line by line against the gold's lemma and features
    (a form may be empty: a model can write nothing)."""
    lines = list(read_lines(path))
    if len(lines) != len(gold):
        raise UserError(f"{path}: {len(lines)} lines, the gold file has {len(gold)}")
    forms = []
    for (number, text), (lemma, features, _) in zip(lines, gold):
        fields = text.rstrip("\r").split("\t")
        if fields[:2] != [lemma, FEATURE_SEPARATOR.join(features)] or len(fields) != 3:
            raise UserError(f"{path}:{number}: {'<TAB>'.join(fields)}, where the gold file has "
                            f"{lemma}<TAB>{FEATURE_SEPARATOR.join(features)}<TAB>FORM")
        forms.append(fields[2])
    return forms


def tag_values(features):
    """{name: value} of an example's ``name=value`` tags (a bare tag such as CELEX's is its own
    name and value: ``--where PL=PL``)."""
    return dict(tag.split("=", 1) if "=" in tag else (tag, tag) for tag in features)


def selected(tags, where):
    """Whether an example's ``tag_values`` hold every (name, value) of ``where``."""
    return all(tags.get(name) == value for name, value in where)


def group_of(tags, by, ending, form):
    """The row of a selected example (its ``tag_values``): its ``by`` values, and with ``ending``
    whether its gold form ends in a match."""
    parts = [",".join(f"{name}={tags.get(name, '-')}" for name in by)] if by else []
    if ending:
        parts.append(("ending" if ending.pattern.search(form) else "not ending") + f" in {ending.text}")
    return " ".join(parts)


def accuracy(forms, gold, indices):
    """Exact-match accuracy of ``forms`` on the examples ``indices`` (the task's score); None for
    no examples."""
    return coarse_accuracy([forms[i] for i in indices], [gold[i][2] for i in indices]) if indices else None


def breakdown(gold, forms_per_file, by=(), where=(), ending=None):
    """[(row, examples, [accuracy of each file])]: the groups of the selected examples (with
    ``by`` or ``ending``) sorted by name, then (with ``where``) all selected and all others,
    then all examples."""
    groups, chosen, others = defaultdict(list), [], []
    for index, (_, features, form) in enumerate(gold):
        tags = tag_values(features)
        if selected(tags, where):
            groups[group_of(tags, by, ending, form)].append(index)
            chosen.append(index)
        else:
            others.append(index)
    rows = sorted(groups.items()) if by or ending else []
    if where:
        label = ",".join(f"{name}={value}" for name, value in where)
        rows += [(label, chosen), ("not " + label, others)]
    rows.append(("all", range(len(gold))))
    return [(name, len(indices), [accuracy(forms, gold, indices) for forms in forms_per_file])
            for name, indices in rows]


def markdown(rows, names):
    """The rows as a markdown table, accuracies in per cent (a ``|`` of a regex escaped)."""
    lines = ["| examples | count | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for row, count, accuracies in rows:
        cells = [row.replace("|", "\\|"), str(count)] + ["–" if a is None else f"{100 * a:.2f}" for a in accuracies]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def column_names(paths):
    """A working directory's name for its ``test_trans_*.txt``, else the file's name; the paths
    as given where those names would repeat."""
    names = [os.path.basename(os.path.dirname(os.path.abspath(p))) if os.path.basename(p).startswith("test_trans")
             else os.path.basename(p) for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def checked_flags(parser, args):
    """(where, ending) from the flags; a usage error naming the flag and the bad value."""
    for name in args.by:
        if "=" in name:
            parser.error(f"--by {name}: a feature name (pos), not a tag (pos=N)")
    for tag in args.where:
        if "=" not in tag:
            parser.error(f"--where {tag}: each tag must be NAME=VALUE")
    if args.ending == "":
        parser.error("--ending: an empty pattern")
    try:
        ending = Ending.of(args.ending) if args.ending else None
    except re.error as e:
        parser.error(f"--ending {args.ending}: not a regular expression ({e})")
    return [tuple(tag.split("=", 1)) for tag in args.where], ending


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gold")
    parser.add_argument("predictions", nargs="+")
    parser.add_argument("--by", nargs="*", default=[], metavar="NAME", help="feature names to group by")
    parser.add_argument("--where", nargs="*", default=[], metavar="NAME=VALUE",
                        help="keep examples with all these tags (a bare tag: TAG=TAG)")
    parser.add_argument("--ending", metavar="REGEX", help="split each group by whether the gold form ends in a match")
    args = parser.parse_args()
    where, ending = checked_flags(parser, args)
    try:
        gold = read_examples(args.gold)
        forms = [predicted_forms(gold, path) for path in args.predictions]
    except (UserError, OSError) as e:
        sys.exit(f"inflection_breakdown.py: {e}")
    if not any(selected(tag_values(features), where) for _, features, _ in gold):
        sys.exit(f"inflection_breakdown.py: --where {' '.join(args.where)}: no example of {args.gold} has all these tags")
    print(markdown(breakdown(gold, forms, args.by, where, ending), column_names(args.predictions)))


if __name__ == "__main__":
    main()

"""Character alignment of a lemma and its form, and the step/write oracle derived from it.

Aharoni & Goldberg train the hard-attention decoder on action sequences read off a character
alignment of each training pair (their §2.2). Their aligner is the Chinese-restaurant-process
aligner of Sudoh et al. (2013) as shipped with the SIGMORPHON 2016 baseline, a corpus-level
sampler (``rnnpb_nmt.tasks.inflection.corpus_aligner``, ``--aligner=corpus``). This module's
default is a simpler alternative: a minimum-edit-distance (Levenshtein) alignment of each pair
alone. Both are cheapest alignments under column costs (the corpus aligner learns its costs), with
ties broken so that

- within a gap, deletions come before insertions: the characters that replace a deleted stretch
  are written while the pointer is on it (``flog -> fliege``: ``ie`` written at ``o``), and
- insertions go as late as possible: a suffix is written after the last input character, not
  spread between the stem's characters.

With these ties the paper's two worked examples (its Figure 3) come out as in the paper.
``align(..., insertions=EARLY)`` breaks them as the SIGMORPHON 2016 baseline's aligner (crpalign)
does instead: walking back from the end it prefers a deletion, then a substitution, then an
insertion, so insertions go as early as possible and, within a gap, before the deletions
(``abzupfet -> abzuzupfen``: the infinitive's ``zu`` inserted after ``ab``, before the stem, where
the default inserts it after copying the stem's own ``zu``). The two give alignments of the same
cost and, for a pair without ties, the same alignment.

The oracle (paper §2.2): the pointer starts on a begin-of-word position (0) before the first
character; for each alignment column, a column with an input character first moves the pointer
onto it (``STEP``), and a column with an output character then writes it. After the last column
the pointer is on the last character (position ``len(lemma)``); it never moves back or further.
"""

from rnnpb_nmt.data.symbols import STEP
from rnnpb_nmt.metrics import paired


def unit_cost(read, write):
    """Levenshtein's column costs: 0 for a copy, 1 for a substitution, a deletion (``write`` is
    None) or an insertion (``read`` is None)."""
    return int(read != write)


def _distances(source, target, cost=unit_cost):
    """The cost table: d[i][j], the cheapest alignment of source[:i] and target[:j].

    ``cost(read, write)`` is a column's cost, an integer, so that equal sums are equal and the
    ties of ``align`` are exact.
    """
    deletions, insertions = [cost(a, None) for a in source], [cost(None, b) for b in target]
    d = [[0]]
    for b in insertions:
        d[0].append(d[0][-1] + b)
    for i, a in enumerate(source, start=1):
        row = [d[i - 1][0] + deletions[i - 1]]
        for j, b in enumerate(target, start=1):
            row.append(min(d[i - 1][j] + deletions[i - 1], row[j - 1] + insertions[j - 1],
                           d[i - 1][j - 1] + cost(a, b)))
        d.append(row)
    return d


def levenshtein(source, target):
    """The edit distance of two sequences (insertions, deletions and substitutions cost 1)."""
    return _distances(source, target)[-1][-1]


def mean_levenshtein(predictions, targets):
    """The mean edit distance of each prediction to its target: the SIGMORPHON shared task's
    figure beside exact-match accuracy (``coarse_accuracy``)."""
    pairs = paired(predictions, targets)
    return sum(levenshtein(p, t) for p, t in pairs) / len(pairs)


# The moves a back-trace tries first, walking back from the end: the first is taken last.
LATE = ("insertion", "substitution", "deletion")  # insertions as late as possible (the default)
EARLY = ("deletion", "substitution", "insertion")  # crpalign's: insertions as early as possible


def align(source, target, cost=unit_cost, insertions=LATE):
    """A minimum-cost alignment: a list of (input char or None, output char or None) columns,
    in order, with the tie-breaking of the module docstring; ``cost`` as for ``_distances``;
    ``insertions``: the order in which the back-trace tries the moves (LATE or EARLY)."""
    d = _distances(source, target, cost)
    i, j, columns = len(source), len(target), []
    while i or j:
        read, write = next(column for column in (_last_column(d, source, target, i, j, cost, move)
                                                 for move in insertions) if column)
        columns.append((read, write))
        i, j = i - (read is not None), j - (write is not None)
    return columns[::-1]


def _last_column(d, source, target, i, j, cost, move):
    """The column (read, write) of ``move`` if a cheapest alignment of source[:i] and target[:j]
    can end with it, else None."""
    reads, writes = move != "insertion", move != "deletion"
    if (reads and not i) or (writes and not j):
        return None
    read, write = source[i - 1] if reads else None, target[j - 1] if writes else None
    return (read, write) if d[i][j] == d[i - reads][j - writes] + cost(read, write) else None


def alignment_actions(columns):
    """The action sequence an alignment's columns give: output characters and STEPs."""
    actions = []
    for read, write in columns:
        if read is not None:
            actions.append(STEP)
        if write is not None:
            actions.append(write)
    return actions

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


def align(source, target, cost=unit_cost):
    """A minimum-cost alignment: a list of (input char or None, output char or None) columns,
    in order, with the tie-breaking of the module docstring; ``cost`` as for ``_distances``."""
    d = _distances(source, target, cost)
    i, j, columns = len(source), len(target), []
    while i or j:
        # Walking backwards, an insertion taken first ends up last: preferring it puts
        # insertions as late as possible, and after the deletions of the same gap.
        if j and d[i][j] == d[i][j - 1] + cost(None, target[j - 1]):
            columns.append((None, target[j - 1]))
            j -= 1
        elif i and j and d[i][j] == d[i - 1][j - 1] + cost(source[i - 1], target[j - 1]):
            columns.append((source[i - 1], target[j - 1]))
            i, j = i - 1, j - 1
        else:
            columns.append((source[i - 1], None))
            i -= 1
    return columns[::-1]


def alignment_actions(columns):
    """The action sequence an alignment's columns give: output characters and STEPs."""
    actions = []
    for read, write in columns:
        if read is not None:
            actions.append(STEP)
        if write is not None:
            actions.append(write)
    return actions

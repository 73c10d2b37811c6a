"""A corpus-level character aligner for the step/write oracle (``--aligner=corpus``).

Aharoni & Goldberg read their oracle off the alignments of the SIGMORPHON 2016 baseline's aligner
(Hulden's crpalign, after Sudoh et al. 2013): each lemma/form pair is aligned with columns of one
input and one output character, of one input character alone (a deletion) or of one output
character alone (an insertion), and the probability of a column type ``a:b`` is learned over the
whole training set by a Gibbs sampler, in proportion to how often the other pairs' alignments use
it. Where a per-pair Levenshtein alignment breaks a tie by position alone, this aligner takes the
columns the rest of the corpus uses (an ending or a stem change many pairs share is aligned the
same way in all of them), and it prefers the columns the corpus shares to fewer edits (on the
SIGMORPHON 2016 Arabic data, an imperfect's prefix is inserted before the root rather than written
over the root's first consonant, as Levenshtein does).

A re-implementation of that design, vectorised with numpy (the original is C):

- the model: a Dirichlet-multinomial over column types (a Chinese restaurant process with a
  uniform base): p(a:b) = (count(a:b) + PRIOR) / (columns + PRIOR * types). Every column pays the
  log of that denominator, so of two alignments with equally likely columns the one with fewer
  columns wins (a substitution rather than a deletion and an insertion);
- the sampler: a sweep takes the pairs block by block (blocks of pairs of similar lengths, in an
  order drawn anew each sweep); a block's alignments leave the counts, a new alignment of each of
  its pairs is drawn from the model given the other pairs' counts (forward sums, then a path drawn
  backwards from the end) and they go back in. crpalign draws one pair at a time; a block, a
  small part of the corpus (``PARTS``), lets one numpy computation draw many;
- two chains: one starts from the Levenshtein alignments, one from nothing (the first sweep
  aligns each block given the blocks drawn before it). A Gibbs sampler stays near where it
  starts: from the Levenshtein alignments it keeps their choices when the corpus does not
  outweigh them, from nothing it can reach alignments that share more columns than the
  Levenshtein ones but lie too far from them. Of the states both chains visit after the burn-in, the most probable one (its
  joint probability under the model) gives each column type its cost, its negative log
  probability;
- the result: each pair (a training pair, or a dev pair the sampler never saw: an unseen column
  type has the prior's probability) gets its cheapest alignment under those costs from
  ``alignment.align``, so the tie-breaking (deletions before insertions within a gap, insertions
  as late as possible) and the step/write oracle are the Levenshtein aligner's; or, given
  ``insertions=EARLY`` (``--aligner=corpus_early``), crpalign's tie-breaking, insertions as early
  as possible (the costs are the same: only the choice among equally cheap alignments differs).

Deterministic: the random numbers come from ``numpy.random.default_rng(seed)`` (a fixed ``SEED``
for the task), the characters are numbered in sorted order and the costs are rounded to integers
(``COST_SCALE``), so a training file gives the same alignments in every process: a resumed run
reads the targets it was trained on.
"""

import math

import numpy as np

from rnnpb_nmt.tasks.inflection.alignment import LATE, align

SEED = 1  # fixed: the alignments are part of the data, not of a run's randomness (--seed)
SWEEPS, BURN_IN = 10, 5  # crpalign's defaults (its iterations and burn-in)
PRIOR = 0.1  # the pseudo-count of every column type (crpalign's prior)
BLOCK = 256  # at most so many pairs drawn by one numpy computation
PARTS = 50  # at least so many blocks when there are so many pairs: a block is drawn given the
# counts of the others only, so it must be a small part of the corpus for the sampler to learn
COST_SCALE = 10 ** 6  # costs in millionths of a nat, as integers: equal sums are exactly equal


class CorpusAligner:
    """Column costs learned from a corpus of (lemma, form) pairs; ``align`` aligns any pair."""

    def __init__(self, pairs, seed=SEED, insertions=LATE):
        """Fit on ``pairs``, a non-empty sequence of (source, target) pairs of non-empty strings (the
        training pairs; ``align`` takes any); ``insertions``: ``alignment.align``'s tie-breaking."""
        self._insertions = insertions
        sources, targets = zip(*pairs)
        self._reads = [None, *sorted(set("".join(sources)))]  # id 0 is the gap
        self._writes = [None, *sorted(set("".join(targets)))]
        blocks = _blocks(sources, targets, {c: k for k, c in enumerate(self._reads)},
                         {c: k for k, c in enumerate(self._writes)})
        rng = np.random.default_rng(seed)
        chains = [_chain(blocks, self._shape, rng, [block.levenshtein for block in blocks]),
                  _chain(blocks, self._shape, rng, [None] * len(blocks))]
        self._costs, self._unseen = self._integer_costs(max(chains, key=lambda chain: chain[0])[1])

    @property
    def _shape(self):
        return len(self._reads), len(self._writes)

    def _integer_costs(self, counts):
        """{(read, write): cost} of the column types with counts, and the cost of any other."""
        cost = np.rint(-_log_probabilities(counts) * COST_SCALE).astype(np.int64)
        unseen = round((_log_denominator(counts) - math.log(PRIOR)) * COST_SCALE)  # the prior's share alone
        return {(self._reads[a], self._writes[b]): int(cost[a, b]) for a, b in zip(*np.nonzero(counts))}, unseen

    def cost(self, read, write):
        """A column's cost (``None`` on the gap side): its negative log probability, scaled."""
        return self._costs.get((read, write), self._unseen)

    def align(self, source, target):
        """The cheapest alignment of a pair under the learned costs, in ``alignment.align``'s form."""
        return align(source, target, self.cost, self._insertions)


class _Block:
    """Pairs of similar lengths as padded id arrays, and their Levenshtein alignments' columns."""

    def __init__(self, sources, targets, read, write):
        self.source = _padded([[read[c] for c in s] for s in sources])
        self.target = _padded([[write[c] for c in t] for t in targets])
        self.lengths = np.array([len(s) for s in sources]), np.array([len(t) for t in targets])
        self.levenshtein = np.array([read[a] * len(write) + write[b]
                                     for s, t in zip(sources, targets) for a, b in align(s, t)], dtype=np.int64)


def _blocks(sources, targets, read, write):
    """The pairs in ``_Block``s (``read``, ``write``: {character or None: id})."""
    order = sorted(range(len(sources)), key=lambda k: (len(sources[k]), len(targets[k]), k))
    size = max(1, min(BLOCK, len(order) // PARTS))
    parts = [order[start:start + size] for start in range(0, len(order), size)]
    return [_Block([sources[k] for k in part], [targets[k] for k in part], read, write) for part in parts]


def _padded(rows):
    """Id lists as one (B, longest) array, padded with 0."""
    array = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
    for k, row in enumerate(rows):
        array[k, :len(row)] = row
    return array


def _chain(blocks, shape, rng, columns):
    """(log probability, counts) of the most probable state a chain visits after the burn-in;
    ``columns``: each block's starting alignments as flat column-type ids, or None (none yet)."""
    counts = sum((_counted(c, shape) for c in columns if c is not None), np.zeros(shape, dtype=np.int64))
    best = (-math.inf, None)
    for sweep in range(SWEEPS):
        for b in rng.permutation(len(blocks)):
            if columns[b] is not None:
                counts -= _counted(columns[b], shape)
            columns[b] = _draw(blocks[b], _log_probabilities(counts), rng)
            counts += _counted(columns[b], shape)
        if sweep >= BURN_IN:
            best = max(best, (_log_joint(counts), counts.copy()), key=lambda state: state[0])
    return best


def _counted(columns, shape):
    """The count table of flat column-type ids."""
    return np.bincount(columns, minlength=shape[0] * shape[1]).reshape(shape)


def _log_probabilities(counts):
    """log p(a:b) of every column type given the counts of the others (the module docstring's model)."""
    log_p = np.log(counts + PRIOR) - _log_denominator(counts)
    log_p[0, 0] = 0.0  # padding only: finite, so that padded cells compute no NaN
    return log_p


def _log_denominator(counts):
    """The log of p(a:b)'s denominator: columns + PRIOR * types ((gap, gap) is not a column)."""
    return math.log(counts.sum() + PRIOR * (counts.size - 1))


def _log_joint(counts):
    """The log probability of a whole state (every pair's alignment) under the model: the
    Dirichlet-multinomial marginal likelihood of its column counts."""
    types, total = counts.size - 1, int(counts.sum())
    used = counts[counts > 0].tolist()
    return (sum(math.lgamma(c + PRIOR) for c in used) - len(used) * math.lgamma(PRIOR)
            + math.lgamma(PRIOR * types) - math.lgamma(total + PRIOR * types))


def _draw(block, log_p, rng):
    """An alignment of each pair of a block drawn from the model: its column types, as flat ids."""
    source, target, (n, m) = block.source, block.target, block.lengths
    forward = _forward(log_p[source, 0], log_p[0, target], log_p[source[:, :, None], target[:, None, :]])
    rows, i, j = np.arange(len(n)), n.copy(), m.copy()
    drawn = []
    for u in rng.random((source.shape[1] + target.shape[1], len(n))):
        active = (i > 0) | (j > 0)
        if not active.any():
            break
        before_i, before_j = np.maximum(i - 1, 0), np.maximum(j - 1, 0)
        a, t = source[rows, before_i], target[rows, before_j]
        weights = np.stack([np.where(i > 0, forward[rows, before_i, j] + log_p[a, 0], -np.inf),  # deletion
                            np.where(j > 0, forward[rows, i, before_j] + log_p[0, t], -np.inf),  # insertion
                            np.where((i > 0) & (j > 0), forward[rows, before_i, before_j] + log_p[a, t], -np.inf)])
        weights = np.exp(weights - np.where(active, weights.max(axis=0), 0.0))  # a finished pair's: all 0
        cumulative = np.cumsum(weights, axis=0)
        move = (cumulative > u * cumulative[-1]).argmax(axis=0)  # never a move of weight 0
        reads, writes = (move != 1) & active, (move != 0) & active
        drawn.append((np.where(reads, a, 0) * log_p.shape[1] + np.where(writes, t, 0))[active])
        i, j = i - reads, j - writes
    return np.concatenate(drawn)


def _forward(deletion, insertion, substitution):
    """forward[b, i, j]: the log of the summed probability of every alignment of source[:i] with
    target[:j] (pair b), from the log probabilities of each pair's deletions (B, N), insertions
    (B, M) and substitutions (B, N, M). Within a row the insertions make a linear recurrence,
    summed in closed form: f[j] = logsumexp over k <= j of g[k] + S[j] - S[k], where g holds the
    paths that enter the row at k and S the running sum of the row's insertion log probabilities."""
    size, length, width = substitution.shape
    steps = np.concatenate([np.zeros((size, 1)), np.cumsum(insertion, axis=1)], axis=1)  # S: (B, M + 1)
    forward = np.empty((size, length + 1, width + 1))
    forward[:, 0] = steps
    for i in range(1, length + 1):
        entering = forward[:, i - 1] + deletion[:, i - 1, None]
        entering[:, 1:] = np.logaddexp(entering[:, 1:], forward[:, i - 1, :-1] + substitution[:, i - 1])
        forward[:, i] = np.logaddexp.accumulate(entering - steps, axis=1) + steps
    return forward

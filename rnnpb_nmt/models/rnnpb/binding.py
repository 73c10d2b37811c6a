"""The PB tables of the bound model and what binds them (SPEC section 2).

Each training sentence i has a PB row in A's table and one in B's. Soft binding adds
``alpha * ||p_A,i - p_B,i||^2 / 2`` per pair to the loss (``tf.nn.l2_loss``, as in the original
code); hard binding makes A and B use one table, so the rows are the same variables.
Monolingual sentences get rows of their own, never bound.
"""

import numpy as np
import tensorflow as tf


class PBTables(tf.Module):
    """Zero-initialised PB tables: ``a`` and ``b`` (the same variable when ``hard``), ``mono_a``, ``mono_b``."""

    def __init__(self, num_train, num_pb, hard, num_mono_a=0, num_mono_b=0):
        super().__init__(name="pb_tables")
        self.hard = hard
        self.a = tf.Variable(tf.zeros([num_train, num_pb]), name="pb_a")
        self.b = self.a if hard else tf.Variable(tf.zeros([num_train, num_pb]), name="pb_b")
        self.mono_a = tf.Variable(tf.zeros([max(num_mono_a, 1), num_pb]), name="pb_mono_a")
        self.mono_b = tf.Variable(tf.zeros([max(num_mono_b, 1), num_pb]), name="pb_mono_b")

    @property
    def tables(self):
        """Every distinct table, each once (the optimiser's variable list)."""
        return [self.a] + ([] if self.hard else [self.b]) + [self.mono_a, self.mono_b]

    def reset(self, p_reset, rng):
        """Zero each row of every table with probability ``p_reset`` (end-of-epoch regulariser).

        Returns the fraction of rows reset. Hard-bound pairs are one row, so they reset together.
        """
        reset = total = 0
        for table in self.tables:
            keep = (rng.random(table.shape[0]) >= p_reset).astype(np.float32)
            table.assign(table * keep[:, None])
            reset += int((keep == 0).sum())
            total += keep.size
        return reset / total


def binding_loss(pb_a, pb_b, strength):
    """Soft binding term of each pair (B,); the training loss adds their sum."""
    return strength * 0.5 * tf.reduce_sum(tf.square(pb_a - pb_b), axis=1)


def binding_quality(table_a, table_b, sample=2000):
    """The thesis's binding-quality measure (table 5.5) over the PB tables of bound pairs (numpy
    arrays or the table variables: only the sampled rows are copied out).

    Returns the mean PB norm in A and in B, the mean distance between the PBs of a bound pair
    (``mean_bound_distance``), the mean distance between A's PB of one sentence and B's PB of
    another (``mean_random_distance``) and their ratio (0: perfectly bound, about 1: binding means
    nothing). Rows are the first ``sample`` pairs, so the figures are reproducible from the tables.
    """
    a, b = np.asarray(table_a[:sample], np.float64), np.asarray(table_b[:sample], np.float64)
    n = len(a)
    bound = np.linalg.norm(a - b, axis=1).mean()
    squared = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T
    pairwise = np.sqrt(np.maximum(squared, 0))
    random = (pairwise.sum() - np.trace(pairwise)) / max(n * (n - 1), 1)
    return {"mean_norm_a": float(np.linalg.norm(a, axis=1).mean()), "mean_norm_b": float(np.linalg.norm(b, axis=1).mean()),
            "mean_bound_distance": float(bound), "mean_random_distance": float(random),
            "binding_ratio": float(bound / random) if random > 0 else 0.0}

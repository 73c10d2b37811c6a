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
    """Soft binding term summed over the batch's pairs."""
    return strength * tf.nn.l2_loss(pb_a - pb_b)

"""The project's own LazyAdam (the Python 3.12+ stack) against tensorflow-addons' (the 3.11 stack)."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt import tf_stack

ROWS, DIM = 40, 6


def run_lazy_adam(make_optimizer, steps=100):
    """``steps`` compiled training steps on an embedding-like table (sparse gradients of a few
    rows, some of them repeated) and a dense matrix; returns the variables and the table's moments."""
    rng = np.random.default_rng(0)
    table = tf.Variable(rng.normal(size=(ROWS, DIM)).astype(np.float32))
    dense = tf.Variable(rng.normal(size=(DIM, 3)).astype(np.float32))
    optimizer = make_optimizer(0.01, [table, dense])

    @tf.function
    def step(rows, row_grads, dense_grad):
        sparse = tf.IndexedSlices(row_grads, rows, dense_shape=tf.shape(table, out_type=tf.int64))
        optimizer.apply_gradients([(sparse, table), (dense_grad, dense)], experimental_aggregate_gradients=False)

    for _ in range(steps):
        rows = rng.integers(0, ROWS, size=5)  # repeats happen: Keras sums them before the update
        step(tf.constant(rows), tf.constant(rng.normal(size=(5, DIM)), tf.float32),
             tf.constant(rng.normal(size=(DIM, 3)), tf.float32))
    return [table.numpy(), dense.numpy(), optimizer.get_slot(table, "m").numpy(), optimizer.get_slot(table, "v").numpy()]


def own_lazy_adam(learning_rate, variables):
    optimizer = tf_stack.LazyAdam(learning_rate=learning_rate)
    optimizer._create_all_weights(variables)
    return optimizer


def test_own_lazy_adam_matches_tensorflow_addons_for_100_steps():
    tfa = pytest.importorskip("tensorflow_addons", reason="tensorflow-addons is installed on the Python 3.11 stack only")

    def addons_lazy_adam(learning_rate, variables):
        optimizer = tfa.optimizers.LazyAdam(learning_rate=learning_rate)
        optimizer._create_all_weights(variables)
        return optimizer

    for ours, theirs in zip(run_lazy_adam(own_lazy_adam), run_lazy_adam(addons_lazy_adam)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)


def test_own_lazy_adam_leaves_untouched_rows_and_their_moments_alone():
    rng = np.random.default_rng(1)
    table = tf.Variable(rng.normal(size=(ROWS, DIM)).astype(np.float32))
    before = table.numpy()
    optimizer = own_lazy_adam(0.01, [table])
    grads = tf.IndexedSlices(tf.ones([2, DIM]), tf.constant([4, 9]), dense_shape=tf.constant([ROWS, DIM]))
    optimizer.apply_gradients([(grads, table)], experimental_aggregate_gradients=False)
    for value in (table.numpy() - before, optimizer.get_slot(table, "m").numpy(), optimizer.get_slot(table, "v").numpy()):
        assert np.flatnonzero(np.any(value != 0, axis=1)).tolist() == [4, 9]


def test_lazy_adam_is_the_installed_stacks():
    optimizer = tf_stack.lazy_adam(0.01, [tf.Variable(tf.zeros([2, 2]))])
    assert type(optimizer).__module__.startswith("tensorflow_addons" if tf_stack.tfa else "rnnpb_nmt")
    assert tf_stack.KERAS_VERSION.startswith("2.")  # Keras 2 on both stacks: the same checkpoint keys

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


def test_library_logs_are_hidden_and_everything_else_is_kept(capfd):
    import os
    import sys

    with tf_stack.library_logs_hidden():
        os.write(2, b"normalizer.cc(51) LOG(INFO) precompiled_charsmap is empty. use identity normalization.\n"
                    b"2026-12-06 04:53:49.547901: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.\n"
                    b"a library's error\n")
        print("the project's own line", file=sys.stderr)
    # (pytest's sys.stderr is not descriptor 2: the order of the two is pytest's)
    assert sorted(capfd.readouterr().err.splitlines()) == ["a library's error", "the project's own line"]
    with pytest.raises(RuntimeError), tf_stack.library_logs_hidden():
        os.write(2, b"normalizer.cc(51) LOG(INFO) before the failure\n")
        raise RuntimeError
    assert capfd.readouterr().err == "normalizer.cc(51) LOG(INFO) before the failure\n"  # a failure shows all


def test_an_in_graph_sentencepiece_model_loads_without_its_log_line(capfd):
    """What ``rnnpb-nmt export`` and ``serve`` do with a run's SentencePiece models (tensorflow-text,
    whose SentencePiece logs LOG(INFO) lines for a model of identity normalisation)."""
    tensorflow_text = pytest.importorskip("tensorflow_text")
    from rnnpb_nmt.data.text import TextPipeline

    pipeline = TextPipeline(subword="sentencepiece")
    pipeline.train_subwords([["a", "dog", "sees", "the", "cat"]] * 20, [["ein", "Hund"]] * 20, 20, "unigram", False)
    with tf_stack.library_logs_hidden():
        pieces = tensorflow_text.SentencepieceTokenizer(model=pipeline.models[0], out_type=tf.string)
        cut = pieces.tokenize(["a dog"]).to_list()
    assert cut == [[p.encode() for p in pipeline.symbols(["a", "dog"], 1)]]
    assert "LOG(INFO)" not in capfd.readouterr().err

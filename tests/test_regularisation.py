"""The NMT recipe's regularisers and schedules (issue 90): label smoothing against a hand-computed
loss, the warm-up + inverse-square-root schedule's rates at given steps (and across a resume),
and tied Transformer embeddings."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.config import Config, check_applicable
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.models.losses import summed_cross_entropy
from rnnpb_nmt.train import schedules
from rnnpb_nmt.train.step import Trainer, make_optimizer

from helpers import VOCAB, bound_model, first_batch, models, reversal_corpus, tiny_config


def test_label_smoothing_is_the_cross_entropy_against_the_smoothed_target():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 5)).astype(np.float32)
    targets = np.array([[4, 3, 2], [1, 2, 0]], np.int32)  # the second sentence: 2 words and padding
    eps = 0.2
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = []
    for b in range(2):
        total = 0.0
        for t in range(3):
            if targets[b, t] == 0:
                continue
            smoothed = np.full(5, eps / 5)
            smoothed[targets[b, t]] += 1 - eps
            total += -(smoothed * log_p[b, t]).sum()
        expected.append(total)
    loss, tokens = summed_cross_entropy(tf.constant(logits), tf.constant(targets), eps)
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-5)
    np.testing.assert_array_equal(tokens.numpy(), [3, 2])
    plain, _ = summed_cross_entropy(tf.constant(logits), tf.constant(targets))
    gold = [-sum(log_p[b, t, targets[b, t]] for t in range(3) if targets[b, t]) for b in range(2)]
    np.testing.assert_allclose(plain.numpy(), gold, rtol=1e-5)


def test_label_smoothing_changes_the_training_loss_and_never_the_dev_score():
    src, tgt = reversal_corpus(8)
    batch = first_batch(src, tgt)

    def losses(smoothing):
        tf.keras.utils.set_random_seed(3)
        model = models()["encdec"](tiny_config(model="encdec", label_smoothing=smoothing), VOCAB, VOCAB)
        return model.sentence_losses(batch, "parallel")[0].numpy(), model.score_targets(batch)[0].numpy()

    (train_plain, dev_plain), (train_smooth, dev_smooth) = losses(0.0), losses(0.1)
    np.testing.assert_allclose(dev_plain, dev_smooth, rtol=1e-6)
    assert not np.allclose(train_plain, train_smooth)


def test_the_bound_models_generation_is_smoothed_and_its_recognition_is_not():
    src, tgt = reversal_corpus(8)
    batch = first_batch(src, tgt)
    amortized = dict(amortize="encoder", refine_steps=1, both_directions=True, self_loss=0.0)
    plain, smooth = bound_model(**amortized), bound_model(**amortized, label_smoothing=0.3)
    pb = tf.zeros([8, plain.config.model.num_PB])
    seq = batch["tgt"]
    np.testing.assert_allclose(plain.lm_b.sentence_losses(seq, pb)[0], smooth.lm_b.sentence_losses(seq, pb)[0],
                               rtol=1e-6)  # no rng: recognition's and scoring's loss
    rng = tf.random.Generator.from_seed(1)
    assert not np.allclose(plain.lm_b.sentence_losses(seq, pb, rng)[0],
                           smooth.lm_b.sentence_losses(seq, pb, tf.random.Generator.from_seed(1))[0])


def test_the_rsqrt_schedule_rises_linearly_to_its_peak_then_falls_as_one_over_the_root_of_the_step():
    schedule = schedules.WarmupRsqrt(0.002, warmup_steps=4)
    rates = [float(schedule(step)) for step in range(8)]  # the optimiser's counts before steps 1..8
    expected = [0.002 * min(s / 4, (4 / s) ** 0.5) for s in range(1, 9)]
    np.testing.assert_allclose(rates, expected, rtol=1e-6)
    assert rates[3] == pytest.approx(0.002)


def test_a_scheduled_optimiser_steps_at_the_scheduled_rate_and_a_decay_scales_its_peak():
    variable = tf.Variable([1.0])
    optimizer = make_optimizer("sgd", schedules.WarmupRsqrt(0.1, 2), [variable])
    for step in range(1, 5):
        before = variable.numpy()[0]
        optimizer.apply_gradients([(tf.constant([1.0]), variable)])
        np.testing.assert_allclose(before - variable.numpy()[0], 0.1 * min(step / 2, (2 / step) ** 0.5), rtol=1e-5)
    schedules.set_rate(optimizer, 0.05)  # what --learning_rate_decay does between epochs
    assert schedules.factor(optimizer) == pytest.approx((2 / 5) ** 0.5)
    before = variable.numpy()[0]
    optimizer.apply_gradients([(tf.constant([1.0]), variable)])
    np.testing.assert_allclose(before - variable.numpy()[0], 0.05 * (2 / 5) ** 0.5, rtol=1e-5)


def test_dense_adam_moves_rows_a_batch_leaves_out_and_adam_does_not():
    """--optimizer=dense_adam is Adam on the densified gradient: a row used in the first step and not
    in the second still moves in the second (its momentum), where LazyAdam leaves it alone."""
    def two_steps(name):
        table = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
        optimizer = make_optimizer(name, 0.1, [table])
        for rows in ([0, 1], [1, 2]):
            grads = tf.IndexedSlices(tf.ones([2, 3]), tf.constant(rows), dense_shape=tf.constant([4, 3]))
            before = table.numpy()
            optimizer.apply_gradients([(grads, table)], experimental_aggregate_gradients=False)
        return before, table.numpy()

    before, lazy = two_steps("adam")
    np.testing.assert_array_equal(lazy[[0, 3]], before[[0, 3]])
    before, dense = two_steps("dense_adam")
    assert np.all(dense[0] < before[0]) and np.array_equal(dense[3], before[3])
    keras = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3))
    reference = tf.keras.optimizers.legacy.Adam(learning_rate=0.1, epsilon=1e-7)
    for rows in ([0, 1], [1, 2]):
        reference.apply_gradients([(tf.scatter_nd(tf.constant(rows)[:, None], tf.ones([2, 3]), [4, 3]), keras)])
    np.testing.assert_allclose(dense, keras.numpy(), rtol=1e-6)


def test_a_restored_optimiser_continues_the_schedule_where_it_was(tmp_path):
    def trained(steps):
        variable = tf.Variable([1.0])
        optimizer = make_optimizer("adam", schedules.WarmupRsqrt(0.1, 3), [variable])
        for _ in range(steps):
            optimizer.apply_gradients([(tf.constant([1.0]), variable)])
        return variable, optimizer

    variable, optimizer = trained(5)
    path = tf.train.Checkpoint(v=variable, o=optimizer).save(str(tmp_path / "ckpt"))
    restored_variable, restored = trained(0)
    tf.train.Checkpoint(v=restored_variable, o=restored).restore(path)
    assert int(restored.iterations) == 5
    assert schedules.factor(restored) == pytest.approx(schedules.factor(optimizer))
    for v, o in ((variable, optimizer), (restored_variable, restored)):
        o.apply_gradients([(tf.constant([1.0]), v)])
    np.testing.assert_allclose(variable.numpy(), restored_variable.numpy(), rtol=1e-6)


def test_the_trainer_reports_the_scheduled_rate_and_warmup_steps_need_the_schedule():
    tf.keras.utils.set_random_seed(1)
    config = tiny_config(model="encdec", lr_schedule="rsqrt", warmup_steps=10, learning_rate=0.01)
    trainer = Trainer(models()["encdec"](config, VOCAB, VOCAB))
    trainer.scale_learning_rates(0.5)
    assert trainer.learning_rate_scalars() == {"learning_rate/weights": pytest.approx(0.005 / 10)}
    with pytest.raises(UserError, match="--warmup_steps=10: only for --lr_schedule=rsqrt"):
        check_applicable({"warmup_steps": 10}, Config().replace(lr_schedule="constant"))


def test_transformer_word_init_draws_the_tables_as_named():
    """--word_init=scaled: N(0, 1 / --embedding_size); glorot: Glorot-uniform, within its limit."""
    def tables(word_init):
        tf.keras.utils.set_random_seed(3)
        config = tiny_config(model="transformer", units=64, embedding_size=64, heads=2, word_init=word_init)
        model = models()["transformer"](config, VOCAB, VOCAB)
        return [e.embedding.embeddings.numpy() for e in (model.src_embedding, model.tgt_embedding)]

    limit = (6 / (len(VOCAB) + 64)) ** 0.5
    for table in tables("glorot"):
        assert np.abs(table).max() <= limit and np.std(table) == pytest.approx(limit / 3 ** 0.5, rel=0.15)
    for table in tables("scaled"):
        assert np.std(table) == pytest.approx(64 ** -0.5, rel=0.15) and np.abs(table).max() > limit


def test_tied_transformer_embeddings_share_one_table_with_the_output_layer():
    def transformer(**overrides):
        tf.keras.utils.set_random_seed(2)
        config = tiny_config(**{"model": "transformer", "units": 16, "embedding_size": 16, "heads": 2, **overrides})
        return models()["transformer"](config, VOCAB, VOCAB)

    untied, tied = transformer(), transformer(tie_embeddings=True)
    table = tied.tgt_embedding.embedding.embeddings
    counted = lambda m: sum(int(np.prod(v.shape)) for v in m.trainable_variables)  # noqa: E731
    assert counted(untied) - counted(tied) == len(VOCAB) * 16  # the output matrix is gone, its bias stays
    src, tgt = reversal_corpus(4)
    batch = first_batch(src, tgt)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tied.sentence_losses(batch, "parallel")[0])
    gradient = tf.convert_to_tensor(tape.gradient(loss, table))
    # The output layer's gradient reaches every row of the table, not only the rows of the words read.
    assert np.count_nonzero(np.abs(gradient.numpy()).sum(axis=1)) == len(VOCAB)
    with pytest.raises(UserError, match="--tie_embeddings: .*--embedding_size=8"):
        transformer(tie_embeddings=True, embedding_size=8)

"""Attention layers alone: weights over real source positions only, hand-worked contexts."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.layers.attention import ContentAttention, LocationAttention, masked_softmax

LENGTHS = [5, 2, 1]  # real positions of three sentences padded to 5


def layer(kind, query_dim=6, value_dim=4):
    made = LocationAttention(5, name="a") if kind == "location" else ContentAttention(7, name="a")
    made.build_for(query_dim, value_dim)
    return made


def batch(lengths=LENGTHS, width=5):
    tf.random.set_seed(0)
    mask = tf.sequence_mask(lengths, width)
    return tf.random.normal([len(lengths), width, 4]), mask, tf.random.normal([len(lengths), 6])


@pytest.mark.parametrize("kind", ["location", "content"])
def test_weights_sum_to_one_over_real_positions_and_are_zero_on_padding(kind):
    attention = layer(kind)
    values, mask, query = batch()
    context, weights = attention(query, attention.memory(values, mask))
    w = weights.numpy()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-6)
    assert (w[~mask.numpy()] == 0).all() and (w[mask.numpy()] > 0).all()
    np.testing.assert_allclose(context.numpy(), np.einsum("bs,bsd->bd", w, values.numpy()), atol=1e-6)


@pytest.mark.parametrize("kind", ["location", "content"])
def test_padding_changes_nothing(kind):
    """A sentence attends the same whatever its batch is padded to and whatever the padding holds."""
    attention = layer(kind)
    values, mask, query = batch([2], width=2)
    context, weights = attention(query, attention.memory(values, mask))
    padded = tf.concat([values, 100 * tf.ones([1, 3, 4])], axis=1)
    context_padded, weights_padded = attention(query, attention.memory(padded, tf.sequence_mask([2], 5)))
    np.testing.assert_allclose(context_padded.numpy(), context.numpy(), atol=1e-6)
    np.testing.assert_allclose(weights_padded.numpy()[:, :2], weights.numpy(), atol=1e-6)


def test_location_scores_are_per_position_and_positions_past_the_layer_get_nothing():
    attention = layer("location")
    attention.scorer.kernel.assign(tf.zeros_like(attention.scorer.kernel))
    attention.scorer.bias.assign(tf.math.log([1.0, 2.0, 3.0, 4.0, 5.0]))
    values, mask, query = batch([7], width=7)  # two positions more than the layer's five
    _, weights = attention(query, attention.memory(values, mask))
    np.testing.assert_allclose(weights.numpy()[0], np.array([1, 2, 3, 4, 5, 0, 0]) / 15, atol=1e-6)


def test_content_attention_is_additive_attention_worked_by_hand():
    attention = layer("content", query_dim=1, value_dim=1)
    attention.keys.kernel.assign(np.full([1, 7], 1.0, np.float32))
    attention.queries.kernel.assign(np.zeros([1, 7], np.float32))
    attention.queries.bias.assign(np.zeros([7], np.float32))
    attention.v.assign(np.full([7], 1.0, np.float32))
    values = tf.constant([[[0.0], [1.0], [-1.0]]])
    context, weights = attention(tf.zeros([1, 1]), attention.memory(values, tf.constant([[True, True, True]])))
    scores = 7 * np.tanh([0.0, 1.0, -1.0])
    expected = np.exp(scores) / np.exp(scores).sum()
    np.testing.assert_allclose(weights.numpy()[0], expected, atol=1e-5)
    np.testing.assert_allclose(context.numpy()[0, 0], expected @ [0.0, 1.0, -1.0], atol=1e-5)


def test_masked_softmax_of_one_real_position_puts_all_weight_there():
    weights = masked_softmax(tf.constant([[3.0, -1e30, 50.0]]), tf.constant([[False, True, False]]))
    np.testing.assert_array_equal(weights.numpy(), [[0.0, 1.0, 0.0]])


def test_location_attention_over_zero_padding_loses_the_weight_of_the_positions_past_the_sentence():
    """padding="zeros" (McCoy et al.'s code): one softmax over all the layer's positions; a sentence's
    weights are that softmax on its own positions, and the rest reads zero outputs, lost to the context."""
    attention = LocationAttention(7, padding="zeros", name="a")
    attention.build_for(6, 4)
    values, mask, query = batch()  # 3 sentences of 5, 2 and 1 positions, padded to 5
    context, weights = attention(query, attention.memory(values, mask))
    everywhere = tf.nn.softmax(attention.scorer(query), axis=-1).numpy()  # over the 7 positions
    expected = everywhere[:, :5] * mask.numpy()
    np.testing.assert_allclose(weights.numpy(), expected, atol=1e-6)
    assert (weights.numpy().sum(axis=1) < 1 - 1e-3).all()  # every sentence loses some weight
    np.testing.assert_allclose(context.numpy(), np.einsum("bs,bsd->bd", expected, values.numpy()), atol=1e-6)
    shorter = LocationAttention(3, padding="zeros", name="b")  # a batch longer than the positions
    shorter.build_for(6, 4)
    _, weights = shorter(query, shorter.memory(values, mask))
    assert weights.shape == (3, 5) and (weights.numpy()[:, 3:] == 0).all()

"""The fast RNNPB LSTM is the thesis's model: Keras LSTM on [input; PB] at every step."""

import numpy as np
import tensorflow as tf

from nmtcore.lstm import StackedLSTM


def keras_copy(stacked, input_dim):
    """Keras LSTMs with the weights of ``stacked`` (layer 1 seeing the concatenated input)."""
    layers = []
    for k in range(stacked.num_layers):
        layer = tf.keras.layers.LSTM(stacked.units, return_sequences=True, return_state=True)
        layer.build(tf.TensorShape([None, None, input_dim if k == 0 else stacked.units]))
        layer.set_weights([stacked.kernels[k].numpy(), stacked.recurrent_kernels[k].numpy(),
                           stacked.biases[k].numpy()])
        layers.append(layer)
    return layers


def test_constant_input_equals_concatenation_every_step():
    tf.random.set_seed(0)
    batch, steps, dim, const = 3, 7, 5, 11
    lstm = StackedLSTM(6, 2, constant_dim=const)
    x, c = tf.random.normal([batch, steps, dim]), tf.random.normal([batch, const])
    out, finals = lstm(x, constant=c)
    h = tf.concat([x, tf.tile(c[:, None, :], [1, steps, 1])], axis=-1)
    for layer in keras_copy(lstm, dim + const):
        h, last_h, last_c = layer(h)
    np.testing.assert_allclose(out.numpy(), h.numpy(), atol=1e-5)
    np.testing.assert_allclose(finals[-1][1].numpy(), last_c.numpy(), atol=1e-5)


def test_step_by_step_equals_whole_sequence():
    tf.random.set_seed(1)
    lstm = StackedLSTM(4, 3, constant_dim=2)
    x, c = tf.random.normal([2, 5, 3]), tf.random.normal([2, 2])
    out, _ = lstm(x, constant=c)
    state, gates = lstm.zero_state(2), lstm.constant_gates(c)
    for t in range(5):
        y, state = lstm.step(x[:, t], state, gates)
        np.testing.assert_allclose(y.numpy(), out[:, t].numpy(), atol=1e-5)


def test_masked_steps_keep_the_state_of_the_last_real_token():
    tf.random.set_seed(2)
    lstm = StackedLSTM(4, 2)
    x = tf.random.normal([1, 6, 3])
    _, short = lstm(x[:, :4])
    _, padded = lstm(x, mask=tf.constant([[True] * 4 + [False] * 2]))
    for (h1, c1), (h2, c2) in zip(short, padded):
        np.testing.assert_allclose(h1.numpy(), h2.numpy(), atol=1e-6)
        np.testing.assert_allclose(c1.numpy(), c2.numpy(), atol=1e-6)


def test_dropout_only_when_training():
    lstm = StackedLSTM(4, 2, dropout=0.5)
    x = tf.random.normal([2, 3, 3])
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c, _ = lstm(x, rng=tf.random.Generator.from_seed(1))
    assert not np.allclose(a.numpy(), c.numpy())

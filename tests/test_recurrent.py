"""The recurrent stack: the fast RNNPB LSTM is the thesis's model (Keras LSTM on [input; PB] at every
step), its GRU and SRN layers are Keras' GRU (reset after) and SimpleRNN, and its skip connections
are Keras layers reading the input too."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.layers.recurrent import StackedRNN


KERAS = {"lstm": tf.keras.layers.LSTM, "gru": tf.keras.layers.GRU, "srn": tf.keras.layers.SimpleRNN}


def keras_copy(stacked):
    """Keras layers with the weights of ``stacked`` (each seeing its concatenated inputs)."""
    layers = []
    for k in range(stacked.num_layers):
        layer = KERAS[stacked.cell.name](stacked.units, return_sequences=True, return_state=True)
        layer.build(tf.TensorShape([None, None, stacked.kernels[k].shape[0]]))
        layer.set_weights([stacked.kernels[k].numpy(), stacked.recurrent_kernels[k].numpy(),
                           stacked.biases[k].numpy()])
        layers.append(layer)
    return layers


def test_constant_input_equals_concatenation_every_step():
    tf.random.set_seed(0)
    batch, steps, dim, const = 3, 7, 5, 11
    lstm = StackedRNN(6, 2, constant_dim=const)
    x, c = tf.random.normal([batch, steps, dim]), tf.random.normal([batch, const])
    out, finals = lstm(x, constant=c)
    h = tf.concat([x, tf.tile(c[:, None, :], [1, steps, 1])], axis=-1)
    for layer in keras_copy(lstm):
        h, last_h, last_c = layer(h)
    np.testing.assert_allclose(out.numpy(), h.numpy(), atol=1e-5)
    np.testing.assert_allclose(finals[-1][1].numpy(), last_c.numpy(), atol=1e-5)


@pytest.mark.parametrize("cell", ["gru", "srn"])
def test_gru_and_srn_layers_are_the_keras_layers(cell):
    tf.random.set_seed(3)
    stacked = StackedRNN(5, 2, cell=cell)
    x = tf.random.normal([3, 6, 4])
    stacked.build(x.shape)
    # Non-zero biases, so that the recurrent GRU bias (inside the reset product) is checked too.
    for bias in stacked.biases:
        bias.assign(tf.random.normal(bias.shape))
    out, finals = stacked(x)
    h = x
    for layer in keras_copy(stacked):
        h, last = layer(h)
    np.testing.assert_allclose(out.numpy(), h.numpy(), atol=1e-5)
    np.testing.assert_allclose(finals[-1][0].numpy(), last.numpy(), atol=1e-5)


@pytest.mark.parametrize("skip_inputs, skip_outputs", [(True, False), (False, True), (True, True)])
def test_skip_connections_are_keras_layers_that_read_the_input_too(skip_inputs, skip_outputs):
    """Graves's Deep LSTM: a layer above the first reads [h_below; x]; the output is every layer's h."""
    tf.random.set_seed(4)
    stacked = StackedRNN(5, 3, skip_inputs=skip_inputs, skip_outputs=skip_outputs)
    x = tf.random.normal([2, 6, 4])
    out, finals = stacked(x)
    hs = []
    for layer in keras_copy(stacked):
        below = x if not hs else tf.concat([hs[-1], x], -1) if skip_inputs else hs[-1]
        h, last_h, last_c = layer(below)
        hs.append(h)
    assert [k.shape[0] for k in stacked.kernels] == [4] + [5 + 4 * skip_inputs] * 2
    assert out.shape[-1] == stacked.output_units == 5 * (3 if skip_outputs else 1)
    np.testing.assert_allclose(out.numpy(), (tf.concat(hs, -1) if skip_outputs else hs[-1]).numpy(), atol=1e-5)
    np.testing.assert_allclose(finals[-1][1].numpy(), last_c.numpy(), atol=1e-5)


@pytest.mark.parametrize("cell", ["lstm", "gru", "srn"])
def test_step_by_step_equals_whole_sequence(cell):
    tf.random.set_seed(1)
    lstm = StackedRNN(4, 3, cell=cell, constant_dim=2)
    x, c = tf.random.normal([2, 5, 3]), tf.random.normal([2, 2])
    out, _ = lstm(x, constant=c)
    state, gates = lstm.zero_state(2), lstm.constant_gates(c)
    for t in range(5):
        y, state = lstm.step(x[:, t], state, gates)
        np.testing.assert_allclose(y.numpy(), out[:, t].numpy(), atol=1e-5)


@pytest.mark.parametrize("cell", ["lstm", "gru", "srn"])
def test_masked_steps_keep_the_state_of_the_last_real_token(cell):
    tf.random.set_seed(2)
    lstm = StackedRNN(4, 2, cell=cell)
    x = tf.random.normal([1, 6, 3])
    _, short = lstm(x[:, :4])
    _, padded = lstm(x, mask=tf.constant([[True] * 4 + [False] * 2]))
    for layer_short, layer_padded in zip(short, padded):
        assert len(layer_short) == lstm.cell.state_size
        for a, b in zip(layer_short, layer_padded):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


def test_dropout_only_when_training():
    lstm = StackedRNN(4, 2, dropout=0.5)
    x = tf.random.normal([2, 3, 3])
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c, _ = lstm(x, rng=tf.random.Generator.from_seed(1))
    assert not np.allclose(a.numpy(), c.numpy())


@pytest.mark.parametrize("skip", [False, True])
def test_steps_with_dropout_masks_equal_the_whole_sequence_with_dropout(skip):
    """Step-by-step callers (the attentive decoder) drop the same units at every step, as ``call``,
    with skip connections too."""
    rnn = StackedRNN(4, 2, cell="gru", dropout=0.5, skip_inputs=skip, skip_outputs=skip)
    x = tf.random.normal([2, 5, 3])
    out, _ = rnn(x, rng=tf.random.Generator.from_seed(2))
    masks = rnn.dropout_masks(2, 3, tf.random.Generator.from_seed(2))
    assert rnn.dropout_masks(2, 3, None) == [None, None]
    state = rnn.zero_state(2)
    for t in range(5):
        y, state = rnn.step(x[:, t], state, dropout_masks=masks)
        np.testing.assert_allclose(y.numpy(), out[:, t].numpy(), atol=1e-5)
    assert not np.allclose(out.numpy(), rnn(x)[0].numpy())


def test_dropout_drops_the_constant_input_unless_told_not_to():
    """--no_pb_dropout: the PB reaches layer 1 whole; every other unit is dropped as before (the
    same masks from the same generator, so the default's dropout is unchanged)."""
    x, c = tf.zeros([2, 1, 3]), tf.random.normal([2, 5])  # zero inputs: only the constant's drop shows
    dropped = StackedRNN(4, 1, dropout=0.5, constant_dim=5)
    dropped(x, constant=c)
    kept = StackedRNN(4, 1, dropout=0.5, constant_dim=5, constant_dropout=False)
    kept(x, constant=c)
    kept.set_weights(dropped.get_weights())
    for rnn, changes in ((dropped, True), (kept, False)):
        train, _ = rnn(x, constant=c, rng=tf.random.Generator.from_seed(3))
        assert np.allclose(train.numpy(), rnn(x, constant=c)[0].numpy()) != changes
    # Word inputs (and, in deeper stacks, hidden units) are dropped by the same masks either way.
    x = tf.random.normal([2, 4, 3])
    deep = [StackedRNN(4, 2, dropout=0.5, constant_dim=5, constant_dropout=keep) for keep in (True, False)]
    deep[0](x, constant=c)
    deep[1](x, constant=c)
    deep[1].set_weights(deep[0].get_weights())
    zero = tf.zeros_like(c)
    outputs = [rnn(x, constant=zero, rng=tf.random.Generator.from_seed(4))[0].numpy() for rnn in deep]
    np.testing.assert_allclose(outputs[0], outputs[1], atol=1e-6)

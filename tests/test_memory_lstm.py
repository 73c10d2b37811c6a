"""The memory-controlling LSTM of Grefenstette et al. 2015 §3.4."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.layers.memory_controller import ControllerState, MemoryLSTM


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_step_by_step_equals_whole_sequence(kind):
    tf.random.set_seed(0)
    layer = MemoryLSTM(6, 4, kind=kind, output_size=5)
    x = tf.random.normal([3, 5, 7])
    outputs, final = layer(x)
    state = layer.initial_state(3, 5)
    for t in range(5):
        out, state = layer.step(x[:, t], state)
        np.testing.assert_allclose(out.numpy(), outputs[:, t].numpy(), atol=1e-5)
    np.testing.assert_allclose(state.read.numpy(), final.read.numpy(), atol=1e-5)


def test_the_controller_reads_the_input_and_every_read():
    # Deque: two reads of memory_width concatenated to the input (§3.4, last paragraph).
    layer = MemoryLSTM(6, 4, kind="deque")
    layer(tf.zeros([1, 2, 7]))
    assert layer.lstm.kernels[0].shape == (7 + 2 * 4, 4 * 6)
    assert layer.push.kernel.shape == layer.pop.kernel.shape == (6, 2)


@pytest.mark.parametrize("kind, row", [("stack", -1), ("queue", 0)])
def test_a_controller_that_always_pushes_and_never_pops_reads_the_top_or_the_front(kind, row):
    # d = sigmoid(30) = 1 and u = sigmoid(-30) = 0 whatever the input: the memory then holds every
    # v_t with strength 1, so the stack reads the latest value and the queue the first one.
    tf.random.set_seed(2)
    layer = MemoryLSTM(5, 3, kind=kind, pop_bias=-30.0)
    layer(tf.zeros([1, 1, 2]))
    layer.push.kernel.assign(tf.zeros_like(layer.push.kernel))
    layer.push.bias.assign([30.0])
    layer.pop.kernel.assign(tf.zeros_like(layer.pop.kernel))
    state = layer.initial_state(2, 4)
    for t in range(4):
        _, state = layer.step(tf.random.normal([2, 2]), state)
        written = state.memory.values[:, : t + 1]
        np.testing.assert_allclose(state.read.numpy(), written[:, row].numpy(), atol=1e-6)


def test_pop_bias_starts_at_the_given_value_and_other_biases_at_zero():
    layer = MemoryLSTM(6, 4, pop_bias=-2.5)
    layer(tf.zeros([1, 2, 3]))
    np.testing.assert_array_equal(layer.pop.bias.numpy(), [-2.5])
    assert not layer.push.bias.numpy().any() and not layer.value.bias.numpy().any()


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_padding_leaves_the_state_of_the_last_real_step(kind):
    tf.random.set_seed(1)
    layer = MemoryLSTM(4, 3, kind=kind)
    x = tf.random.normal([1, 7, 2])
    layer(x[:, :1])
    short_out, short = layer(x[:, :4], initial_state=layer.initial_state(1, 7))
    padded_out, padded = layer(x[:, :6], mask=tf.constant([[True] * 4 + [False] * 2]),
                               initial_state=layer.initial_state(1, 7))
    np.testing.assert_allclose(padded_out[:, :4].numpy(), short_out.numpy(), atol=1e-6)
    np.testing.assert_allclose(padded.read.numpy(), short.read.numpy(), atol=1e-6)
    for a, b in zip(tf.nest.flatten(padded.lstm), tf.nest.flatten(short.lstm)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)
    # The padded steps' rows (strength 0) sit between the source and what comes next: the next
    # step must pop, push and read as if they were not there.
    (next_short, after_short), (next_padded, after_padded) = (layer.step(x[:, 6], state) for state in (short, padded))
    np.testing.assert_allclose(next_padded.numpy(), next_short.numpy(), atol=1e-6)
    np.testing.assert_allclose(after_padded.read.numpy(), after_short.read.numpy(), atol=1e-6)


def test_one_traced_function_runs_any_length_and_trains_every_weight():
    layer = MemoryLSTM(4, 3, kind="stack")

    @tf.function(input_signature=[tf.TensorSpec([None, None, 2])])
    def loss_and_gradients(x):
        with tf.GradientTape() as tape:
            outputs, _ = layer(x)
            loss = tf.reduce_sum(outputs ** 2)
        return loss, tape.gradient(loss, layer.trainable_variables)

    for steps in (3, 7):
        _, gradients = loss_and_gradients(tf.random.normal([2, steps, 2]))
        assert all(g is not None and np.isfinite(g.numpy()).all() for g in gradients)
    # Trainable: the LSTM, the four projections and the initial LSTM state (h0, c0).
    assert len(layer.trainable_variables) == 3 + 4 * 2 + 2


def test_push_and_pop_biases_start_per_head_when_given_per_head():
    layer = MemoryLSTM(6, 4, kind="deque", push_bias=(0.0, -3.0), pop_bias=(-3.0, -1.0))
    layer(tf.zeros([1, 2, 3]))
    np.testing.assert_array_equal(layer.push.bias.numpy(), [0.0, -3.0])
    np.testing.assert_array_equal(layer.pop.bias.numpy(), [-3.0, -1.0])
    with pytest.raises(ValueError, match="3 initial biases for 2 heads"):
        MemoryLSTM(6, 4, kind="deque", pop_bias=(-3.0, -1.0, 0.0))


@pytest.mark.parametrize("kind", ["stack", "deque"])
def test_operations_are_the_push_and_pop_strengths_each_step_gave_and_change_nothing_else(kind):
    tf.random.set_seed(3)
    layer = MemoryLSTM(5, 3, kind=kind)
    x = tf.random.normal([2, 6, 4])
    mask = tf.constant([[True] * 6, [True] * 4 + [False] * 2])
    outputs, final = layer(x, mask=mask)
    with_ops, final_with_ops, ops = layer(x, mask=mask, operations=True)
    np.testing.assert_array_equal(with_ops.numpy(), outputs.numpy())
    np.testing.assert_array_equal(final_with_ops.read.numpy(), final.read.numpy())
    heads = len(layer.memory.heads)
    assert ops.shape == (2, 6, 2, heads)
    # Step by step, the controller's d_t and u_t from its output o'_t (§3.4) are what ops holds.
    state = layer.initial_state(2, 6)
    for t in range(6):
        controller_out, _ = layer.lstm.step(tf.concat([x[:, t], state.read], axis=-1), state.lstm)
        expected = tf.stack([layer.push(controller_out), layer.pop(controller_out)], axis=1).numpy()
        expected[1] *= bool(mask[1, t])  # a padded step pushes and pops nothing
        np.testing.assert_allclose(ops[:, t].numpy(), expected, atol=1e-6)
        _, state = layer.step(x[:, t], state, active=mask[:, t])
    assert not ops[1, 4:].numpy().any()


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_whole_sequence_gradients_equal_step_by_step_ones(kind):
    """``call`` takes its reads' backward values from the final memory (``neural_memory.read``); its
    gradients, over a source then a target call (training's two) with padding, equal those of the
    plain step-by-step computation, each sequence alone over its real steps."""
    tf.random.set_seed(3)
    layer = MemoryLSTM(5, 3, kind=kind, output_size=4)
    lengths, target_steps = [4, 2], 3
    source, target = tf.random.normal([2, 4, 6]), tf.random.normal([2, target_steps, 6])
    weights = tf.random.normal([2, 4 + target_steps, 4])
    layer(source[:, :1])

    @tf.function
    def whole():
        with tf.GradientTape() as tape:
            mask = tf.sequence_mask(lengths, 4)
            read, state = layer(source, mask=mask, initial_state=layer.initial_state(2, 4 + target_steps))
            generated, _ = layer(target, initial_state=state)
            masked = read * tf.cast(mask, read.dtype)[:, :, None]
            loss = tf.reduce_sum(tf.concat([masked, generated], axis=1) * weights)
        return tape.gradient(loss, layer.trainable_variables)

    with tf.GradientTape() as tape:
        loss = 0.0
        for b, length in enumerate(lengths):
            state = layer.initial_state(1, 4 + target_steps)
            steps = [source[b:b + 1, t] for t in range(length)] + [target[b:b + 1, t] for t in range(target_steps)]
            step_weights = [weights[b:b + 1, t] for t in range(length)] + [weights[b:b + 1, 4 + t] for t in range(target_steps)]
            for x, w in zip(steps, step_weights):
                out, state = layer.step(x, state)
                loss += tf.reduce_sum(out * w)
    expected = tape.gradient(loss, layer.trainable_variables)
    for got, want, variable in zip(whole(), expected, layer.trainable_variables):
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5, err_msg=variable.name)


def equations_step(layer, x, state):
    """One step as §3.4 writes it, from the layer's own pieces: the LSTM on [x_t; r_{t-1}], the
    four projections of o'_t (Keras Dense layers) and the memory, each product computed apart."""
    controller_out, lstm = layer.lstm.step(tf.concat([x, state.read], axis=-1), state.lstm)
    heads = len(layer.memory.heads)
    values = tf.reshape(layer.value(controller_out), [-1, heads, layer.memory_width])
    memory, reads = layer.memory.step(state.memory, layer.push(controller_out), layer.pop(controller_out), values)
    return layer.out(controller_out), ControllerState(lstm, tf.reshape(reads, [-1, layer.read_size]), memory)


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_outputs_and_gradients_equal_the_equations_computed_step_by_step(kind):
    """``call`` fuses the step's products, computes x's gates before its loop and o_t after it,
    and has its own backward pass for the products and the reads: the outputs, the final reads
    and every weight's gradient are those of the plain equations."""
    tf.random.set_seed(4)
    layer = MemoryLSTM(6, 4, kind=kind, output_size=5)
    x, weights = tf.random.normal([3, 6, 7]), tf.random.normal([3, 6, 5])
    layer(x[:, :1])

    def loss(outputs, final):
        return tf.reduce_sum(outputs * weights) + tf.reduce_sum(final.read ** 2)

    with tf.GradientTape() as tape:
        outputs, final = tf.function(layer)(x)
        fused = loss(outputs, final)
    got = tape.gradient(fused, layer.trainable_variables)
    with tf.GradientTape() as tape:
        state, stepped = layer.initial_state(3, 6), []
        for t in range(6):
            out, state = equations_step(layer, x[:, t], state)
            stepped.append(out)
        stepped = tf.stack(stepped, axis=1)
        plain = loss(stepped, state)
    expected = tape.gradient(plain, layer.trainable_variables)
    np.testing.assert_allclose(outputs.numpy(), stepped.numpy(), atol=1e-5)
    np.testing.assert_allclose(final.read.numpy(), state.read.numpy(), atol=1e-5)
    for g, want, variable in zip(got, expected, layer.trainable_variables):
        np.testing.assert_allclose(g.numpy(), want.numpy(), atol=1e-5, err_msg=variable.name)

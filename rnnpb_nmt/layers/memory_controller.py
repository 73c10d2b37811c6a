"""An LSTM that controls a neural Stack, Queue or DeQue (Grefenstette et al. 2015, §3.4, Figure 1c).

At step t the LSTM reads [x_t; r_{t-1}] (for the deque, both reads). From its output o'_t:

    d_t = sigmoid(W_d o'_t + b_d)   push strengths, one per head
    u_t = sigmoid(W_u o'_t + b_u)   pop strengths, one per head
    v_t = tanh(W_v o'_t + b_v)      values, one per head
    o_t = tanh(W_o o'_t + b_o)      the layer's output

(d_t, u_t, v_t) drive the memory, whose read r_t is fed back at t+1. As in the paper, the initial
LSTM state is trained (initialised randomly), while r_0 and the empty memory are zeros.

The pop bias b_u starts at ``pop_bias`` (negative), so that an untrained controller pops little
and what it pushes survives long enough for the gradient to learn to use it: the paper's Appendix
B (in its arXiv version, 1506.02516; the project's copy stops at §6), whose -1 (u_0 =
sigmoid(-1) = 0.27) is the default, set for every memory and task. The push bias b_d starts at
``push_bias`` (0: d_0 = 0.5). Either is one number for every head or one per head (the deque's:
top, bottom), since a deque whose two ends start alike reads at each end only that end's last
pushes (see ``rnnpb_nmt/models/memory_lstm/model.py``, ``--deque_biases``).
"""

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from rnnpb_nmt.layers.neural_memory import Memory, MemoryState
from rnnpb_nmt.layers.recurrent import StackedRNN


class ControllerState(NamedTuple):
    """The recurrent state H_t of §3.4: LSTM state [(h, c)], last reads (B, H * m), memory."""

    lstm: list
    read: tf.Tensor
    memory: MemoryState


class MemoryLSTM(tf.keras.layers.Layer):
    """One LSTM layer of ``units`` with a memory of kind ``kind`` ("stack", "queue", "deque") whose
    values have ``memory_width`` units (the paper's "embedding size" m, 256 in §4.4); outputs have
    ``output_size`` units (default ``units``)."""

    def __init__(self, units, memory_width, kind="stack", output_size=None, pop_bias=-1.0, push_bias=0.0, **kwargs):
        super().__init__(**kwargs)
        self.units, self.memory_width = units, memory_width
        self.output_size = output_size or units
        self.memory = Memory(kind)
        heads = len(self.memory.heads)
        self.lstm = StackedRNN(units, 1)
        self.push = tf.keras.layers.Dense(heads, activation="sigmoid", name="push",
                                          bias_initializer=_per_head(push_bias, heads))
        self.pop = tf.keras.layers.Dense(heads, activation="sigmoid", name="pop",
                                         bias_initializer=_per_head(pop_bias, heads))
        self.value = tf.keras.layers.Dense(heads * memory_width, activation="tanh", name="value")
        self.out = tf.keras.layers.Dense(self.output_size, activation="tanh", name="output")

    @property
    def read_size(self):
        return len(self.memory.heads) * self.memory_width

    def build(self, input_shape):
        in_dim = int(input_shape[-1])
        self.lstm.build(tf.TensorShape([None, None, in_dim + self.read_size]))
        for dense in (self.push, self.pop, self.value, self.out):
            dense.build(tf.TensorShape([None, self.units]))
        self.initial_h = self.add_weight("initial_h", [self.units], initializer="random_normal")
        self.initial_c = self.add_weight("initial_c", [self.units], initializer="random_normal")
        super().build(input_shape)

    def initial_state(self, batch, capacity):
        """H_0 for ``batch`` sequences with room in the memory for ``capacity`` steps."""
        h, c = (tf.tile(w[None, :], [batch, 1]) for w in (self.initial_h, self.initial_c))
        return ControllerState([(h, c)], tf.zeros([batch, self.read_size]),
                               self.memory.initial_state(batch, capacity, self.memory_width))

    def step(self, x, state, active=None):
        """One step (for greedy generation): x (B, E) -> (o_t (B, output_size), H_t). The layer
        must be built (called once, or ``build((None, E))``) and ``state`` made by
        ``initial_state`` with room for every step to come. Where ``active`` (B,) is False the
        memory pushes and pops nothing, so that it stays as it was (``call``'s padding)."""
        controller_out, state, _ = self._step(self._input_gates(x), state, self._loop_weights(), active)
        return self.out(controller_out), state

    def _input_gates(self, x):
        """x's share of the LSTM's gates, with the bias: x (..., E) -> (..., 4 units). It does not
        depend on the memory, so ``call`` computes it for every step at once, before its loop."""
        kernel = self.lstm.kernels[0]
        return tf.tensordot(x, kernel[: kernel.shape[0] - self.read_size], 1) + self.lstm.biases[0]

    def _loop_weights(self):
        """The kernels of the two products a step computes, each with its transpose for the backward
        pass (``_times``), made once per sequence: [r_{t-1}; h_{t-1}] -> the LSTM's gates and
        o'_t -> [d_t; u_t; v_t] (with the bias of the latter). One product each instead of two,
        or three, per step."""
        kernel = self.lstm.kernels[0]
        recurrent = tf.concat([kernel[kernel.shape[0] - self.read_size:], self.lstm.recurrent_kernels[0]], 0)
        heads = (self.push, self.pop, self.value)
        memory = tf.concat([dense.kernel for dense in heads], 1)
        return ((recurrent, tf.transpose(recurrent)), (memory, tf.transpose(memory)),
                tf.concat([dense.bias for dense in heads], 0))

    def _step(self, input_gates, state, weights, active=None, final_values=None):
        """One step from x_t's ``input_gates`` with the ``_loop_weights``: (o'_t, H_t, the push and
        pop strengths it gave the memory (B, 2, H): [d_t, u_t]); ``final_values`` as for
        ``Memory.step``."""
        recurrent, memory_kernel, memory_bias = weights
        h, c = state.lstm[0]
        recurrent_gates = _times(tf.concat([state.read, h], axis=-1), *recurrent)
        controller_out, c = self.lstm.cell.step(input_gates, recurrent_gates, (h, c))
        heads = len(self.memory.heads)
        projected = _times(controller_out, *memory_kernel) + memory_bias
        push, pop, values = tf.split(projected, [heads, heads, heads * self.memory_width], axis=-1)
        push, pop = tf.sigmoid(push), tf.sigmoid(pop)
        values = tf.reshape(tf.tanh(values), [-1, heads, self.memory_width])
        if active is not None:
            on = tf.cast(active, push.dtype)[:, None]
            push, pop = push * on, pop * on
        memory, reads = self.memory.step(state.memory, push, pop, values, final_values)
        read = tf.reshape(reads, [-1, self.read_size])
        return controller_out, ControllerState([(controller_out, c)], read, memory), tf.stack([push, pop], axis=1)

    def call(self, inputs, mask=None, initial_state=None, operations=False):
        """Run over whole sequences: inputs (B, T, E), mask (B, T) bool where False steps (padding)
        leave the state unchanged; ``initial_state`` (default: ``initial_state(B, T)``) must have
        room for T more steps. Returns (outputs (B, T, output_size), final state), and with
        ``operations`` the push and pop strengths of every step (B, T, 2, H): [d_t, u_t] per head,
        0 on padding, to see how a controller uses its memory."""
        batch, steps = tf.shape(inputs)[0], tf.shape(inputs)[1]
        state = initial_state if initial_state is not None else self.initial_state(batch, steps)
        # x's gates, read step by step from an array: its gradient is one (B, 4 units) a step,
        # where a slice's would be a whole (T, B, 4 units) tensor of zeros around it.
        input_gates = self._input_gates(tf.transpose(inputs, [1, 0, 2]))
        input_gates = tf.TensorArray(input_gates.dtype, size=steps).unstack(input_gates)
        weights = self._loop_weights()
        time_mask = None if mask is None else tf.transpose(mask)

        # A while loop rather than tf.scan: scan would stack the state of every step, and the
        # memory alone is (B, T, m) per step. For the same reason the reads' backward pass takes
        # the memory's values from the final state (``neural_memory.read``), filled in (transposed)
        # after the loop.
        final_memory = {}

        def final_values():
            return final_memory["values"]

        def body(t, state, outputs, ops):
            active = None if time_mask is None else time_mask[t]
            output, new, step_ops = self._step(input_gates.read(t), state, weights, active, final_values)
            if time_mask is not None:
                new = _keep_where_inactive(time_mask[t], new, state)
            return t + 1, new, outputs.write(t, output), ops.write(t, step_ops) if operations else ops

        outputs = tf.TensorArray(inputs.dtype, size=steps)
        # Without ``operations`` the strengths are not kept: an empty array stands in for them.
        ops = tf.TensorArray(inputs.dtype, size=steps if operations else 0)
        _, final, outputs, ops = tf.while_loop(lambda t, *_: t < steps, body,
                                               (tf.constant(0), state, outputs, ops))
        final_memory["values"] = tf.transpose(final.memory.values, [0, 2, 1])
        # o_t does not feed back: the output projection runs once, after the loop.
        outputs = self.out(tf.transpose(outputs.stack(), [1, 0, 2]))
        if operations:
            return outputs, final, tf.transpose(ops.stack(), [1, 0, 2, 3])
        return outputs, final


def _times(a, w, w_t):
    """a @ w, whose backward pass multiplies by ``w_t``, w's transpose made once per sequence:
    matmul's own gradient multiplies by the transpose of the stored w, which on CPU takes several
    times as long as by a stored matrix (with a (10, 1024) gradient and a (576, 1024) w, a quarter
    of a DeQue-LSTM's training step). Only the backward pass uses ``w_t``, so that a graph without
    one (inference) leaves it out."""
    @tf.custom_gradient
    def product(a, w):
        def gradient(upstream):
            return tf.matmul(upstream, w_t), tf.matmul(a, upstream, transpose_a=True)
        return tf.matmul(a, w), gradient

    return product(a, w)


def _per_head(bias, heads):
    """An initializer of ``heads`` biases from one number (every head's) or one per head."""
    biases = np.full(heads, bias, float) if np.ndim(bias) == 0 else np.asarray(bias, float)
    if len(biases) != heads:
        raise ValueError(f"{len(biases)} initial biases for {heads} heads")
    return tf.keras.initializers.Constant(biases.tolist())


def _keep_where_inactive(active, new, old):
    """The LSTM state and reads of ``new`` for the sequences where ``active`` (B,) is True, of
    ``old`` elsewhere. The memory needs no choice: an inactive step pushed and popped nothing, so
    it only left a row of strength 0 behind, which no pop or read sees. (A choice between two
    (B, rows, m) value tensors would be one more pass over the whole memory at every step, forward
    and backward; unmasked steps skip even this.)"""
    lstm = tf.nest.map_structure(lambda n, o: tf.where(active[:, None], n, o), new.lstm, old.lstm)
    return ControllerState(lstm, tf.where(active[:, None], new.read, old.read), new.memory)

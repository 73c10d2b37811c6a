"""A stack of LSTM layers that can take a per-sentence constant input at every step.

The RNNPB feeds ``[embedding(x_t); PB]`` to its first LSTM. The PB is the same at every step, so
its share of the input product, ``PB @ W_pb``, is computed once per sentence and added to the
gates, instead of being multiplied again at every step (with 1024 PB units against 128 embedding
units that product would dominate the layer). The result is exactly the concatenation model:
``[x; c] @ W = x @ W_x + c @ W_c``; ``tests/test_lstm.py`` checks it.

Gate layout, initialisers and dropout semantics are those of ``tf.keras.layers.LSTM`` (input,
forget, cell, output; Glorot kernels, orthogonal recurrent kernels, forget bias 1; one dropout
mask per sequence on the inputs of every layer), but the masks are drawn from the generator the
caller passes as ``rng``, so that the trainer controls them. Each layer's input product is
computed for all time steps in one matrix multiplication, so the time loop only holds the
recurrent product.
"""

import tensorflow as tf


class StackedLSTM(tf.keras.layers.Layer):
    """``num_layers`` LSTMs of ``units``; layer 1 may take an extra constant input of ``constant_dim``."""

    def __init__(self, units, num_layers, dropout=0.0, constant_dim=0, **kwargs):
        super().__init__(**kwargs)
        self.units, self.num_layers = units, num_layers
        self.dropout, self.constant_dim = dropout, constant_dim

    def build(self, input_shape):
        in_dim = int(input_shape[-1])
        forget_one = tf.concat([tf.zeros([self.units]), tf.ones([self.units]), tf.zeros([2 * self.units])], 0)
        self.kernels, self.recurrent_kernels, self.biases = [], [], []
        for layer in range(self.num_layers):
            layer_in = in_dim + self.constant_dim if layer == 0 else self.units
            self.kernels.append(self.add_weight(f"kernel_{layer}", [layer_in, 4 * self.units], initializer="glorot_uniform"))
            self.recurrent_kernels.append(self.add_weight(
                f"recurrent_kernel_{layer}", [self.units, 4 * self.units], initializer="orthogonal"))
            self.biases.append(self.add_weight(
                f"bias_{layer}", [4 * self.units], initializer=lambda shape, dtype=None: forget_one))
        super().build(input_shape)

    def zero_state(self, batch_size):
        zeros = tf.zeros([batch_size, self.units])
        return [(zeros, zeros) for _ in range(self.num_layers)]

    def constant_gates(self, constant, dropout_mask=None):
        """Layer 1's gate contribution of the constant input: computed once, reused every step."""
        if dropout_mask is not None:
            constant = constant * dropout_mask
        return tf.matmul(constant, self.kernels[0][-self.constant_dim:])

    def _cell(self, gates, state):
        h, c = state
        i, f, g, o = tf.split(gates, 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, c

    def _input_kernel(self, layer):
        kernel = self.kernels[layer]
        return kernel[: kernel.shape[0] - self.constant_dim] if layer == 0 and self.constant_dim else kernel

    def _dropout_masks(self, batch_size, dims, rng):
        if rng is None or self.dropout == 0:
            return [None] * len(dims)
        keep = 1.0 - self.dropout
        return [tf.cast(rng.uniform([batch_size, d]) < keep, tf.float32) / keep for d in dims]

    def call(self, inputs, initial_state=None, mask=None, constant=None, rng=None):
        """Run over a whole batch of sequences.

        inputs: (B, T, D); mask: (B, T) bool, where False steps leave the state unchanged (so the
        final state is the one after the last real token); constant: (B, constant_dim); rng: the
        ``tf.random.Generator`` of training-time dropout, None (no dropout) otherwise.
        Returns (outputs of the last layer (B, T, units), final [(h, c)] per layer).
        """
        batch = tf.shape(inputs)[0]
        state = initial_state if initial_state is not None else self.zero_state(batch)
        dims = [inputs.shape[-1]] + [self.units] * (self.num_layers - 1)
        masks = self._dropout_masks(batch, dims + ([self.constant_dim] if constant is not None else []), rng)
        extra = self.constant_gates(constant, masks[-1]) if constant is not None else None
        time_mask = tf.transpose(mask)[:, :, None] if mask is not None else None
        x, finals = inputs, []
        for layer in range(self.num_layers):
            if masks[layer] is not None:
                x = x * masks[layer][:, None, :]
            gates = tf.einsum("btd,dg->tbg", x, self._input_kernel(layer)) + self.biases[layer]
            if layer == 0 and extra is not None:
                gates += extra
            x, final = self._run_layer(gates, state[layer], self.recurrent_kernels[layer], time_mask)
            finals.append(final)
        return x, finals

    def _run_layer(self, gates, state, recurrent_kernel, time_mask):
        """Time loop of one layer over precomputed time-major input gates (T, B, 4u)."""
        def step(carry, inp):
            h, c = carry[0], carry[1]
            g, m = inp
            new_h, new_c = self._cell(g + tf.matmul(h, recurrent_kernel), (h, c))
            if m is not None:
                new_h, new_c = tf.where(m, new_h, h), tf.where(m, new_c, c)
            return new_h, new_c

        if time_mask is None:
            hs, cs = tf.scan(lambda carry, g: step(carry, (g, None)), gates, initializer=tuple(state))
        else:
            hs, cs = tf.scan(step, (gates, time_mask), initializer=tuple(state))
        return tf.transpose(hs, [1, 0, 2]), (hs[-1], cs[-1])

    def step(self, x, state, extra_gates=None):
        """One time step for decoding: x (N, D) -> (output (N, units), new state)."""
        new_state = []
        for layer in range(self.num_layers):
            gates = tf.matmul(x, self._input_kernel(layer)) + self.biases[layer]
            if layer == 0 and extra_gates is not None:
                gates += extra_gates
            x, c = self._cell(gates + tf.matmul(state[layer][0], self.recurrent_kernels[layer]), state[layer])
            new_state.append((x, c))
        return x, new_state

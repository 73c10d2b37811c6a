"""A stack of recurrent layers (LSTM, GRU or SRN) that can take a per-sentence constant input.

The RNNPB feeds ``[embedding(x_t); PB]`` to its first LSTM. The PB is the same at every step, so
its share of the input product, ``PB @ W_pb``, is computed once per sentence and added to the
gates, instead of being multiplied again at every step (with 1024 PB units against 128 embedding
units that product would dominate the layer). The result is exactly the concatenation model:
``[x; c] @ W = x @ W_x + c @ W_c``; ``tests/test_recurrent.py`` checks it.

The unit of every layer is a cell of ``rnnpb_nmt.layers.cells`` (the LSTM by default). Layouts and
initialisers are those of the Keras layers (Glorot kernels, orthogonal recurrent kernels, the
LSTM's forget bias 1); dropout is one mask per sequence on the inputs of every layer, drawn from
the generator the caller passes as ``rng``, so that the trainer controls it. Each layer's input
product is computed for all time steps in one matrix multiplication, so the time loop only holds
the recurrent product. A layer's state is a tuple: (h, c) for the LSTM, (h,) for the others;
its output is h.

Two options make the stack the Deep LSTM of Graves (2013, "Generating sequences with recurrent
neural networks", §2) that Grefenstette et al. (2015) benchmark against: ``skip_inputs`` feeds the
input to every layer, not only to the first (a layer above reads ``[h_below; x]``), and
``skip_outputs`` makes the stack's output every layer's h concatenated, so that the layer on top
of it reads them all. Neither touches the constant input, which only layer 1 reads.
"""

import tensorflow as tf

from rnnpb_nmt.layers.cells import CELLS


class StackedRNN(tf.keras.layers.Layer):
    """``num_layers`` recurrent layers of ``units`` of one ``cell`` kind ("lstm", "gru", "srn");
    layer 1 may take an extra constant input of ``constant_dim``, which ``dropout`` drops too
    unless ``constant_dropout`` is False; ``skip_inputs``, ``skip_outputs``: the module's docstring."""

    def __init__(self, units, num_layers, cell="lstm", dropout=0.0, constant_dim=0, constant_dropout=True,
                 skip_inputs=False, skip_outputs=False, **kwargs):
        super().__init__(**kwargs)
        self.units, self.num_layers, self.cell = units, num_layers, CELLS[cell]
        self.dropout, self.constant_dim, self.constant_dropout = dropout, constant_dim, constant_dropout
        self.skip_inputs, self.skip_outputs = skip_inputs, skip_outputs
        # The width of each step's output: the top layer's h, or every layer's.
        self.output_units = units * (num_layers if skip_outputs else 1)

    def build(self, input_shape):
        in_dim = int(input_shape[-1])
        width = self.cell.gates * self.units
        bias_shape, bias_init = self.cell.bias_initializer(self.units)
        self.kernels, self.recurrent_kernels, self.biases = [], [], []
        dims = self._input_dims(in_dim)
        for layer in range(self.num_layers):
            layer_in = dims[layer] + (self.constant_dim if layer == 0 else 0)
            self.kernels.append(self.add_weight(f"kernel_{layer}", [layer_in, width], initializer="glorot_uniform"))
            self.recurrent_kernels.append(self.add_weight(
                f"recurrent_kernel_{layer}", [self.units, width], initializer="orthogonal"))
            self.biases.append(self.add_weight(f"bias_{layer}", bias_shape, initializer=bias_init))
        super().build(input_shape)

    def zero_state(self, batch_size):
        zeros = tf.zeros([batch_size, self.units])
        return [(zeros,) * self.cell.state_size for _ in range(self.num_layers)]

    def state_vector(self, state):
        """Every layer's state as one vector (B, num_layers x state_size x units): layer 1's parts
        (an LSTM's h, c), then layer 2's, ...; ``state_of_vector`` reads it back."""
        return tf.concat([part for layer in state for part in layer], axis=1)

    def state_of_vector(self, vector):
        parts = tf.split(vector, self.num_layers * self.cell.state_size, axis=1)
        size = self.cell.state_size
        return [tuple(parts[size * i: size * (i + 1)]) for i in range(self.num_layers)]

    def constant_gates(self, constant, dropout_mask=None):
        """Layer 1's gate contribution of the constant input: computed once, reused every step."""
        if dropout_mask is not None:
            constant = constant * dropout_mask
        return tf.matmul(constant, self.kernels[0][-self.constant_dim:])

    def _input_kernel(self, layer):
        kernel = self.kernels[layer]
        return kernel[: kernel.shape[0] - self.constant_dim] if layer == 0 and self.constant_dim else kernel

    def _recurrent_gates(self, layer, h):
        """h @ U, plus the recurrent bias of the cells that have one (the GRU's)."""
        _, recurrent_bias = self.cell.split_bias(self.biases[layer])
        product = tf.matmul(h, self.recurrent_kernels[layer])
        return product if recurrent_bias is None else product + recurrent_bias

    def _input_dims(self, input_dim):
        """The width of each layer's input (without the constant): layer 1 reads the input, a
        layer above the h below (and the input too with ``skip_inputs``)."""
        above = self.units + (input_dim if self.skip_inputs else 0)
        return [input_dim] + [above] * (self.num_layers - 1)

    def _layer_input(self, layer, below, inputs):
        """What ``layer`` reads: the input, or the output ``below`` it (with the input, with ``skip_inputs``)."""
        if layer == 0:
            return inputs
        return tf.concat([below, inputs], axis=-1) if self.skip_inputs else below

    def _output(self, outputs):
        """The stack's output of every layer's ``outputs``: the top's, or all (``skip_outputs``)."""
        return tf.concat(outputs, axis=-1) if self.skip_outputs else outputs[-1]

    def dropout_masks(self, batch_size, input_dim, rng):
        """One dropout mask per layer input ((batch, that layer's input width)), or Nones without
        ``rng`` or dropout: for a caller that runs the layers step by step."""
        return self._dropout_masks(batch_size, self._input_dims(input_dim), rng)

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
        Returns (outputs (B, T, output_units), final state tuple per layer).
        """
        batch = tf.shape(inputs)[0]
        state = initial_state if initial_state is not None else self.zero_state(batch)
        dims = self._input_dims(inputs.shape[-1])
        # The constant's mask is drawn last, so that leaving it out changes no other mask.
        drop_constant = constant is not None and self.constant_dropout
        masks = self._dropout_masks(batch, dims + ([self.constant_dim] if drop_constant else []), rng)
        extra = self.constant_gates(constant, masks[-1] if drop_constant else None) if constant is not None else None
        time_mask = tf.transpose(mask)[:, :, None] if mask is not None else None
        outputs, finals = [], []
        for layer in range(self.num_layers):
            x = self._layer_input(layer, outputs[-1] if outputs else None, inputs)
            if masks[layer] is not None:
                x = x * masks[layer][:, None, :]
            input_bias, _ = self.cell.split_bias(self.biases[layer])
            gates = tf.einsum("btd,dg->tbg", x, self._input_kernel(layer)) + input_bias
            if layer == 0 and extra is not None:
                gates += extra
            output, final = self._run_layer(layer, gates, state[layer], time_mask)
            outputs.append(output)
            finals.append(final)
        return self._output(outputs), finals

    def _run_layer(self, layer, gates, state, time_mask):
        """Time loop of one layer over precomputed time-major input gates (T, B, gates * units)."""
        def step(carry, inp):
            g, m = inp
            new = self.cell.step(g, self._recurrent_gates(layer, carry[0]), carry)
            if m is not None:
                new = tuple(tf.where(m, n, old) for n, old in zip(new, carry))
            return new

        if time_mask is None:
            states = tf.scan(lambda carry, g: step(carry, (g, None)), gates, initializer=tuple(state))
        else:
            states = tf.scan(step, (gates, time_mask), initializer=tuple(state))
        return tf.transpose(states[0], [1, 0, 2]), tuple(s[-1] for s in states)

    def step(self, x, state, extra_gates=None, dropout_masks=None):
        """One time step for decoding: x (N, D) -> (output (N, output_units), new state). ``dropout_masks``
        (``dropout_masks()``) drop the same units at every step of a sequence, as ``call`` does."""
        new_state = []
        for layer in range(self.num_layers):
            layer_in = self._layer_input(layer, new_state[-1][0] if new_state else None, x)
            if dropout_masks is not None and dropout_masks[layer] is not None:
                layer_in = layer_in * dropout_masks[layer]
            input_bias, _ = self.cell.split_bias(self.biases[layer])
            gates = tf.matmul(layer_in, self._input_kernel(layer)) + input_bias
            if layer == 0 and extra_gates is not None:
                gates += extra_gates
            new_state.append(self.cell.step(gates, self._recurrent_gates(layer, state[layer][0]), state[layer]))
        return self._output([new[0] for new in new_state]), new_state

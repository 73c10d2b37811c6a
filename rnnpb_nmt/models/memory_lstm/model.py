"""One recurrent network reads the source, then generates the target (§4, §4.3).

The paper presents each pair as one joint sequence ``<s> a1 .. ak ||| b1 .. bn </s>`` and
trains the network to predict the target part. Here the network reads the source as every
corpus of the toolkit carries it, ``a1 .. ak <end>``, then ``<start> b1 .. bn`` and predicts
``b1 .. bn <end>``: the source's ``<end>`` and the target's ``<start>`` together are the
separator, and the paper's ``<s>`` is left out, since the network's initial state is trained (the
memory LSTMs', §3.4) or zero and the same for every sequence. As in the paper, source and target
symbols have their own vocabularies and embeddings.

Generation is the toolkit's search from the state after the separator (``--beam_size=1`` is
the paper's greedy decoding). The memory has room for every step a sequence may take: the
source, and the longest output the search allows.
"""

import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.memory_controller import MemoryLSTM
from rnnpb_nmt.layers.recurrent import StackedRNN
from rnnpb_nmt.models.losses import token_mask
from rnnpb_nmt.models.teacher_forced import TeacherForcedModel
from rnnpb_nmt.registry import register_model


class ReadThenGenerate(TeacherForcedModel):
    """The read-then-generate model around a recurrent ``network`` that subclasses make:
    ``network.step(x, state)`` and the two methods below are all that differs between them."""

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        p = config.model
        self.src_embedding = tf.keras.layers.Embedding(len(vocab1), p.embedding_size, name="src_embedding")
        self.tgt_embedding = tf.keras.layers.Embedding(len(vocab2), p.embedding_size, name="tgt_embedding")
        self.network = self.make_network(p)
        self.output_layer = tf.keras.layers.Dense(len(vocab2), name="output")
        # Build every weight now, so that checkpoints restore before the first call.
        self.src_embedding.build([None])
        self.tgt_embedding.build([None])
        self.network.build(tf.TensorShape([None, None, p.embedding_size]))
        self.output_layer.build([None, self.output_units(p)])

    def make_network(self, p):
        """The recurrent network (a Keras layer with ``step``), from the model section ``p``."""
        raise NotImplementedError

    def output_units(self, p):
        """The width of the network's output, which the output layer reads."""
        return p.units

    def initial_state(self, batch, steps):
        """The network's state before a sequence of at most ``steps`` steps."""
        raise NotImplementedError

    def run(self, inputs, state, mask=None, rng=None):
        """(outputs (B, T, units), final state) over embedded ``inputs`` (B, T, E) from ``state``."""
        raise NotImplementedError

    def read(self, src, steps_after, rng=None):
        """The state after the source and its ``<end>``, with room for ``steps_after`` more steps;
        padding leaves it unchanged, so each row's state is that after its own ``<end>``."""
        state = self.initial_state(tf.shape(src)[0], tf.shape(src)[1] + steps_after)
        _, state = self.run(self.src_embedding(src), state, mask=token_mask(src), rng=rng)
        return state

    def teacher_forced_logits(self, src, previous, rng=None):
        outputs, _ = self.run(self.tgt_embedding(previous), self.read(src, tf.shape(previous)[1], rng), rng=rng)
        return self.output_layer(outputs)

    def decoder_start(self, src):
        # The search caps an output at ceil(max_trans_ratio * words) tokens (rnnpb_nmt.infer.translator),
        # and src has words + 1 columns; one step more for the forced <end>.
        ratio = self.config.inference.max_trans_ratio
        longest = tf.cast(tf.math.ceil(ratio * tf.cast(tf.shape(src)[1], tf.float32)), tf.int32) + 1
        return self.read(src, longest)

    def decoder_step(self, tokens, state):
        output, state = self.network.step(self.tgt_embedding(tokens), state)
        return self.output_layer(output), state


class MemoryLSTMTransducer(ReadThenGenerate):
    """``--model=stack_lstm|queue_lstm|deque_lstm``: one LSTM layer controlling a neural stack,
    queue or deque (§3.4), ``--units`` wide, with values of ``--memory_width``.

    Greedy search only (the paper's): the memory's step counter is shared by the batch, and beam
    search would tile it like a per-sentence state."""

    def __init__(self, config, vocab1, vocab2):
        if config.inference.beam_size != 1:
            raise UserError(f"--beam_size={config.inference.beam_size}: --model={config.model.model} "
                            "decodes greedily, as the paper; give --beam_size=1")
        super().__init__(config, vocab1, vocab2)

    def make_network(self, p):
        return memory_network(p)

    def initial_state(self, batch, steps):
        return self.network.initial_state(batch, steps)

    def run(self, inputs, state, mask=None, rng=None):
        return self.network(inputs, mask=mask, initial_state=state)


# Each --model name of this class, and the memory its controller drives (rnnpb_nmt/layers/neural_memory.py).
MEMORIES = {"stack_lstm": "stack", "queue_lstm": "queue", "deque_lstm": "deque"}
for _name in MEMORIES:
    register_model(_name)(MemoryLSTMTransducer)


def memory_network(p):
    """The MemoryLSTM of model configuration ``p`` (``--model``, ``--units``, ``--memory_width``
    and the initial biases)."""
    return MemoryLSTM(p.units, p.memory_width, MEMORIES[p.model], name=p.model, **initial_biases(p))


def initial_biases(p):
    """The push and pop biases a memory LSTM starts from (per head: the deque's top, then bottom).

    With ``--deque_biases=same`` both of the deque's ends push half and pop a little at every
    step, so each end reads only its own last few pushes and no gradient reaches most of the
    source; ``per_end`` starts the deque as a queue (the top pushes and hardly pops, the bottom
    hardly pushes and pops), whose bottom reads older pushes, as a queue's does; how hardly is
    ``--deque_off_bias``. What each did: ``run_scripts/results/transduction.md``, the DeQue-LSTM's
    copy cell."""
    if p.model == "deque_lstm" and p.deque_biases == "per_end":
        return {"push_bias": (0.0, p.deque_off_bias), "pop_bias": (p.deque_off_bias, p.pop_bias)}
    return {"push_bias": 0.0, "pop_bias": p.pop_bias}


@register_model("deep_lstm")
class DeepLSTMTransducer(ReadThenGenerate):
    """``--model=deep_lstm``: the benchmark, ``--num_layers`` LSTMs of ``--units`` (the paper
    tried 1, 2, 4 and 8), starting from zero states, with ``--dropout`` if given, and the
    ``--skip_connections`` given (the paper's: inputs)."""

    def make_network(self, p):
        return StackedRNN(p.units, p.num_layers, dropout=p.dropout, name="deep_lstm",
                          skip_inputs=p.skip_connections in ("inputs", "both"),
                          skip_outputs=p.skip_connections in ("outputs", "both"))

    def output_units(self, p):
        return self.network.output_units

    def initial_state(self, batch, steps):
        return self.network.zero_state(batch)

    def run(self, inputs, state, mask=None, rng=None):
        return self.network(inputs, initial_state=state, mask=mask, rng=rng)

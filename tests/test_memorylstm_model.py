"""The read-then-generate models: the search's decoder is the trained network, and a tiny
Queue-LSTM learns to copy."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.config import Config
from rnnpb_nmt.data.dataset import encode_all, make_dataset
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.neural_memory import BOTTOM, TOP, read_weights
from rnnpb_nmt.models.memory_lstm.model import memory_network
from rnnpb_nmt.tasks.transduction import synthetic
from rnnpb_nmt.tasks.transduction.task import TransductionTask
from rnnpb_nmt.train.step import Trainer

from helpers import models, stepped_cross_entropy, tiny_config, translator_of

MODELS = ("stack_lstm", "queue_lstm", "deque_lstm", "deep_lstm")


def copy_data(n, min_len, max_len, seed, vocab_size=6):
    pairs = synthetic.generate("copy", n, min_len, max_len, seed=seed, vocab_size=vocab_size)
    vocab = Vocabulary.build([s for s, _ in pairs])
    return pairs, vocab, [encode_all(vocab, [p[side] for p in pairs]) for side in (0, 1)]


def model_of(name, vocab, **overrides):
    tf.keras.utils.set_random_seed(3)
    config = tiny_config(model=name, **{**dict(units=16, memory_width=8, embedding_size=8, beam_size=1), **overrides})
    return models()[name](config, vocab, vocab)


def coarse_accuracy(model, pairs):
    """The share of ``pairs`` whose source the greedy search turns into exactly the target."""
    outputs = translator_of(model).translate([s for s, _ in pairs], beam_size=1)
    return TransductionTask().score([s for s, _ in pairs], outputs, [t for _, t in pairs], "tgt")["coarse_accuracy"]


@pytest.mark.parametrize("name, overrides", [(name, {}) for name in MODELS] + [("deep_lstm", {"skip_connections": "both"})])
def test_the_decoder_steps_score_targets_as_training_does(name, overrides):
    """Feeding a target word by word through decoder_start/decoder_step gives the cross-entropy
    that score_targets computes over the whole sequence: generation runs the trained network."""
    _, vocab, (src, tgt) = copy_data(5, 2, 7, seed=1)
    model = model_of(name, vocab, **overrides)
    batch = next(iter(make_dataset(src, tgt, batch_size=5)))
    scored, tokens = model.score_targets(batch)
    np.testing.assert_allclose(stepped_cross_entropy(model, batch), scored.numpy(), rtol=1e-4)
    assert tokens.numpy().tolist() == [len(t) for t in tgt]


# Grefenstette et al.'s Table 2: the Deep LSTMs' trainable parameters, by hidden size and layers.
TABLE_2 = {256: {2: 9.1e5, 4: 2.1e6, 8: 4.5e6}, 512: {2: 3.4e6, 4: 7.8e6, 8: 1.7e7}}


def paper_deep_lstm(units, layers, skip_connections):
    """The paper's Deep LSTM (§4: 64-wide embeddings, 128 symbols) of ``units`` and ``layers``."""
    vocab = Vocabulary.build([[str(s) for s in range(128)]])
    return model_of("deep_lstm", vocab, units=units, num_layers=layers, embedding_size=64,
                    skip_connections=skip_connections)


@pytest.mark.parametrize("units", sorted(TABLE_2))
def test_the_papers_deep_lstm_has_table_2s_parameters_with_input_skip_connections(units):
    """Table 2 counts the stack in which every layer reads the input embedding too: within 1.2 %
    of all six; a plain stack has 3.5-11 % fewer. The counts are of the recurrent stack alone:
    with the embeddings and the output layer (5e4 at 256 units, 8e4 at 512) no variant is within
    2 % of all six (skip inputs: +6.6 % at 2 layers of 256; skip outputs: -4.6 % at 8 layers of
    256; both: +10 %; plain: -9.9 %)."""
    for layers, paper in TABLE_2[units].items():
        assert paper_deep_lstm(units, layers, "inputs").network.count_params() == pytest.approx(paper, rel=0.02)
    plain = paper_deep_lstm(units, 8, "none").network.count_params()
    assert plain < 0.95 * TABLE_2[units][8]


def test_a_memory_lstm_refuses_beam_search_in_one_line():
    _, vocab, _ = copy_data(5, 2, 7, seed=1)
    with pytest.raises(UserError, match=r"^--beam_size=3: --model=stack_lstm decodes greedily"):
        model_of("stack_lstm", vocab, beam_size=3)


@pytest.mark.long  # about 20 s of CPU: 300 training steps
def test_a_tiny_queue_lstm_learns_to_copy_short_sequences():
    """Lengths 1-4 over 4 symbols: every one of 50 fresh sequences copied exactly, greedily."""
    pairs, vocab, (src, tgt) = copy_data(400, 1, 4, seed=2, vocab_size=4)
    model = model_of("queue_lstm", vocab, units=32, memory_width=16, learning_rate=0.01, batch_size=20)
    trainer = Trainer(model)
    for epoch in range(1, 16):
        trainer.start_epoch(epoch)
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    assert coarse_accuracy(model, copy_data(50, 1, 4, seed=3, vocab_size=4)[0]) == 1.0


@pytest.mark.long  # about 30 s of CPU: 750 training steps
def test_the_papers_deep_lstm_learns_to_copy_its_training_lengths_and_not_longer_sequences():
    """Grefenstette et al.'s pattern for the benchmark (Figure 2a, copy: 0.98 coarse on the training
    lengths, 0.01 on longer ones), shrunk: 2 layers of 64 units with input skips, 2000 pairs of
    lengths 1-5 over 5 symbols, 12 epochs; 200 fresh pairs of those lengths nearly all copied
    exactly, of lengths 6-10 few (0.07-0.19 in trials)."""
    _, vocab, (src, tgt) = copy_data(2000, 1, 5, seed=2, vocab_size=5)
    model = model_of("deep_lstm", vocab, units=64, num_layers=2, embedding_size=16, skip_connections="inputs",
                     learning_rate=0.01, batch_size=32)
    trainer = Trainer(model)
    for epoch in range(1, 13):
        trainer.start_epoch(epoch)
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    assert coarse_accuracy(model, copy_data(200, 1, 5, seed=3, vocab_size=5)[0]) >= 0.95
    assert coarse_accuracy(model, copy_data(200, 6, 10, seed=4, vocab_size=5)[0]) <= 0.3


@pytest.mark.parametrize("deque_biases", ["same", "per_end"])
def test_only_a_per_end_deque_reads_further_back_than_its_last_four_steps_before_training(deque_biases):
    # Zero projection weights: every step pushes and pops by the initial biases alone, as an
    # untrained controller roughly does. After 10 steps (a source), how much does each end's read
    # weigh the values the top pushed at steps 0-5? That weight is what carries the gradient from
    # the target back to most of the source.
    layer = memory_network(Config().replace(model="deque_lstm", deque_biases=deque_biases, units=5,
                                            memory_width=3).model)
    layer(tf.zeros([1, 1, 2]))
    for dense in (layer.push, layer.pop):
        dense.kernel.assign(tf.zeros_like(dense.kernel))
    capacity = 10
    state = layer.initial_state(1, capacity)
    for _ in range(capacity):
        _, state = layer.step(tf.random.normal([1, 2]), state)
    top_pushes = slice(capacity, capacity + 6)  # neural_memory.py's buffer: step s pushes row capacity + s at the top
    weight = {end: read_weights(state.memory.strengths, [end]).numpy()[0, 0, top_pushes].sum() for end in (TOP, BOTTOM)}
    if deque_biases == "same":  # both ends push 0.5 and pop 0.27 a step: each reads its last 4 pushes
        assert weight == {TOP: 0.0, BOTTOM: 0.0}
    else:  # top: push 0.5, pop 0.05; bottom: push 0.05, pop 0.27: a queue, read at the bottom
        assert weight[TOP] == 0.0 and weight[BOTTOM] > 0.5, weight


def test_a_per_end_deque_starts_pushing_at_the_top_and_popping_at_the_bottom():
    config = Config().replace(model="deque_lstm", deque_biases="per_end", pop_bias=-2.0, units=4, memory_width=3)
    layer = memory_network(config.model)
    layer(tf.zeros([1, 1, 2]))
    np.testing.assert_array_equal(layer.push.bias.numpy(), [0.0, -3.0])  # heads: top, bottom
    np.testing.assert_array_equal(layer.pop.bias.numpy(), [-3.0, -2.0])
    layer = memory_network(config.replace(deque_off_bias=-6.0).model)  # the operations a queue does not use
    layer(tf.zeros([1, 1, 2]))
    np.testing.assert_array_equal(layer.push.bias.numpy(), [0.0, -6.0])
    np.testing.assert_array_equal(layer.pop.bias.numpy(), [-6.0, -2.0])
    for model in ("stack_lstm", "queue_lstm", "deque_lstm"):  # the default: every head alike
        layer = memory_network(config.replace(model=model, deque_biases="same").model)
        layer(tf.zeros([1, 1, 2]))
        assert not layer.push.bias.numpy().any() and (layer.pop.bias.numpy() == -2.0).all()

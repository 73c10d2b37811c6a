"""The read-then-generate models: the search's decoder is the trained network, and a tiny
Queue-LSTM learns to copy."""

import numpy as np
import pytest
import tensorflow as tf

from nmtcore import synthetic
from nmtcore.data import encode_all, make_dataset
from nmtcore.errors import UserError
from nmtcore.tasks.transduction import TransductionTask
from nmtcore.trainer import Trainer
from nmtcore.vocabulary import Vocabulary

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


@pytest.mark.parametrize("name", MODELS)
def test_the_decoder_steps_score_targets_as_training_does(name):
    """Feeding a target word by word through decoder_start/decoder_step gives the cross-entropy
    that score_targets computes over the whole sequence: generation runs the trained network."""
    _, vocab, (src, tgt) = copy_data(5, 2, 7, seed=1)
    model = model_of(name, vocab)
    batch = next(iter(make_dataset(src, tgt, batch_size=5)))
    scored, tokens = model.score_targets(batch)
    np.testing.assert_allclose(stepped_cross_entropy(model, batch), scored.numpy(), rtol=1e-4)
    assert tokens.numpy().tolist() == [len(t) for t in tgt]


def test_a_memory_lstm_refuses_beam_search_in_one_line():
    _, vocab, _ = copy_data(5, 2, 7, seed=1)
    with pytest.raises(UserError, match=r"^--beam_size=3: --model=stack_lstm decodes greedily"):
        model_of("stack_lstm", vocab, beam_size=3)


@pytest.mark.slow  # about 20 s of CPU: 300 training steps
def test_a_tiny_queue_lstm_learns_to_copy_short_sequences():
    """Lengths 1-4 over 4 symbols: every one of 50 fresh sequences copied exactly, greedily."""
    pairs, vocab, (src, tgt) = copy_data(400, 1, 4, seed=2, vocab_size=4)
    model = model_of("queue_lstm", vocab, units=32, memory_width=16, learning_rate=0.01, batch_size=20)
    trainer = Trainer(model)
    for epoch in range(1, 16):
        trainer.start_epoch(epoch)
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    test, _, _ = copy_data(50, 1, 4, seed=3, vocab_size=4)
    outputs = translator_of(model).translate([s for s, _ in test], beam_size=1)
    scores = TransductionTask().score([s for s, _ in test], outputs, [t for _, t in test], "tgt")
    assert scores["coarse_accuracy"] == 1.0

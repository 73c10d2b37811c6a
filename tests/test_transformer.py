"""The Transformer baseline: one decoder for training and search, padding that changes nothing,
dropout drawn from the trainer's generator, and a tiny model that learns to reverse through the
command line."""

import functools
import json

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings, strategies as st

from rnnpb_nmt.data.dataset import encode_all, read_sentences
from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import search
from rnnpb_nmt.models.losses import decoder_inputs
from rnnpb_nmt.train import workdir

from helpers import cli_in_process, latest_variables, models, reversal_files, run_search, tiny_config

VOCAB = Vocabulary.build([list("abcdefgh")])
IDS = st.integers(4, len(VOCAB) - 1)


def model_of(**overrides):
    tf.keras.utils.set_random_seed(2)
    config = tiny_config(model="transformer", units=16, heads=2, **overrides)
    return models()["transformer"](config, VOCAB, VOCAB)


# One width the embedding keeps, one it is projected from; one layer and two.
CONFIGS = {"2 layers": dict(embedding_size=16), "1 layer, projected": dict(embedding_size=8, num_layers=1)}


@functools.cache  # built when a test first needs it, not when the tests are collected
def model_named(name):
    return model_of(**CONFIGS[name])


def padded(sentences):
    """Word id lists -> (B, T) int32, each row its words, <end>, padding."""
    rows = [list(s) + [END_ID] for s in sentences]
    return tf.constant([row + [PAD_ID] * (max(map(len, rows)) - len(row)) for row in rows])


SENTENCES = st.lists(st.lists(IDS, min_size=0, max_size=7), min_size=1, max_size=4)


# Each example steps the decoder eagerly: 6 examples in CI (make fuzz: 50).
@settings(max_examples=settings.default.max_examples // 10, deadline=None)
@given(st.sampled_from(sorted(CONFIGS)), SENTENCES, SENTENCES)
def test_stepping_the_decoder_over_a_gold_prefix_gives_the_teacher_forced_logits(name, sources, targets):
    model = model_named(name)
    targets = (targets * len(sources))[:len(sources)]  # one per source
    src, tgt = padded(sources), padded(targets)
    forced = model.teacher_forced_logits(src, decoder_inputs(tgt)).numpy()
    state, stepped = model.decoder_start(src), []
    for t in range(tgt.shape[1]):
        logits, state = model.decoder_step(decoder_inputs(tgt)[:, t], state)
        stepped.append(logits.numpy())
    np.testing.assert_allclose(np.stack(stepped, axis=1), forced, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_sentences_logits_do_not_change_when_it_is_batched_with_a_longer_one(name):
    model = model_named(name)
    short_src, short_tgt, long_src, long_tgt = [4, 5], [6], [7, 8, 9, 10, 4, 5, 6], [11, 10, 9, 8, 7]
    alone = model.teacher_forced_logits(padded([short_src]), decoder_inputs(padded([short_tgt]))).numpy()[0]
    together = model.teacher_forced_logits(padded([long_src, short_src]),
                                           decoder_inputs(padded([long_tgt, short_tgt]))).numpy()[1]
    assert together.shape[0] > alone.shape[0]
    np.testing.assert_allclose(together[:alone.shape[0]], alone, atol=1e-5)


def test_units_that_the_heads_do_not_divide_are_refused_in_one_line():
    with pytest.raises(UserError, match=r"^--units=10: .*--heads=4 .*multiple of --heads$"):
        models()["transformer"](tiny_config(model="transformer", units=10, heads=4), VOCAB, VOCAB)


def train(tmp_path, capsys, name, *flags, pairs=600, epochs=1):
    """A tiny Transformer trained through the command line's entry point on ``pairs`` reversal pairs
    (and 100 dev pairs); its working directory."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    working_dir = tmp_path / name
    status, _, err = cli_in_process(["--do_training", *reversal_files(data, pairs, 100), "--model=transformer",
                                     "--embedding_size=16", "--units=16", "--heads=2", "--batch_size=16",
                                     f"--max_epochs={epochs}", f"--working_dir={working_dir}", *flags], capsys)
    assert status == 0, err
    return working_dir


@pytest.mark.long  # trains 10 epochs of 38 steps
def test_a_tiny_transformer_learns_to_reverse_and_greedy_search_is_a_beam_of_one(tmp_path, capsys):
    working_dir = train(tmp_path, capsys, "run", "--num_layers=2", "--learning_rate=0.003", epochs=10)
    dev = [row["dev_perplexity"] for row in json.loads((working_dir / "training_stats.json").read_text())["epochs"]]
    assert min(dev) < 1.3 < 3 < dev[0], dev  # best/'s epoch near certainty (measured: 1.06; epoch 1: 4.0)
    model = workdir.load_model(str(working_dir), models())
    src = encode_all(model.vocab1, read_sentences(str(tmp_path / "data" / "dev.src")))[:40]
    greedy_ids, greedy_scores, _ = run_search(model, src, search.greedy_hypotheses)
    beam_ids, beam_scores = run_search(model, src, lambda step, state, max_len: search.beam_search(step, state, max_len, 1))
    width = min(greedy_ids.shape[1], beam_ids.shape[1])  # beyond <end>: padding only
    np.testing.assert_array_equal(greedy_ids.numpy()[:, :width], beam_ids.numpy()[:, :width])
    np.testing.assert_allclose(greedy_scores.numpy(), beam_scores.numpy(), rtol=1e-5)
    reversed_ids = [np.append(s[:-1][::-1], END_ID) for s in src]
    correct = [np.array_equal(ids[:len(r)], r) for ids, r in zip(greedy_ids.numpy(), reversed_ids)]
    assert np.mean(correct) > 0.8, np.mean(correct)  # untrained: 0


@pytest.mark.slow  # trains 3 runs of an epoch of 7 steps
def test_the_same_seed_gives_the_same_weights_and_dropout_draws_from_it(tmp_path, capsys):
    def weights(name, *flags):
        return latest_variables(train(tmp_path, capsys, name, "--num_layers=1", *flags, pairs=100), "best")

    first, again, no_dropout = weights("first", "--dropout=0.3"), weights("again", "--dropout=0.3"), weights("none")
    assert first.keys() == again.keys() and any(key.startswith("model/decoder_layers") for key in first)
    for key, value in first.items():
        np.testing.assert_array_equal(again[key], value, err_msg=key)
    # The same initial weights (the seed's) trained without dropout: the masks changed the training.
    assert any(not np.array_equal(no_dropout[key], value) for key, value in first.items() if key.startswith("model/"))


def test_attention_is_keras_multi_head_attention_and_reads_its_checkpoints(tmp_path):
    """The Transformers' attention (its keys and values kept apart for search) computes what
    tf.keras.layers.MultiHeadAttention does, and a checkpoint of that layer, as runs before it were
    trained with, restores into it."""
    from rnnpb_nmt.layers.transformer import Attention

    rng = np.random.default_rng(0)
    x, memory = (tf.constant(rng.normal(size=shape), tf.float32) for shape in ((2, 3, 8), (2, 5, 8)))
    mask = tf.constant([[[True] * 5], [[True, True, False, False, False]]])
    keras = tf.keras.layers.MultiHeadAttention(2, 4)
    expected = keras(x, memory, attention_mask=mask).numpy()
    tf.train.Checkpoint(layer=keras).write(str(tmp_path / "ckpt"))
    ours = Attention(8, 2, "attention")
    ours(x, memory, mask)  # builds its weights, then replaced by the checkpoint's
    tf.train.Checkpoint(layer=ours).read(str(tmp_path / "ckpt")).assert_existing_objects_matched()
    np.testing.assert_allclose(ours(x, memory, mask).numpy(), expected, atol=1e-6)
    np.testing.assert_allclose(ours.step(x, *ours.keys_values(memory), mask).numpy(), expected, atol=1e-6)

"""The seq-to-seq model's cells and attention: one decoder for training and search, checkpoints,
and a tiny attention model that learns to reverse."""

import itertools

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import search
from rnnpb_nmt.models.losses import decoder_inputs
from rnnpb_nmt.models.seq2seq.model import cut_after_first_end
from rnnpb_nmt.train import workdir
from rnnpb_nmt.train.checkpoints import RunCheckpoints

from helpers import models, tiny_config, translator_of

SYMBOLS = list("abcdef")
VOCAB = Vocabulary.build([SYMBOLS])
CONFIGS = list(itertools.product(["lstm", "gru", "srn"], ["none", "location", "content"]))
SRC = tf.constant([[4, 5, 6, 7, 7, 2], [5, 6, 2, 0, 0, 0]])
TGT = tf.constant([[4, 5, 2, 0], [6, 6, 6, 2]])


def model_of(cell, attention, **overrides):
    config = tiny_config(model="encdec", cell=cell, attention=attention, attention_positions=6, **overrides)
    return models()["encdec"](config, VOCAB, VOCAB)


def assert_steps_equal_teacher_forcing(model):
    """The decoder's logits one step at a time from the target's words are teacher forcing's."""
    forced = model._target_logits(SRC, TGT).numpy()
    state, stepped = model.decoder_start(SRC), []
    for t in range(TGT.shape[1]):
        logits, state = model.decoder_step(decoder_inputs(TGT)[:, t], state)
        stepped.append(logits.numpy())
    np.testing.assert_allclose(np.stack(stepped, axis=1), forced, atol=1e-5)


@pytest.mark.parametrize("cell,attention", CONFIGS)
def test_decoder_steps_one_at_a_time_equal_teacher_forcing(cell, attention):
    model = model_of(cell, attention, reverse_source=True)
    assert_steps_equal_teacher_forcing(model)


def greedy_logits(model, src, steps):
    """The logits of each step when the decoder reads its own previous greedy prediction."""
    state, tokens, stepped = model.decoder_start(src), decoder_inputs(TGT)[:, 0], []
    for _ in range(steps):
        logits, state = model.decoder_step(tokens, state)
        tokens = tf.argmax(logits, axis=-1, output_type=tokens.dtype)
        stepped.append(logits.numpy())
    return np.stack(stepped, axis=1)


@pytest.mark.parametrize("cell,attention,style", [("gru", "none", "bahdanau"), ("lstm", "content", "bahdanau"),
                                                  ("srn", "location", "luong")])
def test_training_without_teacher_forcing_reads_the_decoders_own_greedy_predictions(cell, attention, style):
    rng = tf.random.Generator.from_seed(1)
    for forcing in (0.0, 0.5):
        model = model_of(cell, attention, attention_style=style, teacher_forcing=forcing)
        forced, free = model._target_logits(SRC, TGT).numpy(), greedy_logits(model, SRC, TGT.shape[1])
        assert not np.allclose(free, forced, atol=1e-3)  # untrained, its own predictions are not the targets
        trained = [model._scored_targets(SRC, TGT, rng)[0].numpy() for _ in range(1 if forcing == 0 else 12)]
        kinds = {next(kind for kind, reference in (("free", free), ("forced", forced))
                      if np.allclose(logits, reference, atol=1e-5)) for logits in trained}
        # A coin per batch: both kinds among 12 batches at 0.5 (p = 1 - 2 / 2**12)
        assert kinds == ({"free"} if forcing == 0 else {"free", "forced"})


def test_the_cut_pads_every_target_out_after_the_step_the_first_pair_predicts_an_end():
    tgt = tf.constant([[4, 5, 6, 2], [6, 6, 6, 2]])
    ends = [2, 9]  # <end>, and a sentence-final word's id
    # Predictions (steps, pairs): the second pair ends at step 0, the first at step 1 (<end>) or 2 (the word).
    cut = lambda predicted: cut_after_first_end(tgt, tf.constant(predicted), ends).numpy()
    np.testing.assert_array_equal(cut([[5, 2], [2, 7], [7, 7], [2, 2]]), [[4, 5, 0, 0], [6, 6, 0, 0]])
    np.testing.assert_array_equal(cut([[5, 9], [7, 7], [9, 7], [2, 2]]), [[4, 5, 6, 0], [6, 6, 6, 0]])
    np.testing.assert_array_equal(cut([[5, 2], [7, 2], [7, 7], [7, 7]]), tgt)  # the first never ends: all scored
    empty = tf.zeros([0, 4], tf.int32)  # a replica's empty share of a short batch
    assert cut_after_first_end(empty, tf.zeros([4, 0], tf.int32), ends).shape == (0, 4)


@pytest.mark.parametrize("cell,attention", [("gru", "location"), ("lstm", "none")])
def test_a_cut_free_running_batch_is_scored_only_up_to_the_first_pairs_end(cell, attention):
    rng = tf.random.Generator.from_seed(1)
    cut = model_of(cell, attention, teacher_forcing=0.0, free_running_cut=True)
    whole = model_of(cell, attention, teacher_forcing=0.0)
    for model in (cut, whole):
        model._scored_targets(SRC, TGT)  # builds the weights
    greedy = np.argmax(greedy_logits(cut, SRC, TGT.shape[1]), axis=-1)  # (pairs, steps)
    np.testing.assert_array_equal(cut._scored_targets(SRC, TGT, rng)[1], cut_after_first_end(TGT, greedy.T, [END_ID]))
    bias = cut.output_layer.bias.numpy()
    bias[END_ID] = 100.0  # every step now predicts <end>: the batch ends at its first step
    cut.output_layer.bias.assign(bias)
    logits, scored = cut._scored_targets(SRC, TGT, rng)
    np.testing.assert_array_equal(scored, [[4, 0, 0, 0], [6, 0, 0, 0]])
    losses, _, _ = cut.sentence_losses({"src": SRC, "tgt": TGT}, "parallel", rng)
    first = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=TGT[:, 0], logits=logits[:, 0])
    np.testing.assert_allclose(losses, first, rtol=1e-5)  # the loss of the one step taken
    np.testing.assert_array_equal(whole._scored_targets(SRC, TGT, rng)[1], TGT)


@pytest.mark.parametrize("cell,attention,extra", [("gru", "location", {"decoder_input": "combined"}),
                                                ("lstm", "content", {}),
                                                ("srn", "content", {"bidirectional": True, "attention_style": "luong"})])
def test_pytorch_initialisation_draws_every_weight_but_the_embeddings_within_pytorchs_bounds(cell, attention, extra):
    model = model_of(cell, attention, weight_init="pytorch", **extra)
    k = model.config.model.units ** -0.5
    bounds = {v.ref(): k for stack in (model.encoder, model.decoder) for v in stack.trainable_weights}
    encoders = (model.encoder.forward_lstm, model.encoder.backward_lstm) if extra.get("bidirectional") else (model.encoder,)
    for stack in (*encoders, model.decoder):  # PyTorch's LSTM and SRN have two biases where ours have one, their sum
        bounds.update({v.ref(): 2 * k for v in stack.biases if v.shape.rank == 1})
    linear = (model.output_layer, getattr(model, "combine", None), getattr(model, "attentional", None),
              getattr(model.attention, "scorer", None))
    bounds.update({v.ref(): int(layer.kernel.shape[0]) ** -0.5 for layer in linear if layer for v in layer.trainable_weights})
    if attention == "content":
        pair = (model.attention.keys, model.attention.queries)
        fan_in = sum(int(layer.kernel.shape[0]) for layer in pair)  # McCoy et al.'s one layer over both
        bounds.update({v.ref(): fan_in ** -0.5 for layer in pair for v in layer.trainable_weights})
        bounds[model.attention.v.ref()] = 1.0
    embeddings = {v.ref() for v in (*model.src_embedding.weights, *model.tgt_embedding.weights)}
    assert set(bounds) | embeddings == {v.ref() for v in model.trainable_variables}  # every weight has its bound
    for v in model.trainable_variables:
        if v.ref() in bounds:
            values, bound = np.abs(v.numpy()), bounds[v.ref()]
            assert values.max() <= bound and values.max() > 0, v.name  # drawn again, within the bound
            if v.shape.num_elements() >= 32:
                assert values.max() > 0.6 * bound and values.min() < 0.2 * bound, v.name  # over the range
    keras = model_of(cell, attention, **extra)
    assert any(np.abs(v.numpy()).max() > 1.5 * keras.config.model.units ** -0.5 for v in keras.decoder.trainable_weights)
    assert all(np.allclose(v.numpy(), 0) for v in keras.output_layer.trainable_weights if "bias" in v.name)


@pytest.mark.parametrize("cell,attention,extra", [("gru", "location", {"decoder_input": "combined"}),
                                                ("lstm", "none", {}), ("srn", "content", {"attention_style": "luong"})])
def test_decoder_word_dropout_drops_only_the_decoders_input_words_a_new_mask_each_step(cell, attention, extra,
                                                                                     monkeypatch):
    model = model_of(cell, attention, dropout=0.5, dropout_style="decoder_words", teacher_forcing=0.0, **extra)
    assert model.encoder.dropout == model.decoder.dropout == 0  # no dropout anywhere else
    rng = tf.random.Generator.from_seed(1)
    masks = model._word_masks([2, 3, 16], rng).numpy()
    assert set(np.unique(masks)) == {0.0, 2.0} and not np.array_equal(masks[0], masks[1])  # a new mask a step
    assert model._word_masks([2, 3, 16], None) is None  # not outside training
    plain = model.teacher_forced_logits(SRC, decoder_inputs(TGT)).numpy()
    free = greedy_logits(model, SRC, TGT.shape[1])
    ones = lambda shape, rng: tf.ones(shape)
    monkeypatch.setattr(model, "_word_masks", ones)  # masks that drop nothing: exactly the model without dropout
    np.testing.assert_allclose(model.teacher_forced_logits(SRC, decoder_inputs(TGT), rng), plain, atol=1e-6)
    np.testing.assert_allclose(model._free_running(SRC, TGT, rng)[0], free, atol=1e-6)
    monkeypatch.setattr(model, "_word_masks", lambda shape, rng: tf.zeros(shape))  # every word dropped
    assert not np.allclose(model._free_running(SRC, TGT, rng)[0], free, atol=1e-4)

    def third_step_dropped(shape, rng):  # the word read at step 2 (of teacher forcing: batch, step, width)
        return tf.concat([tf.ones([shape[0], 2, shape[2]]), tf.zeros([shape[0], 1, shape[2]]),
                          tf.ones([shape[0], shape[1] - 3, shape[2]])], axis=1)

    monkeypatch.setattr(model, "_word_masks", third_step_dropped)
    dropped = model.teacher_forced_logits(SRC, decoder_inputs(TGT), rng).numpy()
    np.testing.assert_allclose(dropped[:, :2], plain[:, :2], atol=1e-6)
    assert not np.allclose(dropped[:, 2], plain[:, 2], atol=1e-4)


def test_the_cut_without_free_running_batches_is_refused_in_one_line():
    with pytest.raises(UserError, match="--free_running_cut: only with --teacher_forcing below 1"):
        model_of("gru", "none", free_running_cut=True)


@pytest.mark.parametrize("attention", ["location", "content"])
def test_a_sentence_translates_the_same_alone_and_in_a_beam_searched_batch(attention):
    """Beam search tiles and reorders the attention memory with the decoder state, and padding
    of a shorter sentence is never attended to."""
    translator = translator_of(model_of("gru", attention, beam_size=3))
    sentences = [list("abcdeab"), list("fa"), list("cccd")]
    together, scores = translator.translate_ids([np.array(VOCAB.encode(s) + [2], np.int32) for s in sentences])
    for sentence, out, score in zip(sentences, together, scores):
        alone, alone_score = translator.translate_ids([np.array(VOCAB.encode(sentence) + [2], np.int32)])
        np.testing.assert_array_equal(alone[0][alone[0] != 0], out[out != 0])
        assert alone_score[0] == pytest.approx(score, abs=1e-4)


def test_the_default_is_the_lstm_without_attention_of_before():
    model = model_of("lstm", "none")
    assert not hasattr(model, "attention")
    assert model.decoder.kernels[0].shape == (16, 4 * 32)  # the embedding alone feeds the decoder
    assert model_of("lstm", "content").decoder.kernels[0].shape == (16 + 32, 4 * 32)


@pytest.mark.parametrize("cell,attention,style", [("gru", "location", "bahdanau"), ("srn", "none", "bahdanau"),
                                                  ("lstm", "content", "luong")])
def test_the_combined_decoder_input_is_mccoys_linear_map_and_relu_and_decodes_alike_stepped_and_forced(
        cell, attention, style):
    tf.keras.utils.set_random_seed(3)
    model = model_of(cell, attention, attention_style=style, decoder_input="combined", reverse_source=True)
    assert model.decoder.kernels[0].shape[0] == 16  # the embedding size, with attention or without
    assert hasattr(model, "combine") == (attention != "none" and style == "bahdanau")
    embedded, context = tf.random.normal([4, 16]), tf.random.normal([4, 32])
    read = model._decoder_input(embedded, context if hasattr(model, "combine") else None).numpy()
    expected = (model.combine(tf.concat([embedded, context], -1)) if hasattr(model, "combine") else embedded).numpy()
    np.testing.assert_allclose(read, np.maximum(expected, 0), atol=1e-6)
    assert (read == 0).any() and (read > 0).any()
    assert_steps_equal_teacher_forcing(model)


def test_normal_embeddings_are_pytorchs_n01_and_the_default_stays_kerass_uniform():
    tf.keras.utils.set_random_seed(4)
    normal, uniform = model_of("gru", "location", embedding_init="normal"), model_of("gru", "location")
    for table in (normal.src_embedding.embeddings, normal.tgt_embedding.embeddings):
        assert 0.8 < np.std(table.numpy()) < 1.2 and np.abs(table.numpy()).max() > 1.5
    assert not np.allclose(normal.src_embedding.embeddings[:4], normal.tgt_embedding.embeddings[:4])  # own draws
    for table in (uniform.src_embedding.embeddings, uniform.tgt_embedding.embeddings):
        assert np.abs(table.numpy()).max() <= 0.05


@pytest.mark.parametrize("cell,attention", [c for c in CONFIGS if c != ("lstm", "none")])
def test_a_checkpoint_of_each_configuration_restores_and_translates_the_same(cell, attention, tmp_path):
    tf.keras.utils.set_random_seed(5)
    model = model_of(cell, attention)
    workdir.save_setup(str(tmp_path), model.config, VOCAB, VOCAB)
    RunCheckpoints(str(tmp_path), model).save_best(1)
    restored = workdir.load_model(str(tmp_path), models())
    assert (restored.config.model.cell, restored.config.model.attention) == (cell, attention)
    for a, b in zip(model.trainable_variables, restored.trainable_variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    ids, scores = beam_search(restored)
    expected_ids, expected_scores = beam_search(model)
    np.testing.assert_array_equal(ids.numpy(), expected_ids.numpy())
    np.testing.assert_allclose(scores.numpy(), expected_scores.numpy(), atol=1e-6)


def beam_search(model):
    """Beam search of SRC (run eagerly: a compiled search per configuration would be slower)."""
    return search.beam_search(model.decoder_step, model.decoder_start(SRC), tf.constant([7, 3]), 3)


def reversal_batch(rng, size):
    """``size`` random sequences of 2-5 symbols and their reversals, as padded id batches."""
    src, tgt = np.zeros([size, 6], np.int32), np.zeros([size, 6], np.int32)
    for i in range(size):
        ids = rng.integers(4, 4 + len(SYMBOLS), rng.integers(2, 6))
        src[i, :len(ids)], tgt[i, :len(ids)] = ids, ids[::-1]
        src[i, len(ids)] = tgt[i, len(ids)] = 2
    return {"src": tf.constant(src), "tgt": tf.constant(tgt)}


@pytest.mark.long  # about 10 s of CPU each: 400 training steps
@pytest.mark.parametrize("cell,attention", [("lstm", "content"), ("gru", "location")])
def test_a_tiny_attention_model_learns_to_reverse_exactly(cell, attention):
    tf.keras.utils.set_random_seed(1)
    model = model_of(cell, attention, num_layers=1, beam_size=1)
    optimizer = tf.keras.optimizers.Adam(0.01)

    @tf.function
    def train_step(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model.sentence_losses(batch, "parallel")[0])
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))

    rng = np.random.default_rng(0)
    for _ in range(400):
        train_step(reversal_batch(rng, 32))
    sentences = [list(rng.choice(SYMBOLS, rng.integers(2, 6))) for _ in range(100)]
    outputs = translator_of(model).translate(sentences)
    assert outputs == [s[::-1] for s in sentences]


@pytest.mark.parametrize("flag", ["--cell=tree", "--attention=global", "--weight_init=xavier", "--batch_order=sorted"])
def test_unknown_cells_and_attentions_are_refused_by_the_flag_parser(flag, capsys):
    from rnnpb_nmt.cli import build_parser
    with pytest.raises(SystemExit) as stop:
        build_parser(["encdec"]).parse_args(["--do_training", flag])
    assert stop.value.code == 2 and "invalid choice" in capsys.readouterr().err

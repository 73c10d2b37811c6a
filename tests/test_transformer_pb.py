"""The bound model with Transformer language models (``--language_model=transformer``, issue 90):
its language model decodes step by step exactly as teacher-forced, its binding gradient is the
finite differences' one, options of the other kind of language model are refused, and a tiny one
trains and translates both ways through the command line."""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.config import Config, check_applicable
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.models.losses import decoder_inputs

from helpers import bound_model, cli_in_process, first_batch, reversal_corpus, reversal_files, train_in_process

TRANSFORMER_PB = dict(amortize="encoder", language_model="transformer", units=16, embedding_size=16, heads=2,
                      num_PB=12, pb_slots=3, proposal_layers=1, refine_steps=1, both_directions=True, self_loss=0.0)


def transformer_pb(**changes):
    return bound_model(**{**TRANSFORMER_PB, **changes})


def stepped(lm, seq, pb):
    """Per-sentence cross-entropy of ``seq`` fed word by word through ``start_state``/``step``."""
    state, total, inputs = lm.start_state(pb), np.zeros(seq.shape[0]), decoder_inputs(seq)
    for t in range(seq.shape[1]):
        logits, state = lm.step(inputs[:, t], state)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=seq[:, t], logits=logits).numpy()
        total += np.where(seq[:, t].numpy() != 0, ce, 0.0)
    return total


@pytest.mark.parametrize("read, tie", [("slots", False), ("prefix", False), ("slots", True)])
def test_the_language_model_decodes_step_by_step_exactly_as_teacher_forced(read, tie):
    model = transformer_pb(num_layers=2, pb_read=read, tie_embeddings=tie)
    src, tgt = reversal_corpus(6, seed=3)
    batch = first_batch(src, tgt)  # sentences of several lengths: padding in the batch
    pb = model.propose_and_refine(batch["src"])[1]
    teacher_forced, _ = model.lm_b.sentence_losses(batch["tgt"], pb)
    np.testing.assert_allclose(stepped(model.lm_b, batch["tgt"], pb), teacher_forced.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("read", ["slots", "prefix"])
def test_the_binding_terms_gradient_is_the_finite_differences_one(read):
    model = transformer_pb(pb_binding="soft", pb_binding_strength=0.5, pb_read=read)
    src, tgt = reversal_corpus(4, seed=1)
    batch = first_batch(src, tgt)
    weight = model.proposal_a.output_layer.bias  # moves the source's PB, and so the binding term

    def binding():
        return tf.reduce_sum(model.sentence_losses(batch, "parallel")[2]["binding"])

    with tf.GradientTape() as tape:
        value = binding()
    gradient = tape.gradient(value, weight).numpy()
    h, original = 1e-2, weight.numpy()
    for i in np.argsort(-np.abs(gradient))[:3]:  # the coordinates where the gradient is largest
        moved = []
        for sign in (1, -1):
            changed = original.copy()
            changed[i] += sign * h
            weight.assign(changed)
            moved.append(float(binding()))
        weight.assign(original)
        assert (moved[0] - moved[1]) / (2 * h) == pytest.approx(gradient[i], rel=0.05, abs=1e-3)
    assert np.abs(gradient).max() > 1e-3  # a gradient that is there to check


@pytest.mark.parametrize("pool", ["mean", "attention"])
def test_a_proposal_does_not_depend_on_the_padding_beside_it(pool):
    model = transformer_pb(pb_pool=pool)
    src, _ = reversal_corpus(6, seed=2)
    batched = model.proposal_a(first_batch(src)["src"]).numpy()
    for i, sentence in enumerate(src):  # each alone: no padding at all
        alone = model.proposal_a(tf.constant(sentence[None])).numpy()
        np.testing.assert_allclose(batched[i], alone[0], rtol=1e-5, atol=1e-5)


def test_attention_pooling_proposes_pbs_beyond_the_units_that_mean_pooling_is_held_to():
    # Mean pooling maps every sentence to W * (one average of --units numbers) + b: its proposals lie in
    # an affine space of --units dimensions, whatever --num_PB is. The slots' queries each read their
    # own average, so the proposals span up to --num_PB.
    src, _ = reversal_corpus(80, seed=4)
    ranks = {}
    for pool in ("mean", "attention"):
        proposals = transformer_pb(pb_pool=pool, num_PB=48).proposal_a(first_batch(src)["src"]).numpy()
        ranks[pool] = np.linalg.matrix_rank(proposals - proposals.mean(axis=0), tol=1e-3)
    assert ranks["mean"] <= 16 < ranks["attention"]  # 15 and 31 (the 80 proposals' largest singular values: 6-8)


def test_attention_pooling_refuses_a_pb_that_the_slots_do_not_divide():
    with pytest.raises(UserError, match=r"--pb_pool=attention: each of the --pb_slots=3 slots proposes .* give a "
                                        r"--num_PB that is a multiple of 3 \(not 13\)"):
        transformer_pb(pb_pool="attention", num_PB=13)


@pytest.mark.parametrize("changes, message", [
    (dict(pb_input="state"), "--pb_input=state: only for --language_model=lstm"),
    (dict(proposal_reverse=True), "--proposal_reverse: only for --language_model=lstm"),
    (dict(units=15), "--units=15: --language_model=transformer splits it among --heads=2"),
    (dict(language_model="lstm", units=32), "--heads=2: only for --model=transformer or --language_model=transformer"),
    (dict(language_model="lstm", units=32, heads=4, tie_embeddings=True),
     "^--tie_embeddings: only for --model=transformer or --language_model=transformer"),
    (dict(tie_embeddings=True, embedding_size=8), "^--tie_embeddings: the output layer reads --units=16 numbers and the "
                                                  "word embedding has --embedding_size=8"),
])
def test_options_of_the_other_kind_of_language_model_are_refused_in_one_line(changes, message):
    with pytest.raises(UserError, match=message):
        transformer_pb(**changes)


def test_pb_read_is_refused_for_a_language_model_that_does_not_read_it():
    given = {"model": "rnnpbnmt", "amortize": "encoder", "pb_read": "prefix"}
    with pytest.raises(UserError, match=r"--pb_read=prefix: only for .*--language_model=transformer \(this run: "
                                        r".*--language_model=lstm\); it would be ignored"):
        check_applicable(given, Config.from_flat(given))


def test_tied_embeddings_make_each_language_models_output_layer_its_own_word_embeddings_table():
    untied, tied = transformer_pb(), transformer_pb(tie_embeddings=True)
    counted = lambda m: sum(int(np.prod(v.shape)) for v in m.trainable_variables)  # noqa: E731
    words = tied.lm_a.embedding.embedding.input_dim + tied.lm_b.embedding.embedding.input_dim
    assert counted(untied) - counted(tied) == words * 16  # each output matrix is gone, its bias stays
    for lm in (tied.lm_a, tied.lm_b):
        assert lm.output_layer.embedding is lm.embedding.embedding
    src, tgt = reversal_corpus(4)
    batch = first_batch(src, tgt)
    table = tied.lm_b.embedding.embedding.embeddings
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tied.sentence_losses(batch, "parallel")[0])
    gradient = tf.convert_to_tensor(tape.gradient(loss, table))
    # The output layer's gradient reaches every row of B's table, not only the rows of the words read.
    assert np.count_nonzero(np.abs(gradient.numpy()).sum(axis=1)) == table.shape[0]


def test_a_prefix_replaces_cross_attention_in_every_layer():
    slots, prefix = transformer_pb(num_layers=2), transformer_pb(num_layers=2, pb_read="prefix")
    assert all(layer.cross for layer in slots.lm_a.decoder_layers)
    assert not any(layer.cross for layer in prefix.lm_a.decoder_layers)
    assert len(prefix.trainable_variables) < len(slots.trainable_variables)


@pytest.mark.slow
def test_a_tiny_transformer_pb_model_trains_and_translates_both_ways(tmp_path, capsys, monkeypatch):
    (tmp_path / "data").mkdir()
    files = reversal_files(tmp_path / "data")
    wd = tmp_path / "run"
    flags = [f"--{k}={v}" if v is not True else f"--{k}" for k, v in TRANSFORMER_PB.items()]
    train_in_process(*files, "--model=rnnpbnmt", *flags, "--num_layers=1", "--pb_binding=soft",
                     "--label_smoothing=0.1", "--dropout=0.1", "--max_epochs=2", "--batch_size=8",
                     f"--working_dir={wd}")
    capsys.readouterr()
    for reverse in (False, True):
        status, out, err = cli_in_process(["--query=-", f"--working_dir={wd}", "--nbest=2"]
                                          + ["--reverse_translation"] * reverse, capsys, stdin=b"a b c\n",
                                          monkeypatch=monkeypatch)
        assert status == 0, err
        assert [line.split(" ||| ")[0] for line in out.splitlines()] == ["0", "0"]  # the n-best of line 0

"""--amortize, --refine_steps and --pb_prior: the bound model trained on the path it translates by.

The thesis's configuration is pinned first: these options must leave it as it was.
"""

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.data.dataset import make_dataset
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import bitext_retrieval
from rnnpb_nmt.models.losses import decoder_inputs
from rnnpb_nmt.models.rnnpb.binding import binding_loss
from rnnpb_nmt.train.step import Trainer

from helpers import bound_model, reversal_corpus, translator_of


def batch_of(src, tgt):
    return next(iter(make_dataset(src, tgt, batch_size=len(src))))


@pytest.mark.parametrize("changes, loss, first_steps", [
    # From commit 78903fa (before these options existed), with the same model, batch and seed.
    ({}, 725.8824081420898, (101.3105697631836, 99.29159545898438)),
    ({"bind_hard": True, "double_shared_updates": True}, 666.5185546875, (41.65740966796875, 41.581817626953125)),
])
def test_the_thesis_configuration_computes_what_it_did(changes, loss, first_steps):
    rng = np.random.default_rng(0)
    src = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(16)]
    tgt = [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(16)]
    model = bound_model(**changes)
    model.pbs.a.assign(tf.random.stateless_normal(model.pbs.a.shape, [1, 2]))
    batch = batch_of(src, tgt)
    per, extra, _ = model.sentence_losses(batch, "parallel")
    assert float(tf.reduce_sum(per)) + float(extra) == pytest.approx(loss, rel=1e-5)
    trainer = Trainer(model)
    trainer.dataset("parallel", src, tgt)
    trainer.start_epoch(1)
    steps = [float(trainer.train_step(batch)["loss"]) for _ in range(2)]
    assert steps == pytest.approx(list(first_steps), rel=1e-5)


@pytest.mark.parametrize("changes", [
    {"amortize": "encoder", "refine_steps": 2},
    {"amortize": "encoder", "refine_steps": 2, "refine_gradient": "stop", "encoder_binding": 1.0, "p0_loss": 0.5},
    {"amortize": "learned", "refine_steps": 2},
    {"amortize": "encoder", "refine_steps": 2, "self_loss": 0.0},
    {"amortize": "learned", "refine_steps": 2, "both_directions": True, "pb_binding": "soft", "self_loss": 0.0},
    {"amortize": "encoder", "refine_steps": 2, "pb_binding": "mean"},
    {"amortize": "encoder", "refine_steps": 0, "proposal_layers": 2, "pb_binding": "soft", "both_directions": True},
    {"amortize": "encoder", "refine_steps": 1, "proposal_output": "state", "num_PB": 32},
    {"amortize": "encoder", "refine_steps": 1, "proposal_output": "state", "pb_input": "state", "num_PB": 32},
    {"amortize": "encoder", "refine_steps": 0, "proposal_reverse": True},
    {"pb_prior": 0.1},
])
@pytest.mark.long  # 4 epochs of a tiny model, each option (5-12 s of CPU, most of it tracing)
def test_each_option_trains_a_tiny_model_to_a_better_dev_perplexity(changes):
    src, tgt = reversal_corpus(64)
    trainer = Trainer(bound_model(learning_rate=0.01, pb_learning_rate=0.05, num_train=64, max_recog_epochs=20,
                            embedding_size=8, units=16, num_layers=1, **changes))
    translator = translator_of(trainer.model)
    before = translator.dev_perplexity(src[:16], tgt[:16])
    for epoch in range(4):
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            terms = trainer.train_step(batch)
    assert np.isfinite(float(terms["loss"]))
    assert translator.dev_perplexity(src[:16], tgt[:16]) < 0.9 * before


def directional_derivatives(loss, variable, eps=1e-2):
    """The derivative of ``loss()`` along a fixed random direction of ``variable``: by its gradient
    (None when the loss does not reach it) and by central finite differences."""
    with tf.GradientTape() as tape:
        value = loss()
    grad = tape.gradient(value, variable)
    direction = tf.random.stateless_normal(variable.shape, [3, 4])
    original, values = variable.numpy(), []
    for sign in (1, -1):
        variable.assign(original + sign * eps * direction)
        values.append(float(loss()))
    variable.assign(original)
    analytic = None if grad is None else float(tf.reduce_sum(grad * direction))
    return analytic, (values[0] - values[1]) / (2 * eps)


def b_loss_after_refinement(model, batch):
    """B's loss of the targets from the sources' refined PBs: A's weights reach it only through the steps."""
    _, pb = model.propose_and_refine(batch["src"])
    return tf.reduce_sum(model.lm_b.sentence_losses(batch["tgt"], pb)[0])


@pytest.mark.parametrize("refine_gradient", ["full", "stop"])
def test_gradients_flow_through_the_unrolled_steps(refine_gradient):
    model = bound_model(amortize="encoder", refine_steps=3, refine_step_size=0.5, refine_gradient=refine_gradient,
                  num_PB=4, embedding_size=8, units=8, num_layers=1)
    batch = batch_of(*reversal_corpus(4))
    analytic, numeric = directional_derivatives(lambda: b_loss_after_refinement(model, batch),
                                                model.lm_a.output_layer.kernel)
    assert abs(numeric) > 1e-3  # A's weights do change B's loss, through the refined PB
    if refine_gradient == "full":
        assert analytic == pytest.approx(numeric, rel=2e-2)
    else:  # the cheap variant treats each step's gradient as a constant: no path from A's weights
        assert analytic is None


def test_refinement_steps_lower_the_source_loss_and_zero_steps_is_the_proposal():
    model = bound_model(amortize="encoder", refine_steps=5, refine_step_size=0.5)
    src, _ = reversal_corpus(8)
    seq = batch_of(src, src)["src"]
    p0, refined = model.propose_and_refine(seq)
    _, unrefined = model.propose_and_refine(seq, steps=0)
    np.testing.assert_array_equal(unrefined.numpy(), p0.numpy())
    loss = lambda pb: model.lm_a.sentence_losses(seq, pb)[0].numpy()
    assert np.all(loss(refined) < loss(p0))
    recognised = model.recognize(seq)
    np.testing.assert_allclose(recognised["pb"].numpy(), refined.numpy(), atol=1e-6)
    assert set(recognised["iterations"].numpy()) == {5}


def test_map_recognition_keeps_pbs_closer_to_zero():
    src, _ = reversal_corpus(8)
    seq = batch_of(src, src)["src"]
    norms = []
    for prior in (0.0, 1.0):
        model = bound_model(pb_prior=prior, max_recog_epochs=50, recog_stop="fixed", pb_learning_rate=0.1)
        recognize = tf.function(model.recognize)  # eagerly, its loop would run op by op
        norms.append(np.linalg.norm(recognize(seq)["pb"].numpy(), axis=1))
    assert np.all(norms[1] < norms[0])


def reverse_cross_entropy(model, src, tgt):
    """A's summed cross-entropy of the sources from the targets' PBs refined in B: B->A translation's."""
    batch = batch_of(src, tgt)
    pb = model.recognize(batch["tgt"], reverse=True)["pb"]
    return float(tf.reduce_sum(model.lm_a.sentence_losses(batch["src"], pb)[0]))


@pytest.mark.slow  # 4 epochs both ways through one unrolled step (about 15 s of CPU, most of it tracing)
def test_both_directions_trains_b_to_a_translation_too():
    src, tgt = reversal_corpus(64)
    model = bound_model(learning_rate=0.01, num_train=64, embedding_size=8, units=16, num_layers=1,
                  amortize="encoder", refine_steps=1, both_directions=True)
    before = reverse_cross_entropy(model, src[:16], tgt[:16])
    trainer = Trainer(model)
    for epoch in range(4):
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    assert reverse_cross_entropy(model, src[:16], tgt[:16]) < 0.95 * before


@pytest.mark.parametrize("both", [False, True])
def test_both_directions_trains_what_b_to_a_translation_uses(both):
    """B's refinement steps, and A generating from B's PB, are trained only with --both_directions."""
    model = bound_model(amortize="encoder", refine_steps=2, both_directions=both)
    batch = batch_of(*reversal_corpus(8))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model.sentence_losses(batch, "parallel")[0])
    grad = tape.gradient(loss, model.refinement_b.log_step)
    if both:
        assert float(tf.norm(grad)) > 0
    else:
        assert grad is None


@pytest.mark.parametrize("changes", [{}, {"amortize": "encoder", "autoencode": True}])
def test_both_directions_needs_amortized_translation(changes):
    with pytest.raises(UserError, match="--both_directions"):
        bound_model(both_directions=True, **changes)


@pytest.mark.parametrize("both", [False, True])
def test_self_loss_weighs_only_the_language_models_own_sentence_terms(both):
    batch = batch_of(*reversal_corpus(8))
    losses, terms = {}, {}
    for weight in (1.0, 0.0):
        per, _, terms[weight] = bound_model(amortize="encoder", refine_steps=2, both_directions=both,
                                            self_loss=weight).sentence_losses(batch, "parallel")
        losses[weight] = per.numpy()
    own = terms[1.0]["prediction_a"] + (terms[1.0]["prediction_b_from_b"] if both else 0.0)
    np.testing.assert_allclose(losses[1.0] - losses[0.0], own.numpy(), rtol=1e-5)
    # At 0 the own-sentence passes are not run (their terms would only be logged).
    assert not {"prediction_a", "prediction_b_from_b"} & set(terms[0.0])


def binding_term(model, batch):
    """--pb_binding=soft's summed term: A's refined PBs of the sources against B's of the targets."""
    _, pb_a = model.propose_and_refine(batch["src"])
    _, pb_b = model.propose_and_refine(batch["tgt"], reverse=True)
    return tf.reduce_sum(binding_loss(pb_a, pb_b, model.config.training.pb_binding_strength))


@pytest.mark.parametrize("weight", ["lm_a", "proposal_b"])
def test_the_binding_terms_gradient_matches_finite_differences(weight):
    """The term reaches A's language model through the refinement steps of the source (second
    order), and B's proposal directly: both gradients agree with finite differences."""
    model = bound_model(amortize="encoder", refine_steps=2, refine_step_size=0.5, pb_binding="soft",
                  pb_binding_strength=3.0, num_PB=4, embedding_size=8, units=8, num_layers=1)
    batch = batch_of(*reversal_corpus(4))
    per, _, terms = model.sentence_losses(batch, "parallel")
    assert float(tf.reduce_sum(terms["binding"])) == pytest.approx(float(binding_term(model, batch)), rel=1e-5)
    kernel = model.lm_a.output_layer.kernel if weight == "lm_a" else model.proposal_b.output_layer.kernel
    analytic, numeric = directional_derivatives(lambda: binding_term(model, batch), kernel)
    assert abs(numeric) > 1e-3
    assert analytic == pytest.approx(numeric, rel=2e-2)


@pytest.mark.parametrize("term, value", [("denoise_loss", 1.0), ("pb_binding", "soft"), ("self_loss", 0.0),
                                         ("p0_loss", 0.5), ("encoder_binding", 0.1)])
def test_a_term_of_a_pairs_two_sentences_under_autoencode_is_refused(term, value):
    with pytest.raises(UserError, match=rf"^--{term}={value}: a term of a pair's two sentences; under --autoencode "
                                        r"each sentence learns from its own PB alone \(it would be ignored\)$"):
        bound_model(amortize="encoder", autoencode=True, **{term: value})
    bound_model(amortize="encoder", autoencode=True)


@pytest.mark.parametrize("self_loss", [1.0, 0.0])
def test_mean_binding_gives_a_pair_one_pb_for_both_language_models_in_both_directions(self_loss):
    """Under mean the terms are soft binding's with the pair's two PBs one: with --both_directions A
    learns B->A from it at weight 1 whatever --self_loss, so --self_loss=0 still trains A."""
    model = bound_model(amortize="encoder", refine_steps=2, pb_binding="mean", both_directions=True,
                        self_loss=self_loss)
    batch = batch_of(*reversal_corpus(8))
    per, _, terms = model.sentence_losses(batch, "parallel")
    _, pb_a = model.propose_and_refine(batch["src"])
    _, pb_b = model.propose_and_refine(batch["tgt"], reverse=True)
    mean = (pb_a + pb_b) / 2
    from_mean = {"a": model.lm_a.sentence_losses(batch["src"], mean)[0],
                 "b": model.lm_b.sentence_losses(batch["tgt"], mean)[0]}
    expected = {"prediction_b": "b", "prediction_a_from_b": "a"}
    if self_loss:
        expected.update(prediction_a="a", prediction_b_from_b="b")
    assert set(terms) - {"perplexity"} == set(expected)
    for term, side in expected.items():
        np.testing.assert_allclose(terms[term], from_mean[side], rtol=1e-5)
    np.testing.assert_allclose(per, (1 + self_loss) * (from_mean["a"] + from_mean["b"]), rtol=1e-5)


@pytest.mark.long  # trains two tiny models
def test_soft_binding_brings_a_pairs_two_pbs_together():
    """Trained alike from the same seed, with and without --pb_binding=soft: the PBs that A and B
    recognise of a pair are nearer each other than other pairs' with it (binding ratio), and
    retrieve each other better."""
    src, tgt = reversal_corpus(64)
    found = {}
    for binding in ("none", "soft"):
        model = bound_model(amortize="encoder", refine_steps=2, both_directions=True, pb_binding=binding,
                      pb_binding_strength=5.0, learning_rate=0.01, num_train=64, embedding_size=8, units=16,
                      num_layers=1)
        trainer = Trainer(model)
        for epoch in range(4):
            for batch in trainer.dataset("parallel", src, tgt, epoch):
                trainer.train_step(batch)
        batch = batch_of(src, tgt)
        pbs = [model.recognize(batch[side], reverse=side == "tgt")["pb"].numpy() for side in ("src", "tgt")]
        found[binding] = bitext_retrieval(*pbs, [tuple(s) for s in src], [tuple(t) for t in tgt])
    assert found["soft"]["binding_ratio"] < 0.75 * found["none"]["binding_ratio"]
    assert found["soft"]["p_at_1_source_to_target"] > found["none"]["p_at_1_source_to_target"]


def test_a_state_proposal_is_the_encoders_final_state_and_its_size_is_the_pbs():
    """--proposal_output=state: the proposed PB is every encoder layer's final (h, c), after the
    sentence's last real token (padding changes nothing), and no map is learned on top of it."""
    model = bound_model(amortize="encoder", refine_steps=1, proposal_output="state", proposal_layers=2, num_PB=128)
    batch = batch_of(*reversal_corpus(8))
    proposal = model.proposal_a
    _, states = proposal.lstm(proposal.embedding(batch["src"]), mask=batch["src"] != 0)
    expected = np.concatenate([part.numpy() for layer in states for part in layer], axis=1)
    np.testing.assert_allclose(proposal(batch["src"]).numpy(), expected, rtol=1e-6)
    assert expected.shape == (8, 128) and proposal.output_layer is None
    padded = tf.pad(batch["src"], [[0, 0], [0, 3]])
    np.testing.assert_allclose(proposal(padded).numpy(), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(UserError, match=r"--proposal_output=state: .* give --num_PB=128 \(not 64\)"):
        bound_model(amortize="encoder", proposal_output="state", proposal_layers=2, num_PB=64)


def test_a_reversed_proposal_reads_the_words_backwards_with_end_last():
    """--proposal_reverse: the encoder's PB of a sentence is the unreversed encoder's PB of the
    sentence written backwards (its <end> still last); padding changes nothing."""
    forward = bound_model(amortize="encoder", refine_steps=1, proposal_output="state", num_PB=128,
                          proposal_layers=2)
    backward = bound_model(amortize="encoder", refine_steps=1, proposal_output="state", num_PB=128,
                           proposal_layers=2, proposal_reverse=True)
    backward.proposal_a.set_weights(forward.proposal_a.get_weights())
    src = batch_of(*reversal_corpus(8))["src"].numpy()
    flipped = np.zeros_like(src)
    for i, row in enumerate(src):
        words = row[row != 0]
        flipped[i, :len(words)] = [*words[-2::-1], words[-1]]
    np.testing.assert_allclose(backward.proposal_a(src).numpy(), forward.proposal_a(flipped).numpy(), rtol=1e-5)
    assert not np.allclose(backward.proposal_a(src).numpy(), forward.proposal_a(src).numpy(), rtol=1e-3)
    padded = np.pad(src, [[0, 0], [0, 3]])
    np.testing.assert_allclose(backward.proposal_a(padded).numpy(), backward.proposal_a(src).numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pb_input", ["gates", "state"])
def test_generation_step_by_step_gives_the_teacher_forced_probabilities(pb_input):
    """What training scores (a whole sentence, teacher forced) is what translation's steps compute,
    whichever way the language model reads its PB; a PB read as the state is the LSTMs' initial
    (h, c), layer by layer, and layer 1 then has no PB input weights."""
    model = bound_model(amortize="encoder", refine_steps=1, pb_input=pb_input, num_PB=128)
    lm, seq = model.lm_b, batch_of(*reversal_corpus(8))["tgt"]
    pb = tf.random.stateless_normal([8, 128], seed=[1, 2])
    summed, _ = lm.sentence_losses(seq, pb)
    state, inputs, stepped = lm.start_state(pb), decoder_inputs(seq), 0.0
    for t in range(seq.shape[1]):
        logits, state = lm.step(inputs[:, t], state)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=seq[:, t], logits=logits)
        stepped += ce * tf.cast(seq[:, t] != 0, tf.float32)
    np.testing.assert_allclose(stepped.numpy(), summed.numpy(), rtol=1e-4)
    other, _ = lm.sentence_losses(seq, tf.roll(pb, 1, axis=0))
    assert not np.allclose(other.numpy(), summed.numpy(), rtol=1e-3)  # the PB is read
    if pb_input == "state":
        assert lm.lstm.kernels[0].shape[0] == 16  # the embedding alone
        np.testing.assert_allclose(lm.start_state(pb)["lstm"][1][1].numpy(), pb[:, 96:].numpy())  # layer 2's c


def test_a_pb_read_as_the_state_must_be_the_state_size():
    with pytest.raises(UserError, match=r"--pb_input=state: .* give --num_PB=128 \(not 64\)"):
        bound_model(pb_input="state", num_PB=64)


@pytest.mark.parametrize("language_model", ["lstm", "transformer"])
def test_proposal_dropout_drops_in_training_only_and_draws_nothing_at_zero(language_model):
    sizes = dict(units=16, embedding_size=16, heads=2, num_PB=12, pb_slots=3) if language_model == "transformer" \
        else dict(num_PB=8)
    src, _ = reversal_corpus(6, seed=5)
    seq = batch_of(src, src)["src"]
    proposals = {}
    for rate in (0.0, 0.5):
        model = bound_model(amortize="encoder", language_model=language_model, proposal_dropout=rate, **sizes)
        rng = tf.random.Generator.from_seed(3)
        proposals[rate] = (model.proposal_a(seq).numpy(), model.proposal_a(seq, rng=rng).numpy(), rng.state.numpy())
    untouched = tf.random.Generator.from_seed(3).state.numpy()
    test, training, state = proposals[0.0]
    np.testing.assert_array_equal(training, test)  # at 0: the same proposal, and the generator not drawn from
    np.testing.assert_array_equal(state, untouched)
    test_05, training_05, state_05 = proposals[0.5]
    np.testing.assert_allclose(test_05, test, rtol=1e-6)  # the same weights: no dropout without the generator
    assert np.abs(training_05 - test_05).max() > 1e-3 and not np.array_equal(state_05, untouched)

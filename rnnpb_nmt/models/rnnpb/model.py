"""The bound RNNPB translation model: RNNPB A (source language) and RNNPB B (target language).

Training fits both language models and their PB tables jointly, bound so that a sentence pair
shares (hard) or nearly shares (soft) its PB. Translation recognises the source's PB in A and
generates from it in B; B->A is the same with the roles swapped (``reversed()``, a ``BackwardView``).

With --amortize there are no PB tables: a pair's PB is the source's proposed PB refined on A's
loss of the source (``rnnpb_nmt.models.rnnpb.amortized``), in training as in translation, and B is trained on it.
--pb_binding binds it to the target's PB refined in B, as the thesis bound its tables: soft (a
penalty on their distance) or as one PB, their mean; ``--analyze`` measures what binding achieves
(bitext retrieval between the two languages' recognised PBs).
"""

import dataclasses

import numpy as np
import tensorflow as tf

from rnnpb_nmt.data.dataset import batch_spec, encode_all, make_dataset
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.layers.transformer import feed_forward_width
from rnnpb_nmt.models.base import NMTModel
from rnnpb_nmt.models.losses import noised
from rnnpb_nmt.models.rnnpb import analysis, joint
from rnnpb_nmt.models.rnnpb.amortized import PBProposal, Refinement
from rnnpb_nmt.models.rnnpb.binding import PBTables, binding_loss, binding_quality
from rnnpb_nmt.models.rnnpb.language_model import RNNPBLanguageModel
from rnnpb_nmt.models.rnnpb.recognition import RecognitionSettings, recognize
from rnnpb_nmt.models.rnnpb.transformer_lm import TransformerPBLanguageModel, TransformerProposal
from rnnpb_nmt.registry import register_model


# --amortize's terms of a pair's two sentences (``BoundRNNPB._amortized_losses``).
PAIR_TERMS = ("self_loss", "denoise_loss", "pb_binding", "p0_loss", "encoder_binding")


def _given(options, names):
    """Those of ``names`` whose values in ``options`` (a section of the configuration) are not their defaults."""
    defaults = {f.name: f.default for f in dataclasses.fields(options)}
    return [name for name in names if getattr(options, name) != defaults[name]]


def _check_terms(config):
    """A UserError for options whose terms --amortize's losses would leave out without a word."""
    m, t = config.model, config.training
    if m.amortize != "none" and m.autoencode:
        given = _given(t, PAIR_TERMS)
        if given:
            raise UserError(f"--{given[0]}={getattr(t, given[0])}: a term of a pair's two sentences; under "
                            "--autoencode each sentence learns from its own PB alone (it would be ignored)")


def _check_state_size(m, flag, what, layers):
    """A PB that is an LSTM's state, (h, c) of each of its ``layers`` (an option's name), has that many numbers."""
    size = 2 * getattr(m, layers) * m.units
    if m.num_PB != size:
        raise UserError(f"{flag}: the PB is {what}, 2 x --{layers} x --units = {size} numbers; "
                        f"give --num_PB={size} (not {m.num_PB})")


def _check_layers(m, transformers):
    """A UserError for an option of the other kind of language model than the one the run has."""
    if transformers:
        lstm_only = {"--pb_input=state": m.pb_input == "state", "--proposal_output=state": m.proposal_output == "state",
                     "--proposal_reverse": m.proposal_reverse, "--no_pb_dropout": m.no_pb_dropout}
        given = [flag for flag, on in lstm_only.items() if on]
        if given:
            raise UserError(f"{given[0]}: only for --language_model=lstm (this run: --language_model=transformer)")
        return
    given = [f"--{name}={getattr(m, name)}" for name in _given(m, ("heads", "ffn_units", "tie_embeddings"))]
    if given:
        raise UserError(f"{given[0].removesuffix('=True')}: only for --model=transformer or --language_model=transformer; "
                        "it would be ignored")


def _distinct(variables):
    """Each variable once, in the order first listed."""
    return list({id(v): v for v in variables}.values())


@register_model("rnnpbnmt", aliases=("rnnpbmt", "rnnpbmmt"))  # the thesis listings' spellings
class BoundRNNPB(NMTModel):
    """``--model=rnnpbnmt``; with ``--autoencode`` one RNNPB is both A and B."""

    reversible = True
    reranks = True  # by joint recognition, with --joint_rerank

    @property
    def export_refusal(self):
        """Why ``rnnpb-nmt export`` refuses the model, or None: the thesis's recognition, hundreds of
        Adam iterations per sentence, is refused; --amortize's fixed --refine_steps are exported."""
        if self.pbs is None:
            return None
        return (f"--model={self.config.model.model} without --amortize recognises each source by up to "
                f"--max_recog_epochs={self.config.inference.max_recog_epochs} Adam iterations (the thesis's 100-500): "
                "not exported; export a run trained with --amortize=learned or --amortize=encoder")

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        m, data = config.model, config.data
        transformers = m.amortize == "encoder" and m.language_model == "transformer"
        _check_layers(m, transformers)
        if transformers:
            hidden = feed_forward_width(m.units, m.heads, m.ffn_units, "--language_model=transformer")

        def language_model(vocab, name):
            if transformers:
                return TransformerPBLanguageModel(len(vocab), m.embedding_size, m.units, m.num_layers, m.heads,
                                                  hidden, m.num_PB, m.pb_slots, m.dropout,
                                                  m.sigma, config.training.label_smoothing, m.pb_read,
                                                  m.tie_embeddings, name=name)
            return RNNPBLanguageModel(len(vocab), m.embedding_size, m.units, m.num_layers, m.num_PB, m.dropout,
                                      m.sigma, pb_dropout=not m.no_pb_dropout, pb_input=m.pb_input,
                                      label_smoothing=config.training.label_smoothing, name=name)

        if m.pb_input == "state":
            _check_state_size(m, "--pb_input=state", "a language model's initial state", "num_layers")

        self.lm_a = language_model(vocab1, "rnnpb_a")
        self.lm_b = self.lm_a if m.autoencode else language_model(vocab2, "rnnpb_b")
        self.recognition = RecognitionSettings.from_config(config)
        if config.training.both_directions and (m.amortize == "none" or m.autoencode):
            raise UserError("--both_directions: needs --amortize and two languages (not --autoencode)")
        _check_terms(config)
        self.pbs = None
        if m.amortize == "none":
            self.pbs = PBTables(data.num_train, m.num_PB, m.bind_hard, data.num_mono1, data.num_mono2)
            return

        if m.amortize == "encoder" and m.proposal_output == "state":
            _check_state_size(m, "--proposal_output=state", "the encoder's final state", "proposal_layers")

        def proposal(vocab, name):
            if transformers:
                return TransformerProposal(len(vocab), m.embedding_size, m.units, m.proposal_layers, m.heads,
                                           hidden, m.num_PB, m.pb_pool, m.pb_slots, m.proposal_dropout, name=name)
            return PBProposal(m.amortize, len(vocab), m.embedding_size, m.units, m.num_PB, m.proposal_layers,
                              m.proposal_output, m.proposal_reverse, m.proposal_dropout, name=name)

        self.proposal_a = proposal(vocab1, "proposal_a")
        self.proposal_b = self.proposal_a if m.autoencode else proposal(vocab2, "proposal_b")
        self.refinement_a = Refinement(m.num_PB, m.refine_step_size, name="refinement_a")
        self.refinement_b = self.refinement_a if m.autoencode else Refinement(m.num_PB, m.refine_step_size,
                                                                              name="refinement_b")

    @property
    def monolingual_kinds(self):
        """Under --autoencode B is A, so its monolingual data is A's."""
        return ("mono1",) if self.config.model.autoencode else ("mono1", "mono2")

    def variable_groups(self):
        """Network weights and PB tables: separate LazyAdams, learning rates and clipping.

        With --double_shared_updates a variable is listed once for each of A and B that uses it,
        as the thesis's code built its lists (A's variables + B's): the optimiser then applies two
        updates to it per step, and the clipping norm counts its gradient twice. That is how the
        thesis's Exp I (every weight shared) trained about twice as fast per epoch as we do
        without it (run_scripts/results/notes/thesis.md, 2026-11-23).
        """
        t = self.config.training
        if self.pbs is None:  # amortised: every variable is a network weight
            parts = (self.lm_a, self.lm_b, self.proposal_a, self.proposal_b, self.refinement_a, self.refinement_b)
            return [("weights", _distinct([v for part in parts for v in part.trainable_variables]), t.learning_rate)]
        weights = [v for lm in (self.lm_a, self.lm_b) for v in lm.trainable_variables]
        pbs = [self.pbs.a, self.pbs.b, self.pbs.mono_a, self.pbs.mono_b]
        if not t.double_shared_updates:
            weights, pbs = _distinct(weights), _distinct(pbs)
        return [("weights", weights, t.learning_rate), ("pb", pbs, t.pb_learning_rate)]

    def sentence_losses(self, batch, kind, rng=None):
        if self.pbs is None:
            return self._amortized_losses(batch, kind, rng)
        index = batch["index"]
        if kind in ("mono1", "mono2"):  # one language model on its own sentences, unbound
            lm, table, side = (self.lm_a, self.pbs.mono_a, "a") if kind == "mono1" else (self.lm_b, self.pbs.mono_b, "b")
            pb = tf.gather(table, index)
            ce, tokens = lm.sentence_losses(batch["src"], pb, rng)
            # Not "perplexity": the epoch's training perplexity is the translation's, B given A.
            return ce + self._prior(pb), 0.0, {f"prediction_{side}": ce, f"perplexity_{kind}": tf.exp(ce / tokens)}
        pb_a = tf.gather(self.pbs.a, index)
        ce_a, tokens_a = self.lm_a.sentence_losses(batch["src"], pb_a, rng)
        if self.config.model.autoencode:  # one model, one sentence: A's loss is B's
            return ce_a + self._prior(pb_a), 0.0, {"prediction_a": ce_a, "perplexity": tf.exp(ce_a / tokens_a)}
        pb_b = pb_a if self.pbs.hard else tf.gather(self.pbs.b, index)
        ce_b, tokens_b = self.lm_b.sentence_losses(batch["tgt"], pb_b, rng)
        terms = {"prediction_a": ce_a, "prediction_b": ce_b, "perplexity": tf.exp(ce_b / tokens_b)}
        if self.pbs.hard:
            return ce_a + ce_b + self._prior(pb_a), 0.0, terms
        terms["binding"] = binding_loss(pb_a, pb_b, self.config.model.binding_strength)
        return ce_a + ce_b + self._prior(pb_a, pb_b), tf.reduce_sum(terms["binding"]), terms

    def _prior(self, *pbs):
        """--pb_prior's per-sentence term, prior * ||p||^2 / 2, of the PBs a loss uses (else 0)."""
        prior = self.config.training.pb_prior
        return sum(prior * 0.5 * tf.reduce_sum(tf.square(pb), axis=1) for pb in pbs) if prior else 0.0

    def _amortized_losses(self, batch, kind, rng):
        """The losses of --amortize: the source's refined PB is the pair's (see ``rnnpb_nmt.models.rnnpb.amortized``)."""
        t, reverse = self.config.training, kind == "mono2"
        p0, pb = self.propose_and_refine(batch["src"], reverse, rng=rng)
        lm = self.lm_b if reverse else self.lm_a
        prior = self._prior(pb)
        if kind in ("mono1", "mono2") or self.config.model.autoencode:
            # A monolingual sentence autoencodes through its own PB (so does every sentence under --autoencode).
            ce_a, tokens_a = lm.sentence_losses(batch["src"], pb, rng)
            if kind == "parallel":
                return ce_a + prior, 0.0, {"prediction_a": ce_a, "perplexity": tf.exp(ce_a / tokens_a)}
            side = "b" if reverse else "a"
            return ce_a + prior, 0.0, {f"prediction_{side}": ce_a, f"perplexity_{kind}": tf.exp(ce_a / tokens_a)}
        pb_b = None
        if t.both_directions or t.pb_binding != "none":  # the pair's other PB: the target's, refined in B
            _, pb_b = self.propose_and_refine(batch["tgt"], reverse=True, rng=rng)
        if t.pb_binding == "mean":  # one PB per pair, as the thesis's hard-bound table
            pb = pb_b = (pb + pb_b) / 2
        # --self_loss: how much a language model also learns to generate its own sentence from
        # the PB refined on that sentence, a PB that translation never gives it. At 0 its passes
        # are not run at all (with --both_directions, 15 % of a step: docs/performance.md).
        terms, loss = {}, prior
        if t.self_loss:
            terms["prediction_a"], _ = self.lm_a.sentence_losses(batch["src"], pb, rng)
            loss += t.self_loss * terms["prediction_a"]
        terms["prediction_b"], tokens_b = self.lm_b.sentence_losses(batch["tgt"], pb, rng)
        terms["perplexity"] = tf.exp(terms["prediction_b"] / tokens_b)
        loss += terms["prediction_b"]
        if t.pb_binding == "soft":
            terms["binding"] = binding_loss(pb, pb_b, t.pb_binding_strength)
            loss += terms["binding"]
        if t.denoise_loss and rng is not None:  # SONAR's denoising auto-encoding, in training only
            loss += self._denoising(batch, rng, terms)
        if t.p0_loss:  # B from the proposal alone: the proposal itself must already translate
            terms["prediction_b_p0"], _ = self.lm_b.sentence_losses(batch["tgt"], p0, rng)
            loss += t.p0_loss * terms["prediction_b_p0"]
        if t.both_directions:  # the pair B->A: the target's PB (under mean, the pair's one PB) generates the source in A
            if t.self_loss:
                terms["prediction_b_from_b"], _ = self.lm_b.sentence_losses(batch["tgt"], pb_b, rng)
                loss += t.self_loss * terms["prediction_b_from_b"]
            terms["prediction_a_from_b"], _ = self.lm_a.sentence_losses(batch["src"], pb_b, rng)
            loss += terms["prediction_a_from_b"] + self._prior(pb_b)
        if t.encoder_binding and self.config.model.amortize == "encoder":  # B's encoder, for B->A
            terms["encoder_binding"] = binding_loss(p0, self.proposal_b(batch["tgt"], rng=rng), t.encoder_binding)
            loss += terms["encoder_binding"]
        return loss, 0.0, terms

    def _denoising(self, batch, rng, terms):
        """--denoise_loss's term: each language model's loss of its sentence from the PB recognised on
        a noised copy (``losses.noised``); B's of the target too with --both_directions."""
        t = self.config.training
        sides = [("a", "src", False, self.lm_a)] + ([("b", "tgt", True, self.lm_b)] if t.both_directions else [])
        total = 0.0
        for side, key, reverse, lm in sides:
            _, pb = self.propose_and_refine(noised(batch[key], rng), reverse, rng=rng)
            terms[f"denoise_{side}"], _ = lm.sentence_losses(batch[key], pb, rng)
            total += t.denoise_loss * terms[f"denoise_{side}"]
        return total

    def propose_and_refine(self, src, reverse=False, steps=None, rng=None):
        """(proposed PBs, PBs after ``steps`` refinement steps, default --refine_steps) of
        encoded sentences ``src`` in A (in B when ``reverse``); in training (``rng``) the proposal
        with --proposal_dropout, the steps without (they descend the true loss, as recognition's)."""
        proposal, refinement = (self.proposal_b, self.refinement_b) if reverse else (self.proposal_a, self.refinement_a)
        p0 = proposal(src, rng=rng)
        steps = self.config.inference.refine_steps if steps is None else steps
        pb = refinement.refine(self.lm_b if reverse else self.lm_a, src, p0, steps, self.config.training.pb_prior,
                               self.recognition.clip, self.config.training.refine_gradient == "stop")
        return p0, pb

    def on_epoch_end(self, epoch, rng):
        if self.pbs is not None and self.config.training.p_reset > 0:
            self.pbs.reset(self.config.training.p_reset, rng)

    def summary_scalars(self):
        if self.pbs is None:
            steps = {f"refine/mean_step_size_{side}": float(tf.reduce_mean(tf.exp(r.log_step)))
                     for side, r in (("a", self.refinement_a), ("b", self.refinement_b))}
            return dict(super().summary_scalars(), **steps)
        quality = binding_quality(self.pbs.a, self.pbs.b)
        return dict(super().summary_scalars(), **{f"pb/{k}": v for k, v in quality.items()})

    def recognize(self, src, reverse=False, record=False):
        """Recognise PBs of encoded sentences ``src`` (B, T) in A (in B when ``reverse``): Adam
        recognition (``rnnpb_nmt.models.rnnpb.recognition``), or with --amortize the proposal and its refinement."""
        lm = self.lm_b if reverse else self.lm_a
        if self.pbs is None:
            _, pb = self.propose_and_refine(src, reverse)
            steps = tf.fill([tf.shape(src)[0]], self.config.inference.refine_steps)
            return {"pb": pb, "iterations": steps, "loss": lm.sentence_losses(src, pb)[0]}
        return recognize(lm, src, self.recognition, record)

    def score_targets(self, batch):
        pb = self.recognize(batch["src"])["pb"]
        return self.lm_b.sentence_losses(batch["tgt"], pb)

    def decoder_start(self, src):
        return self.lm_b.start_state(self.recognize(src)["pb"])

    def decoder_step(self, tokens, state):
        return self.lm_b.step(tokens, state)

    def rerank(self, src, nbest, scores):
        """With --joint_rerank=λ > 0, by joint recognition of the source and each hypothesis
        (``rnnpb_nmt.models.rnnpb.joint``); else by the beam's scores."""
        return joint.rerank(self, src, nbest, scores)

    def reversed(self):
        return BackwardView(self)

    # ----- inspection (PB-space analysis) -------------------------------------------------------
    def analyze(self, train_pairs, test_pairs, out_dir):
        return analysis.analyze(self, train_pairs, test_pairs, out_dir)

    def trained_pbs(self, indices, side="a"):
        """Trained PB vectors of training sentences ``indices`` in table ``a`` or ``b``, as numpy."""
        table = self.pbs.a if side == "a" else self.pbs.b
        return tf.gather(table, np.asarray(indices, np.int32)).numpy()

    def recognize_sentences(self, sentences, side="a", batch_size=256):
        """Recognise tokenized sentences in A (or B). Returns numpy ``pb`` (N, num_PB),
        ``iterations`` (N,), final ``loss`` (N,) and per sentence (lists of N arrays) the path its
        recognition took: ``history``, the summed cross-entropy before each update and after the
        last one (iterations + 1 values); ``pb_history``, the PB at the same points (iterations +
        1, num_PB); ``grad_norm_history``, the gradient norm of each update (iterations)."""
        vocab = self.vocab1 if side == "a" else self.vocab2
        fn = tf.function(lambda src: self.recognize(src, reverse=side == "b", record=True),
                         input_signature=[batch_spec()["src"]])  # one trace for every batch shape
        out = {"pb": [], "iterations": [], "loss": [], "history": [], "pb_history": [], "grad_norm_history": []}
        for batch in make_dataset(encode_all(vocab, sentences), batch_size=batch_size):
            r = {k: v.numpy() for k, v in fn(batch["src"]).items()}
            for key in ("pb", "iterations", "loss"):
                out[key].append(r[key])
            for i, n in enumerate(r["iterations"]):
                out["history"].append(np.append(r["history"][:n, i], r["loss"][i]))
                out["pb_history"].append(np.concatenate([r["pb_history"][:n, i], r["pb"][None, i]]))
                out["grad_norm_history"].append(r["grad_norm_history"][:n, i])
        return {k: np.concatenate(v) if k in ("pb", "iterations", "loss") else v for k, v in out.items()}


class BackwardView:
    """The bound model translating B->A (``BoundRNNPB.reversed()``): its weights, nothing copied,
    recognise the source's PB in B and generate from it in A. It has what search needs of a model
    (``rnnpb_nmt.models.base``): the one-step decoder, the reranking and the sides, A's and B's swapped."""

    direction = "B->A"

    def __init__(self, bound):
        self.bound, self.config, self.reranks = bound, bound.config, bound.reranks
        self.languages, self.vocabularies = bound.languages[::-1], bound.vocabularies[::-1]
        self.longest_source = bound.config.data.longest2

    @property
    def averaged_epochs(self):
        """The epochs whose mean weights the bound model holds (``WorkingDir.load_model``), for testing_stats.json."""
        return getattr(self.bound, "averaged_epochs", ())

    def decoder_start(self, src):
        return self.bound.lm_a.start_state(self.bound.recognize(src, reverse=True)["pb"])

    def decoder_step(self, tokens, state):
        return self.bound.lm_a.step(tokens, state)

    def rerank(self, src, nbest, scores):
        return joint.rerank(self.bound, src, nbest, scores, reverse=True)

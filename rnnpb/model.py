"""The bound RNNPB translation model: RNNPB A (source language) and RNNPB B (target language).

Training fits both language models and their PB tables jointly, bound so that a sentence pair
shares (hard) or nearly shares (soft) its PB. Translation recognises the source's PB in A and
generates from it in B; B->A is the same with the roles swapped.
"""

import numpy as np
import tensorflow as tf

from nmtcore.data import encode_all, make_dataset
from nmtcore.model import NMTModel
from rnnpb import analysis
from rnnpb.binding import PBTables, binding_loss, binding_quality
from rnnpb.language_model import RNNPBLanguageModel
from rnnpb.recognition import RecognitionSettings, recognize


def _distinct(variables):
    """Each variable once, in the order first listed."""
    return list({id(v): v for v in variables}.values())


class BoundRNNPB(NMTModel):
    """``--model=rnnpbnmt``; with ``--autoencode`` one RNNPB is both A and B."""

    reversible = True

    def __init__(self, config, vocab1, vocab2):
        super().__init__(config, vocab1, vocab2)
        m, data = config.model, config.data

        def language_model(vocab, name):
            return RNNPBLanguageModel(len(vocab), m.embedding_size, m.units, m.num_layers, m.num_PB, m.dropout,
                                      m.sigma, name=name)

        self.lm_a = language_model(vocab1, "rnnpb_a")
        self.lm_b = self.lm_a if m.autoencode else language_model(vocab2, "rnnpb_b")
        self.pbs = PBTables(data.num_train, m.num_PB, m.bind_hard, data.num_mono1, data.num_mono2)
        self.recognition = RecognitionSettings.from_config(config)

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
        without it (results/README.md).
        """
        weights = [v for lm in (self.lm_a, self.lm_b) for v in lm.trainable_variables]
        pbs = [self.pbs.a, self.pbs.b, self.pbs.mono_a, self.pbs.mono_b]
        t = self.config.training
        if not t.double_shared_updates:
            weights, pbs = _distinct(weights), _distinct(pbs)
        return [("weights", weights, t.learning_rate), ("pb", pbs, t.pb_learning_rate)]

    def sentence_losses(self, batch, kind, rng=None):
        index = batch["index"]
        if kind in ("mono1", "mono2"):  # one language model on its own sentences, unbound
            lm, table, side = (self.lm_a, self.pbs.mono_a, "a") if kind == "mono1" else (self.lm_b, self.pbs.mono_b, "b")
            ce, tokens = lm.sentence_losses(batch["src"], tf.gather(table, index), rng)
            # Not "perplexity": the epoch's training perplexity is the translation's, B given A.
            return ce, 0.0, {f"prediction_{side}": ce, f"perplexity_{kind}": tf.exp(ce / tokens)}
        pb_a = tf.gather(self.pbs.a, index)
        ce_a, tokens_a = self.lm_a.sentence_losses(batch["src"], pb_a, rng)
        if self.config.model.autoencode:  # one model, one sentence: A's loss is B's
            return ce_a, 0.0, {"prediction_a": ce_a, "perplexity": tf.exp(ce_a / tokens_a)}
        pb_b = pb_a if self.pbs.hard else tf.gather(self.pbs.b, index)
        ce_b, tokens_b = self.lm_b.sentence_losses(batch["tgt"], pb_b, rng)
        terms = {"prediction_a": ce_a, "prediction_b": ce_b, "perplexity": tf.exp(ce_b / tokens_b)}
        if self.pbs.hard:
            return ce_a + ce_b, 0.0, terms
        terms["binding"] = binding_loss(pb_a, pb_b, self.config.model.binding_strength)
        return ce_a + ce_b, tf.reduce_sum(terms["binding"]), terms

    def on_epoch_end(self, epoch, rng):
        if self.config.training.p_reset > 0:
            self.pbs.reset(self.config.training.p_reset, rng)

    def summary_scalars(self):
        quality = binding_quality(self.pbs.a, self.pbs.b)
        return dict(super().summary_scalars(), **{f"pb/{k}": v for k, v in quality.items()})

    def recognize(self, src, reverse=False, record=False):
        """Recognise PBs of encoded sentences ``src`` (B, T) in A (in B when ``reverse``)."""
        return recognize(self.lm_b if reverse else self.lm_a, src, self.recognition, record)

    def score_targets(self, batch):
        pb = self.recognize(batch["src"])["pb"]
        return self.lm_b.sentence_losses(batch["tgt"], pb)

    def decoder_start(self, src, reverse):
        return (self.lm_a if reverse else self.lm_b).start_state(self.recognize(src, reverse)["pb"])

    def decoder_step(self, tokens, state, reverse):
        return (self.lm_a if reverse else self.lm_b).step(tokens, state)

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
        fn = tf.function(lambda src: self.recognize(src, reverse=side == "b", record=True))
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

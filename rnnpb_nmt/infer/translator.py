"""The Translator: a trained model's dev perplexity and translations, batched over every core.

What a model computes is its own (``score_targets``, ``decoder_start``/``decoder_step``); how
sentences are batched, searched and put back in input order is the same for every model, and is
here, with the compiled functions that do it. A translator translates the direction of its model:
``Translator(model)`` A->B, ``translator.reversed()`` B->A (the model's reversed view).
"""

import functools

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from rnnpb_nmt import progress
from rnnpb_nmt.data.dataset import batch_spec, encode_all, evaluation_batches
from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import parallel, search
from rnnpb_nmt.metrics import perplexity


class Hypothesis(NamedTuple):
    """One translation of an n-best list: its words, its summed log-probability, and the
    log-probability of each word and of the ``<end>`` after them."""

    tokens: list
    score: float
    token_scores: list


class Translator:
    """Evaluates and translates with ``model`` under its ``config.inference`` settings."""

    def __init__(self, model):
        self.model, self.config = model, model.config.inference
        if self.config.joint_rerank and not model.reranks:
            raise UserError(f"--joint_rerank: --model={model.config.model.model} has no joint objective "
                            "to rerank by")
        if self.config.joint_rerank and self.config.beam_size < 2:
            raise UserError("--joint_rerank reranks the beam's hypotheses: give a --beam_size of at least 2")
        if self.config.joint_rerank and self.config.length_penalty:
            raise UserError("--joint_rerank ranks by a joint objective that --length_penalty does not normalise: "
                            "give only one")
        self._search_fns = {}

    def reversed(self):
        """The translator of B->A, over the model's reversed view (``NMTModel.reversed``)."""
        return Translator(self.model.reversed())

    @functools.cached_property
    def _score_fn(self):
        """The compiled ``score_targets``; made at its first use: a reversed view has none."""
        return tf.function(self.model.score_targets, input_signature=[batch_spec()])

    def dev_perplexity(self, src, tgt, batch_size=None, after_batch=None):
        """Thesis eq. 2.19 over a dev set (for the RNNPB this includes recognising the sources),
        in batches of at most ``batch_size`` (default: --test_batch_size); ``after_batch()`` runs
        between batches (training's check for a stop)."""
        _, scored = self._evaluate(self._score_fn, src, tgt, after_batch, batch_size=batch_size,
                                   label="dev perplexity")
        return perplexity(*(np.concatenate(column) for column in zip(*scored)))

    def _evaluate(self, fn, src, tgt, after_batch=None, show_progress=True, batch_size=None, label="translating"):
        """Evaluation batches of ``src`` (and ``tgt``) and, for each, ``fn(batch)`` as numpy arrays.

        Batches run on every CPU core at once (``rnnpb_nmt.infer.parallel``), so a small set is cut into
        at least as many batches as there are cores. ``after_batch()`` runs between batches; the
        progress bar (``show_progress``) is called ``label``.
        """
        workers = parallel.workers()
        cap = parallel.batch_cap(len(src), batch_size or self.config.test_batch_size, workers)
        batches = evaluation_batches(src, tgt, cap)
        with progress.bar(label, len(batches), enabled=show_progress) as bar:

            def done(step):
                bar.update(step)
                if after_batch:
                    after_batch()

            results = parallel.map_batches(lambda b: [t.numpy() for t in fn(b)], batches, workers,
                                           cost=lambda b: int(tf.size(b["src"])), done=done)
        return batches, results

    def _search_fn(self, beam_size):
        """The compiled search of a batch of sources: each sentence's hypotheses as ``ids`` (B, k, T),
        ``scores`` (B, k), ``token_scores`` (B, k, T) and the ``rank`` (B, k), higher first, that
        chooses among them (greedy search: k = 1)."""
        if beam_size not in self._search_fns:
            ratio, model, alpha = self.config.max_trans_ratio, self.model, self.config.length_penalty

            def translate_batch(src):
                words = tf.reduce_sum(tf.cast(tf.not_equal(src, PAD_ID), tf.int32), axis=1) - 1
                max_lengths = tf.maximum(1, tf.cast(tf.math.ceil(ratio * tf.cast(words, tf.float32)), tf.int32))
                state, step = model.decoder_start(src), model.decoder_step
                if beam_size == 1:
                    ids, scores, token_scores = (h[:, None] for h in search.greedy_hypotheses(step, state, max_lengths))
                    return ids, scores, token_scores, scores  # one hypothesis: nothing to rank
                ids, scores, token_scores = search.beam_hypotheses(step, state, max_lengths, beam_size, alpha)
                # What a model reranks is the beam's own rank, which is the summed log-probabilities
                # when alpha = 0 (bit for bit); --joint_rerank replaces it, hence refuses alpha > 0 (__init__).
                rank = model.rerank(src, ids, search.normalized(ids, scores, alpha))
                return ids, scores, token_scores, rank

            self._search_fns[beam_size] = tf.function(
                translate_batch, input_signature=[tf.TensorSpec([None, None], tf.int32)])
        return self._search_fns[beam_size]

    def _beam_size(self, beam_size):
        """``beam_size``, or --beam_size when it is None, checked."""
        beam_size = beam_size or self.config.beam_size
        if beam_size < 1:
            raise UserError(f"--beam_size must be at least 1 (got {beam_size})")
        return beam_size

    def _search(self, src, beam_size, batch_size, show_progress):
        """Search encoded sentences in batches (``_evaluate``): per sentence, in input order, its
        (ids (k, T), scores (k,), token_scores (k, T), rank (k,)) of ``_search_fn``."""
        fn = self._search_fn(beam_size)
        batches, searched = self._evaluate(lambda b: fn(b["src"]), src, None, show_progress=show_progress,
                                           batch_size=batch_size)
        found = [None] * len(src)
        for batch, arrays in zip(batches, searched):
            for row, i in enumerate(batch["index"].numpy()):
                found[i] = [a[row] for a in arrays]
        return found

    def translate_ids(self, src, beam_size=None, batch_size=None, show_progress=False):
        """Translate encoded sentences (id arrays ending in ``<end>``) in batches of at most
        ``batch_size`` (default: --test_batch_size), with --beam_size unless ``beam_size``.

        Returns (list of output id arrays, each ending in ``<end>`` and padding, in input order;
        array of their summed log-probabilities): each sentence's hypothesis of the highest rank
        (--length_penalty, --joint_rerank), the first of equals.
        """
        found = self._search(src, self._beam_size(beam_size), batch_size, show_progress)
        best = [np.argmax(rank) for *_, rank in found]
        outputs = [ids[b] for (ids, *_), b in zip(found, best)]
        return outputs, np.array([scores[b] for (_, scores, *_), b in zip(found, best)], float)

    def translate(self, sentences, beam_size=None, batch_size=None, show_progress=False):
        """Tokenized sentences (token lists) -> tokenized translations (token lists)."""
        if not sentences:
            return []
        src_vocab, tgt_vocab = self.model.vocabularies
        ids, _ = self.translate_ids(encode_all(src_vocab, sentences), beam_size, batch_size, show_progress)
        return [tgt_vocab.decode(i) for i in ids]

    def translate_nbest(self, sentences, nbest, beam_size=None, batch_size=None, show_progress=False):
        """Tokenized sentences -> per sentence, in input order, its ``nbest`` best ``Hypothesis``
        (fewer where the beam found fewer), best first by the rank ``translate`` chooses by: the
        first is ``translate``'s translation."""
        beam_size = self._beam_size(beam_size)
        if not 1 <= nbest <= beam_size:
            raise UserError(f"--nbest={nbest}: must be from 1 to --beam_size={beam_size} (the hypotheses the "
                            "search keeps)")
        if not sentences:
            return []
        src_vocab, tgt_vocab = self.model.vocabularies
        found = self._search(encode_all(src_vocab, sentences), beam_size, batch_size, show_progress)
        return [_ranked(tgt_vocab, nbest, *hypotheses) for hypotheses in found]


def _ranked(vocab, nbest, ids, scores, token_scores, rank):
    """One sentence's ``nbest`` first ``Hypothesis``es, highest ``rank`` first (a stable order, so that
    equals keep the beam's order and the first is ``np.argmax``'s), without those the beam never filled
    (only those are decoded into words, not the whole beam)."""
    order = np.argsort(-rank, kind="stable")
    order = order[scores[order] > search.NEG / 2][:nbest]
    return [_hypothesis(vocab, ids[j], scores[j], token_scores[j]) for j in order]


def _hypothesis(vocab, ids, score, token_scores):
    """The ``Hypothesis`` of output ``ids`` (words, ``<end>``, padding): the token scores of the words
    ``vocab.decode`` keeps and of ``<end>`` (a ``<pad>`` the model chose mid-sentence, which it drops,
    still counts in the score)."""
    through_end = slice(0, list(ids).index(END_ID) + 1)  # every hypothesis ends in <end> (search.py)
    kept = ids[through_end] != PAD_ID
    return Hypothesis(vocab.decode(ids), float(score), [float(s) for s in token_scores[through_end][kept]])

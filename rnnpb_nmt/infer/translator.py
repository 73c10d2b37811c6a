"""The Translator: a trained model's dev perplexity and translations, batched over every core.

What a model computes is its own (``score_targets``, ``decoder_start``/``decoder_step``); how
sentences are batched, searched and put back in input order is the same for every model, and is
here, with the compiled functions that do it.
"""

import numpy as np
import tensorflow as tf

from rnnpb_nmt import progress
from rnnpb_nmt.data.dataset import batch_spec, encode_all, evaluation_batches
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import parallel, search
from rnnpb_nmt.metrics import perplexity
from rnnpb_nmt.models.base import NMTModel
from rnnpb_nmt.models.losses import token_mask
from rnnpb_nmt.train import interrupts


class Translator:
    """Evaluates and translates with ``model`` under its ``config.inference`` settings."""

    def __init__(self, model):
        self.model, self.config = model, model.config.inference
        if self.config.joint_rerank and type(model).rerank is NMTModel.rerank:
            raise UserError(f"--joint_rerank: --model={model.config.model.model} has no joint objective "
                            "to rerank by")
        if self.config.joint_rerank and self.config.beam_size < 2:
            raise UserError("--joint_rerank reranks the beam's hypotheses: give a --beam_size of at least 2")
        self._score_fn = tf.function(model.score_targets, input_signature=[batch_spec()])
        self._search_fns = {}

    def dev_perplexity(self, src, tgt, batch_size=None):
        """Thesis eq. 2.19 over a dev set (for the RNNPB this includes recognising the sources),
        in batches of at most ``batch_size`` (default: --test_batch_size)."""
        _, scored = self._evaluate(self._score_fn, src, tgt, interrupts.check, batch_size=batch_size)
        return perplexity(*(np.concatenate(column) for column in zip(*scored)))

    def _evaluate(self, fn, src, tgt, after_batch=None, show_progress=True, batch_size=None):
        """Evaluation batches of ``src`` (and ``tgt``) and, for each, ``fn(batch)`` as numpy arrays.

        Batches run on every CPU core at once (``rnnpb_nmt.infer.parallel``), so a small set is cut into
        at least as many batches as there are cores. ``after_batch()`` runs between batches.
        """
        workers = parallel.workers()
        cap = parallel.batch_cap(len(src), batch_size or self.config.test_batch_size, workers)
        batches = evaluation_batches(src, tgt, cap)
        bar = progress.bar(len(batches), enabled=show_progress)

        def done(step):
            bar.update(step)
            if after_batch:
                after_batch()

        results = parallel.map_batches(lambda b: [t.numpy() for t in fn(b)], batches, workers,
                                       cost=lambda b: int(tf.size(b["src"])), done=done)
        return batches, results

    def _search_fn(self, beam_size, reverse):
        key = (beam_size, reverse)
        if key not in self._search_fns:
            ratio, model = self.config.max_trans_ratio, self.model

            def translate_batch(src):
                words = tf.reduce_sum(tf.cast(token_mask(src), tf.int32), axis=1) - 1
                max_lengths = tf.maximum(1, tf.cast(tf.math.ceil(ratio * tf.cast(words, tf.float32)), tf.int32))
                state = model.decoder_start(src, reverse)
                step = lambda tokens, st: model.decoder_step(tokens, st, reverse)
                if beam_size == 1:
                    return search.greedy_search(step, state, max_lengths)
                nbest, scores = search.beam_search_nbest(step, state, max_lengths, beam_size)
                return search.best_of(nbest, scores, model.rerank(src, nbest, scores, reverse))

            self._search_fns[key] = tf.function(
                translate_batch, input_signature=[tf.TensorSpec([None, None], tf.int32)])
        return self._search_fns[key]

    def translate_ids(self, src, beam_size=None, reverse=False, batch_size=None, show_progress=False):
        """Translate encoded sentences (id arrays ending in ``<end>``) in batches of at most
        ``batch_size`` (default: --test_batch_size), with --beam_size unless ``beam_size``.

        Returns (list of output id arrays, each ending in ``<end>`` and padding, in input order;
        array of their summed log-probabilities).
        """
        beam_size = beam_size or self.config.beam_size
        if beam_size < 1:
            raise UserError(f"--beam_size must be at least 1 (got {beam_size})")
        if reverse and not self.model.reversible:
            raise UserError(f"--reverse_translation: model {self.model.config.model.model} translates one way only")
        fn = self._search_fn(beam_size, reverse)
        batches, searched = self._evaluate(lambda b: fn(b["src"]), src, None, show_progress=show_progress,
                                           batch_size=batch_size)
        outputs, scores = [None] * len(src), np.zeros([len(src)])
        for batch, (ids, score) in zip(batches, searched):
            for row, i in enumerate(batch["index"].numpy()):
                outputs[i], scores[i] = ids[row], score[row]
        return outputs, scores

    def translate(self, sentences, beam_size=None, reverse=False, batch_size=None, show_progress=False):
        """Tokenized sentences (token lists) -> tokenized translations (token lists)."""
        if not sentences:
            return []
        model = self.model
        src_vocab, tgt_vocab = (model.vocab2, model.vocab1) if reverse else (model.vocab1, model.vocab2)
        ids, _ = self.translate_ids(encode_all(src_vocab, sentences), beam_size, reverse, batch_size, show_progress)
        return [tgt_vocab.decode(i) for i in ids]

"""The NMT base class: training step, dev perplexity and translation shared by every model.

Thesis 4.4: models subclass one base class that holds the training, evaluation and translation
code, and implement only the model-specific functions:

- ``sentence_losses(batch, training, kind)``: per-sentence training losses and extra terms;
- ``score_targets(batch)``: summed cross-entropy of each target sentence given its source (dev
  perplexity);
- ``decoder_start(src, reverse)`` / ``decoder_step(tokens, state, reverse)``: a one-step decoder
  for search;
- optionally ``variable_groups()`` (several optimisers), ``epoch_batches()`` (batch mixing),
  ``on_epoch_end()`` (end-of-epoch updates), ``summary_scalars()`` (model state for TensorBoard)
  and ``analyze()`` (model-specific figures for ``--analyze``).

Every compiled function takes batches of any length (``nmtcore.data.batch_spec``), and the training
step works unchanged on one device or under a ``tf.distribute`` strategy.
"""

import types
import zlib

import numpy as np
import tensorflow as tf

from nmtcore import addons, interrupts, parallel, progress, search
from nmtcore.data import batch_spec, encode_all, evaluation_batches, make_dataset
from nmtcore.errors import UserError
from nmtcore.metrics import perplexity
from nmtcore.vocabulary import PAD_ID, START_ID


def decoder_inputs(seq):
    """Teacher-forcing inputs for targets ``seq`` (words + ``<end>``): ``<start>`` shifted in."""
    return tf.concat([tf.fill([tf.shape(seq)[0], 1], START_ID), seq[:, :-1]], axis=1)


def token_mask(seq):
    return tf.not_equal(seq, PAD_ID)


def summed_cross_entropy(logits, targets):
    """Per-sentence cross-entropy summed over the real (non-padding) positions, and their count."""
    mask = tf.cast(token_mask(targets), tf.float32)
    ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)
    return tf.reduce_sum(ce * mask, axis=1), tf.reduce_sum(mask, axis=1)


class NMTModel(tf.Module):
    """Base class of all translation models. ``params`` is the dict saved as hparams.json."""

    reversible = False  # whether decoder_start/decoder_step also translate B->A

    def __init__(self, params, vocab1, vocab2):
        super().__init__(name=type(self).__name__)
        self.params, self.vocab1, self.vocab2 = params, vocab1, vocab2
        # A plain namespace, so that checkpoints of the model hold its variables only: optimiser
        # slots and compiled functions are run-time state, saved (or not) by the trainer.
        self._cache = types.SimpleNamespace(
            strategy=tf.distribute.get_strategy(), optimizers=None, train_steps={}, batch_specs={}, search_fns={},
            score_fn=tf.function(self.score_targets, input_signature=[batch_spec()]),
            rng=tf.random.Generator.from_seed(params["seed"]))

    # ----- what a model implements --------------------------------------------------------------
    def sentence_losses(self, batch, training, kind):
        """Returns (per-sentence loss (B,), extra loss summed over the batch, dict of named
        per-sentence terms (B,) for logging, among them ``perplexity``: exp(CE / tokens) of the
        target sentence, averaged into the epoch's training perplexity)."""
        raise NotImplementedError

    def score_targets(self, batch):
        """Returns (summed cross-entropy (B,), predicted tokens (B,)) of ``tgt`` given ``src``."""
        raise NotImplementedError

    def decoder_start(self, src, reverse):
        """The search state for source batch ``src`` (translating B->A when ``reverse``)."""
        raise NotImplementedError

    def decoder_step(self, tokens, state, reverse):
        """One decoder step: previous words (N,) -> (logits (N, V), new state)."""
        raise NotImplementedError

    def variable_groups(self):
        """[(name, variables, learning rate)], each group with its own optimiser and clipping."""
        return [("weights", self.trainable_variables, self.params["learning_rate"])]

    def epoch_batches(self, corpus, epoch, rng):
        """(kind, batch) pairs of training epoch ``epoch``; the default: shuffled parallel batches.

        ``rng`` is the epoch's own random generator (seeded by --seed and the epoch), so that an
        epoch's batches are the same whether or not training was interrupted before it.
        """
        for batch in self.dataset("parallel", corpus.train_src, corpus.train_tgt, epoch):
            yield "parallel", batch

    def on_epoch_end(self, epoch, rng):
        """Hook for end-of-epoch updates of the model's state (e.g. PB resets)."""

    def summary_scalars(self):
        """{name: number} describing the model's state after an epoch, logged to TensorBoard."""
        return {f"learning_rate/{name}": lr for name, _, lr in self.variable_groups()}

    def analyze(self, train_pairs, test_pairs, out_dir):
        """Model-specific figures for ``--analyze``: writes PNGs into ``out_dir`` and returns
        {"figures": {title: file name}, "summary": {name: value}}. ``train_pairs`` are the
        first training pairs (source, target token lists), ``test_pairs`` the first test pairs."""
        return {"figures": {}, "summary": {}}

    # ----- shared machinery -----------------------------------------------------------------------
    @property
    def strategy(self):
        """The tf.distribute strategy the model was built under (the default one if none)."""
        return self._cache.strategy

    def training_rng(self, training):
        """The generator of dropout masks and PB noise when ``training``, else None (no noise)."""
        return self._cache.rng if training else None

    def start_epoch(self, epoch):
        """Restart the training noise from (--seed, epoch).

        An epoch then draws the same dropout masks and PB noise whether or not training was
        interrupted before it, so a resumed run is the uninterrupted one; under a tf.distribute
        strategy each replica draws its own stream from this state.
        """
        key = np.random.SeedSequence([self.params["seed"], epoch]).generate_state(1, np.uint64)[0]
        self._cache.rng.reset_from_key_counter(int(key), [0, 0])

    def dataset(self, kind, src, tgt=None, epoch=0, cycle=0):
        """One pass over training data of batch kind ``kind``, distributed over the replicas.

        The order is a permutation fixed by --seed, ``epoch``, ``cycle`` (the pass within the
        epoch, for data that is cycled) and ``kind``.
        """
        seed = [self.params["seed"], epoch, cycle, zlib.crc32(kind.encode())]
        order = np.random.default_rng(seed).permutation(len(src)).astype(np.int32)
        ds = self.strategy.experimental_distribute_dataset(
            make_dataset(src, tgt, batch_size=self.params["batch_size"], order=order, bucket=True))
        self._cache.batch_specs.setdefault(kind, ds.element_spec)
        return ds

    @property
    def optimizers(self):
        if self._cache.optimizers is None:
            with self.strategy.scope():
                self._cache.optimizers = [addons.lazy_adam(lr, vs) for _, vs, lr in self.variable_groups()]
        return self._cache.optimizers

    def _replica_step(self, batch, kind):
        ctx = tf.distribute.get_replica_context()
        # Losses are sums over sentences divided by the global batch, so that replicas' gradients
        # add up to the single-device gradient.
        global_batch = ctx.all_reduce("sum", tf.cast(tf.shape(batch["index"])[0], tf.float32))
        groups = self.variable_groups()
        variables = [v for _, vs, _ in groups for v in vs]
        with tf.GradientTape() as tape:
            per_sentence, extra, terms = self.sentence_losses(batch, training=True, kind=kind)
            loss = tf.reduce_sum(per_sentence) / global_batch + extra
        grads = tape.gradient(loss, variables)
        start, norms = 0, {}
        for (name, vs, _), optimizer in zip(groups, self.optimizers):
            # A kind of batch may leave variables untouched (a monolingual batch, B's weights).
            pairs = [(g, v) for g, v in zip(grads[start:start + len(vs)], vs) if g is not None]
            start += len(vs)
            if not pairs:
                continue
            summed = ctx.all_reduce("sum", [g for g, _ in pairs])
            clipped, norm = tf.clip_by_global_norm(summed, self.params["gradient_clip"])
            optimizer.apply_gradients(zip(clipped, [v for _, v in pairs]), experimental_aggregate_gradients=False)
            norms[f"grad_norm_{name}"] = norm
        terms = {k: ctx.all_reduce("sum", tf.reduce_sum(v)) / global_batch for k, v in terms.items()}
        return dict(terms, **norms, loss=ctx.all_reduce("sum", loss))

    def train_step(self, batch, kind="parallel"):
        """One optimisation step on a batch of ``self.dataset(kind, ...)``.

        Returns scalars: the batch means of the model's loss terms, ``loss`` and the gradient norm
        (before clipping) of each variable group that the batch touched, ``grad_norm_<group>``.
        """
        steps = self._cache.train_steps
        if kind not in steps:
            def step(b):
                out = self.strategy.run(self._replica_step, args=(b, kind))
                return self.strategy.experimental_local_results(out)[0]
            self.optimizers  # noqa: B018 (creates the optimisers' slots before tracing)
            # One trace for every batch shape: the signature of the dataset of this kind.
            steps[kind] = tf.function(step, input_signature=[self._cache.batch_specs[kind]])
        return steps[kind](batch)

    def dev_perplexity(self, src, tgt, batch_size):
        """Thesis eq. 2.19 over a dev set (for the RNNPB this includes recognising the sources)."""
        _, scored = self._evaluate(self._cache.score_fn, src, tgt, batch_size, interrupts.check)
        return perplexity(*(np.concatenate(column) for column in zip(*scored)))

    def _evaluate(self, fn, src, tgt, batch_size, after_batch=None, show_progress=True):
        """Evaluation batches of ``src`` (and ``tgt``) and, for each, ``fn(batch)`` as numpy arrays.

        Batches run on every CPU core at once (``nmtcore.parallel``), so a small set is cut into
        at least as many batches as there are cores. ``after_batch()`` runs between batches.
        """
        workers = parallel.workers()
        batches = evaluation_batches(src, tgt, parallel.batch_cap(len(src), batch_size, workers))
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
        if key not in self._cache.search_fns:
            ratio = self.params["max_trans_ratio"]

            def translate_batch(src):
                words = tf.reduce_sum(tf.cast(token_mask(src), tf.int32), axis=1) - 1
                max_lengths = tf.maximum(1, tf.cast(tf.math.ceil(ratio * tf.cast(words, tf.float32)), tf.int32))
                state = self.decoder_start(src, reverse)
                step = lambda tokens, st: self.decoder_step(tokens, st, reverse)
                if beam_size == 1:
                    return search.greedy_search(step, state, max_lengths)
                return search.beam_search(step, state, max_lengths, beam_size)

            self._cache.search_fns[key] = tf.function(
                translate_batch, input_signature=[tf.TensorSpec([None, None], tf.int32)])
        return self._cache.search_fns[key]

    def translate_ids(self, src, beam_size, reverse=False, batch_size=64, show_progress=False):
        """Translate encoded sentences (id arrays ending in ``<end>``) in batches.

        Returns (list of output id arrays, each ending in ``<end>`` and padding, in input order;
        array of their summed log-probabilities).
        """
        if beam_size < 1:
            raise UserError(f"--beam_size must be at least 1 (got {beam_size})")
        if reverse and not self.reversible:
            raise UserError(f"--reverse_translation: model {self.params['model']} translates one way only")
        fn = self._search_fn(beam_size, reverse)
        batches, searched = self._evaluate(lambda b: fn(b["src"]), src, None, batch_size, show_progress=show_progress)
        outputs, scores = [None] * len(src), np.zeros([len(src)])
        for batch, (ids, score) in zip(batches, searched):
            for row, i in enumerate(batch["index"].numpy()):
                outputs[i], scores[i] = ids[row], score[row]
        return outputs, scores

    def translate(self, sentences, beam_size, reverse=False, batch_size=64, show_progress=False):
        """Tokenized sentences (token lists) -> tokenized translations (token lists)."""
        if not sentences:
            return []
        src_vocab, tgt_vocab = (self.vocab2, self.vocab1) if reverse else (self.vocab1, self.vocab2)
        ids, _ = self.translate_ids(encode_all(src_vocab, sentences), beam_size, reverse, batch_size, show_progress)
        return [tgt_vocab.decode(i) for i in ids]


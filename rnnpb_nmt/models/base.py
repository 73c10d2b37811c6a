"""The model interface: what every sequence-to-sequence model of the toolkit implements.

A model is its variables and the functions of them that differ between models; everything
around it is shared and lives elsewhere: the optimisers, training step, data order and
training noise (``rnnpb_nmt.train.step``), search, dev perplexity and evaluation batches
(``rnnpb_nmt.infer.translator``), data reading and scoring (``rnnpb_nmt.tasks``). A model implements:

- ``sentence_losses(batch, kind, rng)``: per-sentence training losses and extra terms;
- ``score_targets(batch)``: summed cross-entropy of each target sentence given its source (dev
  perplexity); a model trained by teacher-forced cross-entropy inherits both from
  ``rnnpb_nmt.models.teacher_forced.TeacherForcedModel`` and implements only the logits;
- ``decoder_start(src)`` / ``decoder_step(tokens, state)``: a one-step decoder for search, A->B;
- optionally ``rerank(src, nbest, scores)`` (an order of beam search's n-best list
  other than its scores; then ``reranks = True``), ``reversed()`` (the model translating B->A:
  a view of its weights with the search's interface; then ``reversible = True``; the bound RNNPB's),
  ``variable_groups()`` (several optimisers),
  ``monolingual_kinds`` (the monolingual batches it trains on), ``on_epoch_end()`` (end-of-epoch
  updates), ``summary_scalars()`` (model state for TensorBoard) and ``analyze()`` (model-specific
  figures for ``--analyze``).

Every function takes batches of any length (``rnnpb_nmt.data.dataset.batch_spec``) and works unchanged on
one device or on the replicas of a ``tf.distribute`` strategy.
"""

import functools

import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt import precision


class NMTModel(tf.Module):
    """Base class of all translation models; ``config`` is an ``rnnpb_nmt.config.Config``."""

    reversible = False  # whether reversed() gives the model translating B->A
    direction = "A->B"  # what decoder_start/decoder_step translate (a reversed view: "B->A")
    reranks = False  # whether rerank() orders the n-best by more than its scores (--joint_rerank is refused without)
    monolingual_kinds = ()  # the kinds of monolingual batch ("mono1", "mono2") it trains on

    def __init__(self, config, vocab1, vocab2):
        super().__init__(name=type(self).__name__)
        self.config, self.vocab1, self.vocab2 = config, vocab1, vocab2

    def __init_subclass__(cls, **kwargs):
        # A model's layers compute in the dtype of its --mixed_precision whoever builds it (training,
        # a test, a benchmark): each constructor runs under that Keras policy, which Keras layers
        # read when they are made.
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):
            cls.__init__ = _under_policy(cls.__init__)

    def sentence_losses(self, batch, kind, rng=None):
        """Returns (per-sentence loss (B,), extra loss summed over the batch, dict of named
        per-sentence terms (B,) for logging, among them ``perplexity``: exp(CE / tokens) of the
        target sentence, averaged into the epoch's training perplexity).

        ``kind`` is the batch's kind ("parallel", or one of ``monolingual_kinds``); ``rng`` is
        the ``tf.random.Generator`` of dropout masks and noise in training, None otherwise.
        """
        raise NotImplementedError

    def score_targets(self, batch):
        """Returns (summed cross-entropy (B,), predicted tokens (B,)) of ``tgt`` given ``src``."""
        raise NotImplementedError

    def decoder_start(self, src):
        """The search state for source batch ``src``."""
        raise NotImplementedError

    def decoder_step(self, tokens, state):
        """One decoder step: previous words (N,) -> (logits (N, V), new state)."""
        raise NotImplementedError

    def rerank(self, src, nbest, scores):
        """The rank (B, k), higher first, by which to choose among beam search's hypotheses
        ``nbest`` (B, k, T) of sources ``src``, given their summed log-probabilities ``scores``
        (B, k); by default those scores."""
        return scores

    def reversed(self):
        """The model translating B->A, for search (``rnnpb_nmt.infer.translator.Translator`` of it): the
        same weights, with ``decoder_start``, ``decoder_step``, ``rerank`` and the sides below swapped."""
        raise UserError(f"--reverse_translation: model {self.config.model.model} translates one way only")

    # The sides of the direction the search translates (a reversed view's are swapped).
    @property
    def languages(self):
        """(source language, target language)."""
        return self.config.data.lang1, self.config.data.lang2

    @property
    def vocabularies(self):
        """(source vocabulary, target vocabulary)."""
        return self.vocab1, self.vocab2

    @property
    def longest_source(self):
        """The length of the longest source sentence in training (0: a run from before it was recorded)."""
        return self.config.data.longest1

    def variable_groups(self):
        """[(name, variables, learning rate)], each group with its own optimiser and clipping."""
        return [("weights", self.trainable_variables, self.config.training.learning_rate)]

    def on_epoch_end(self, epoch, rng):
        """Hook for end-of-epoch updates of the model's state (e.g. PB resets); ``rng`` is the
        epoch's numpy generator."""

    def summary_scalars(self):
        """{name: number} describing the model's state after an epoch, logged to TensorBoard (the
        learning rates are the Trainer's: ``Trainer.learning_rate_scalars``)."""
        return {}

    def analyze(self, train_pairs, test_pairs, out_dir):
        """Model-specific figures for ``--analyze``: writes PNGs into ``out_dir`` and returns
        {"figures": {title: file name}, "summary": {name: value}}. ``train_pairs`` are the
        first training pairs (source, target token lists), ``test_pairs`` the first test pairs."""
        return {"figures": {}, "summary": {}}


def _under_policy(init):
    """A model constructor ``init(self, config, ...)`` run under the Keras dtype policy of the
    config's --mixed_precision (``rnnpb_nmt.precision.policy``)."""
    @functools.wraps(init)
    def built(self, config, *args, **kwargs):
        with precision.policy(config.training.mixed_precision):
            init(self, config, *args, **kwargs)
    return built

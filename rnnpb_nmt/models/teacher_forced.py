"""The models trained by cross-entropy under teacher forcing: seq2seq, memory LSTMs, hard attention.

Teacher forcing lives here, not in each model, because it is what makes their loss and their
dev score the same function of one set of logits: the decoder reads the gold previous word
(``<start>`` then the target shifted right, ``rnnpb_nmt.models.losses.decoder_inputs``) at every
position, so one pass gives the logits of every target word, and the summed cross-entropy of
those logits is both the training loss and the dev perplexity's numerator. What differs between
the models is only how they turn a source and those previous words into logits: the one hook.
(The bound RNNPB model trains on more than this pair of losses and has its own.)
"""

import tensorflow as tf

from rnnpb_nmt.models.base import NMTModel
from rnnpb_nmt.models.losses import decoder_inputs, summed_cross_entropy


class TeacherForcedModel(NMTModel):
    """A model whose ``sentence_losses`` and ``score_targets`` are the target's cross-entropy
    given the source; subclasses implement ``teacher_forced_logits``."""

    def teacher_forced_logits(self, src, previous, rng=None):
        """The hook: logits (B, T, V) of each target position given the source batch ``src``
        (B, S) and the gold previous words ``previous`` (B, T) (``<start>``, then the target
        shifted right; the logits past each target's end are masked out of the loss). ``rng`` is
        the generator of training's dropout masks and noise, None outside training."""
        raise NotImplementedError

    def _target_logits(self, src, tgt, rng=None):
        """The logits (B, T, V) the targets ``tgt`` are scored against: teacher-forced (a model
        that trains some batches otherwise, seq2seq with ``--teacher_forcing`` below 1, adds
        that in ``_scored_targets``)."""
        return self.teacher_forced_logits(src, decoder_inputs(tgt), rng)

    def _scored_targets(self, src, tgt, rng=None):
        """The logits and the targets training scores them against: ``_target_logits`` and ``tgt``
        (seq2seq's free-running batches may score fewer of the target's words)."""
        return self._target_logits(src, tgt, rng), tgt

    def sentence_losses(self, batch, kind, rng=None):
        # ``kind`` is always "parallel": these models train on no monolingual batches.
        ce, tokens = summed_cross_entropy(*self._scored_targets(batch["src"], batch["tgt"], rng),
                                          self.config.training.label_smoothing)
        return ce, 0.0, {"cross_entropy": ce, "perplexity": tf.exp(ce / tokens)}

    def score_targets(self, batch):
        return summed_cross_entropy(self._target_logits(batch["src"], batch["tgt"]), batch["tgt"])

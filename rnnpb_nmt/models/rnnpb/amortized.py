"""Semi-amortised recognition: a proposed PB, refined by a few differentiable gradient steps.

The thesis's model is trained with a free PB per training sentence, fitted to both sentences of
a pair at once, but translates with a PB recognised from the source alone: training never takes
the path that test time takes, and recognised PBs land where B was never trained (run_scripts/results/exp3_en_de.md,
Exp III). Here training takes that path. A proposal p0 of the source sentence's PB, from an LSTM
encoder (Kim et al. 2018, "Semi-Amortized Variational Autoencoders") or one learned vector for
every sentence (Zintgraf et al. 2019, CAVIA), is refined by K gradient steps on the source's own
loss in A,

    p_{k+1} = p_k - exp(log_step) * clip(grad_p [L_A(a | p_k) + prior * ||p_k||^2 / 2]),

with per-dimension step sizes that are learned, and B is trained on the refined PB. The steps are
unrolled in the graph, so training differentiates through them (``stop_gradient=True`` treats
each step's gradient as a constant, the cheap first-order variant). Test time runs the same
steps from the same proposal: recognition is what the model was trained with.
"""

import math

import tensorflow as tf

from rnnpb_nmt.layers.recurrent import StackedRNN
from rnnpb_nmt.models.losses import reverse_words, token_mask


class PBProposal(tf.keras.layers.Layer):
    """The PB a sentence's refinement starts from: an LSTM encoder's, or one learned vector.

    The encoder's PB is a learned linear map of its top layer's final output (``output="dense"``),
    or its final state itself, every layer's (h, c) (``output="state"``, ``--proposal_output``):
    on the demo corpus the map lost most of what the encoder read (dev perplexity 6.32 against
    3.58, run_scripts/results/notes/bound_translation.md, 2026-11-27)."""

    def __init__(self, kind, vocab_size, embedding_size, units, num_pb, layers=1, output="dense", reverse=False,
                 dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.kind, self.num_pb, self.reverse = kind, num_pb, reverse
        if kind == "encoder":
            self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_size, name="embedding")
            self.lstm = StackedRNN(units, layers, dropout=dropout, name="lstm")
            self.embedding.build([None])
            self.lstm.build([None, None, embedding_size])
            self.output_layer = None
            if output == "dense":
                self.output_layer = tf.keras.layers.Dense(num_pb, name="output")
                self.output_layer.build([None, units])
        else:  # one vector for all sentences: the steps alone tell sentences apart
            self.start = self.add_weight("start", [num_pb], initializer="zeros")

    def call(self, seq, rng=None):
        """Proposed PBs (B, num_PB) of sentences ``seq`` (B, T); in training (``rng``) with dropout."""
        if self.kind != "encoder":
            return tf.tile(self.start[None], [tf.shape(seq)[0], 1])
        if self.reverse:
            seq = reverse_words(seq)
        _, states = self.lstm(self.embedding(seq), mask=token_mask(seq), rng=rng)
        if self.output_layer is None:
            return self.lstm.state_vector(states)
        return self.output_layer(states[-1][0])


class Refinement(tf.keras.layers.Layer):
    """K gradient steps on a language model's loss of the sentence, with learned step sizes."""

    def __init__(self, num_pb, step_size, **kwargs):
        super().__init__(**kwargs)
        self.log_step = self.add_weight("log_step", [num_pb],
                                        initializer=tf.keras.initializers.Constant(math.log(step_size)))

    def refine(self, language_model, seq, pb, steps, prior=0.0, clip=1.0, stop_gradient=False):
        """PBs (B, num_PB) after ``steps`` refinement steps from ``pb`` on sentences ``seq``.

        Each sentence's gradient is its own (the loss is a sum over sentences) and clipped to
        norm ``clip``, as in Adam recognition, so a long sentence does not take a longer step.
        """
        return self.refine_on(lambda p: language_model.sentence_losses(seq, p)[0], pb, steps, prior, clip,
                              stop_gradient)

    def refine_on(self, sentence_loss, pb, steps, prior=0.0, clip=1.0, stop_gradient=False):
        """``refine`` on any per-sentence objective ``sentence_loss(pb)`` (B,), e.g. the joint
        objective of ``rnnpb_nmt.models.rnnpb.joint``."""
        def step(pb):
            with tf.GradientTape() as tape:
                tape.watch(pb)
                ce = sentence_loss(pb)
                loss = tf.reduce_sum(ce) + prior * 0.5 * tf.reduce_sum(tf.square(pb))
            grad = tape.gradient(loss, pb)
            grad = grad * tf.minimum(1.0, clip / tf.maximum(tf.norm(grad, axis=1, keepdims=True), 1e-12))
            if stop_gradient:
                grad = tf.stop_gradient(grad)
            return pb - tf.exp(self.log_step) * grad

        # Unrolled (K is small, and training differentiates through it), as K calls of one traced
        # step: the step's graph and the gradient of its gradient are built once, not K times.
        if steps > 1 and not tf.executing_eagerly():
            step = tf.function(step)
        for _ in range(steps):
            pb = step(pb)
        return pb

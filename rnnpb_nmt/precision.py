"""--mixed_precision: the Keras dtype policy a model is built under, and float16's loss scaling.

Under ``mixed_float16`` or ``mixed_bfloat16`` a Keras layer keeps its variables in float32 and
computes in half precision; the models cast their logits to float32, so losses, softmax and search
scores stay float32. float16's range ends at 65504 and its smallest normal number is 6e-5: small
gradients would round to 0, so the loss is multiplied by a scale before the backward pass and the
gradients divided by it after (Micikevicius et al. 2018). bfloat16 has float32's range and needs
none. The scaling is the Trainer's own, not Keras's LossScaleOptimizer, so that it works the same
with every optimiser (LazyAdam of either stack, the legacy SGD and RMSProp), several optimisers per
model, and leaves the checkpoints' keys those of a float32 run.
"""

import contextlib

import tensorflow as tf

POLICIES = {"none": "float32", "float16": "mixed_float16", "bfloat16": "mixed_bfloat16"}


@contextlib.contextmanager
def policy(name):
    """Inside, new Keras layers compute as --mixed_precision=``name`` says; the global policy
    before is restored on leaving, so that a model built later (a tested one) is float32."""
    before = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy(POLICIES[name])
    try:
        yield
    finally:
        tf.keras.mixed_precision.set_global_policy(before)


def loss_scale(name):
    """The loss scaling of --mixed_precision=``name``: dynamic for float16, none otherwise."""
    return DynamicLossScale() if name == "float16" else NoLossScale()


class NoLossScale:
    """float32 and bfloat16: the loss and gradients as they are, every update applied."""

    def scaled(self, loss):
        return loss

    def unscaled(self, grads):
        return grads

    def apply(self, update, norms):
        """Run ``update`` (a function applying the step's gradients, whose global ``norms`` are
        those of each variable group's): a step whose gradients are not finite is reported as a
        divergence (``Trainer.train_epoch``), not skipped."""
        del norms
        update()

    def reported(self, outputs):
        return outputs


class DynamicLossScale(NoLossScale):
    """Keras's dynamic loss scale (its defaults): from 2^15, halved at each step whose gradients are
    not finite, which then updates nothing; doubled after 2000 finite steps in a row.

    Its state is not checkpointed (a run resumes with or without --mixed_precision): a resumed run
    starts again from 2^15, and loses at most the few steps until the scale fits again."""

    INITIAL, GROWTH_STEPS = 2.0 ** 15, 2000

    def __init__(self):
        # Every replica computes the same update from the all-reduced gradients: the first one's counts.
        once = dict(trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        self.scale = tf.Variable(self.INITIAL, name="loss_scale", **once)
        self.finite_steps = tf.Variable(0, dtype=tf.int64, name="finite_steps", **once)

    def scaled(self, loss):
        return loss * self.scale

    def unscaled(self, grads):
        inverse = 1.0 / self.scale
        return [None if g is None else
                tf.IndexedSlices(g.values * inverse, g.indices, g.dense_shape) if isinstance(g, tf.IndexedSlices)
                else g * inverse for g in grads]

    def apply(self, update, norms):
        """Run ``update`` and count a finite step if every gradient is (the global ``norms`` are
        finite); else skip it and halve the scale."""
        def applied():
            update()
            grown = self.finite_steps + 1 >= self.GROWTH_STEPS
            self.scale.assign(tf.where(grown, self.scale * 2.0, self.scale))
            self.finite_steps.assign(tf.where(grown, tf.constant(0, tf.int64), self.finite_steps + 1))

        def skipped():
            self.scale.assign(self.scale / 2.0)
            self.finite_steps.assign(0)

        tf.cond(tf.reduce_all([tf.math.is_finite(norm) for norm in norms]), applied, skipped)

    def reported(self, outputs):
        """A step's outputs (``Trainer.train_step``'s) without the gradient norms of a step that
        was skipped: they are not finite, and the training went on (it has not diverged)."""
        norms = [v for k, v in outputs.items() if k.startswith("grad_norm_")]
        if all(tf.math.is_finite(v) for v in norms):
            return outputs
        return {k: v for k, v in outputs.items() if not k.startswith("grad_norm_")}

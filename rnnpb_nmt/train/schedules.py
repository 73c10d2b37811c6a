"""Learning-rate schedules over training steps (--lr_schedule), for every optimiser of a run.

A constant rate stays a plain number in its optimiser (as every run before schedules existed, so
their checkpoints keep their keys). A scheduled one is a ``LearningRateSchedule`` that the
optimiser evaluates at its own step counter, which its checkpoint keeps: a resumed run continues
the schedule where the interrupted one was. The peak is a variable, so that --learning_rate_decay
can scale it between epochs without tracing the training step again.
"""

import tensorflow as tf


class WarmupRsqrt(tf.keras.optimizers.schedules.LearningRateSchedule):
    """``peak * min(s / warmup, sqrt(warmup / s))`` at the s-th step (s from 1): linear warm-up to
    the peak at step ``warmup``, then 1/sqrt(s) decay (Vaswani et al. 2017's shape, with its peak
    given directly as fairseq's inverse_sqrt does)."""

    def __init__(self, peak, warmup_steps):
        self.peak = tf.Variable(float(peak), trainable=False, dtype=tf.float32, name="peak_learning_rate")
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        # ``step``: the optimiser's count of steps already taken, so this step is step + 1.
        s = tf.cast(step, tf.float32) + 1.0
        warmup = float(self.warmup_steps)
        return self.peak * tf.minimum(s / warmup, tf.sqrt(warmup / s))

    def get_config(self):
        return {"peak": float(self.peak.numpy()), "warmup_steps": self.warmup_steps}


def learning_rate(rate, training):
    """What an optimiser of base rate ``rate`` is given under ``training`` (a TrainingConfig)."""
    return rate if training.lr_schedule == "constant" else WarmupRsqrt(rate, training.warmup_steps)


def set_rate(optimizer, rate):
    """Train ``optimizer`` at base rate ``rate`` from now on (its schedule's peak, if scheduled)."""
    scheduled = optimizer.learning_rate
    if isinstance(scheduled, WarmupRsqrt):
        scheduled.peak.assign(rate)
    else:
        optimizer.learning_rate = rate  # assigns the optimiser's variable: no new trace


def factor(optimizer):
    """What the schedule multiplies ``optimizer``'s base rate by at its next step (1: constant)."""
    scheduled = optimizer.learning_rate
    if not isinstance(scheduled, WarmupRsqrt):
        return 1.0
    return float(scheduled(optimizer.iterations).numpy() / scheduled.peak.numpy())

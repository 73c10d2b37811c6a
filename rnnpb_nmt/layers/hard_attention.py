"""Hard monotonic attention: a pointer on exactly one encoder state, moved only by ``step`` actions.

The decoder's previous action decides where it attends: each ``step`` moves the pointer one
position on, nothing moves it back. In training the pointer positions of a whole target follow
from its actions at once (``teacher_forced_positions``); in search each step advances it
(``advance``). A step from the last position would move past the input, so it is made
impossible there (``forbid_step_past_end``), in training and search alike.
"""

import tensorflow as tf

from rnnpb_nmt.scores import NEG  # "impossible", finite so that no NaN arises


def teacher_forced_positions(previous, step_id, lengths):
    """Pointer positions (B, S) for decoder inputs ``previous`` (B, S): the number of steps among
    the earlier actions, at most ``lengths`` (B,) (a step past the end, which no oracle makes,
    stays on the last position)."""
    steps = tf.cumsum(tf.cast(tf.equal(previous, step_id), tf.int32), axis=1)
    return tf.minimum(steps, lengths[:, None])


def advance(positions, previous, step_id):
    """The positions (N,) after the actions ``previous`` (N,): one on where it was a step."""
    return positions + tf.cast(tf.equal(previous, step_id), tf.int32)


def attend(encoded, positions):
    """The encoder state (B, [S,] D) each pointer is on: encoded (B, T, D), positions (B, [S])."""
    return tf.gather(encoded, positions, batch_dims=1)


def forbid_step_past_end(logits, positions, lengths, step_id):
    """``logits`` (..., V) with the step action impossible where the pointer is at ``lengths``
    (positions and lengths broadcast to logits' leading shape)."""
    at_end = tf.greater_equal(positions, lengths)[..., None]
    is_step = tf.one_hot(step_id, tf.shape(logits)[-1], on_value=True, off_value=False)
    return tf.where(at_end & is_step, NEG, logits)

"""Recognition (SPEC section 3): find the PB vector under which a sentence is most probable.

The network is frozen; each sentence starts from a zero PB that Adam moves down the gradient of
the sentence's summed cross-entropy. A whole batch is recognised at once, but every quantity that
decides a sentence's path is its own: its loss, its gradient (the batch loss is a sum, so row i
of the gradient is sentence i's), its clipping norm, its Adam moments and its stopping test. A
sentence that stops keeps its PB while the others go on, so the PB it ends with does not depend
on which sentences share its batch.

Stopping schemes (thesis table 5.9):
  early      stop after ``patience`` iterations whose loss is not below the best by ``epsilon``
  fixed      always ``max_iterations``
  grad_norm  stop once the gradient's L2 norm falls below ``grad_threshold``
All stop at ``max_iterations`` at the latest. One iteration = one Adam update.
"""

import dataclasses

import tensorflow as tf

from rnnpb_nmt.data.vocabulary import PAD_ID

STOPPING = ("early", "fixed", "grad_norm")


@dataclasses.dataclass(frozen=True)
class RecognitionSettings:
    """How recognition runs; a model's come from its --pb_learning_rate and --recog_* flags."""

    learning_rate: float
    max_iterations: int
    stop: str
    patience: int
    epsilon: float
    grad_threshold: float
    clip: float
    prior: float = 0.0  # MAP recognition: adds prior * ||p||^2 / 2 to each sentence's loss

    @classmethod
    def from_config(cls, config):
        """A run's settings; --recog_clip None (the default, and working directories from before
        it existed) clips at --gradient_clip."""
        t, i = config.training, config.inference
        return cls(t.pb_learning_rate, i.max_recog_epochs, i.recog_stop, i.recog_patience, i.recog_epsilon,
                   i.recog_grad_threshold, i.recog_clip or t.gradient_clip, t.pb_prior)


def recognize(language_model, seq, settings, record=False):
    """Recognise PBs for sentences ``seq`` (B, T) in ``language_model``.

    Returns a dict: ``pb`` (B, num_PB), ``iterations`` (B,) updates each sentence made, ``loss``
    (B,) its final summed cross-entropy, and with ``record``, per iteration, the state before its
    update: ``history`` (iterations, B) the loss (a stopped sentence repeats its last value),
    ``pb_history`` (iterations, B, num_PB) the PBs and ``grad_norm_history`` (iterations, B) the
    gradient norms before clipping (0 for a stopped sentence).
    """
    pb = tf.zeros([tf.shape(seq)[0], language_model.num_pb])
    result = minimize(sentence_loss(language_model, seq), pb, settings, record)
    result["loss"], _ = language_model.sentence_losses(seq, result["pb"])
    return result


def sentence_loss(language_model, seq):
    """``loss(rows, pb)``: the summed cross-entropy (len(rows),) of sentences ``seq[rows]`` given
    their PBs ``pb``, computed on those sentences cut to their longest length."""
    def loss(rows, pb):
        sub = tf.gather(seq, rows)
        sub = sub[:, :tf.reduce_max(tf.reduce_sum(tf.cast(tf.not_equal(sub, PAD_ID), tf.int32), axis=1))]
        return language_model.sentence_losses(sub, pb)[0]
    return loss


def minimize(loss, pb, settings, record=False):
    """Recognition's Adam on any per-sentence objective: ``loss(rows, pb)`` is the loss of the
    batch's sentences ``rows`` (their indices) under their PBs ``pb`` (len(rows), num_PB), and
    ``pb`` (B, num_PB) the start. ``recognize`` is this on one language model's loss from zero PBs;
    joint recognition (``rnnpb_nmt.models.rnnpb.joint``) minimises a sum of two. Returns ``recognize``'s dict
    without ``loss``."""
    s = settings
    if s.stop not in STOPPING:
        raise ValueError(f"unknown recognition stopping scheme {s.stop!r}")
    batch = tf.shape(pb)[0]
    beta1, beta2, adam_eps = 0.9, 0.999, 1e-7

    def loss_and_grad(rows, pb):
        with tf.GradientTape() as tape:
            tape.watch(pb)
            ce = loss(rows, pb)
            if s.prior:
                ce += s.prior * 0.5 * tf.reduce_sum(tf.square(pb), axis=1)
            total = tf.reduce_sum(ce)
        return ce, tape.gradient(total, pb)

    def update(tensor, rows, values):
        return tf.tensor_scatter_nd_update(tensor, rows[:, None], values)

    def body(i, pb, m, v, best, waited, active, iterations, last, history, pb_history, norm_history):
        # Only the sentences still being recognised are computed, cut to their longest length:
        # a batch costs what its sentences need, not what its slowest sentence needs.
        rows = tf.where(active)[:, 0]
        ce, grad = loss_and_grad(rows, tf.gather(pb, rows))
        norm = tf.norm(grad, axis=1)
        last = update(last, rows, ce)
        if record:
            history = history.write(i, last)
            pb_history = pb_history.write(i, pb)
            norm_history = norm_history.write(i, update(tf.zeros([batch]), rows, norm))
        grad = grad * tf.minimum(1.0, s.clip / tf.maximum(norm, 1e-12))[:, None]
        t = tf.cast(i + 1, tf.float32)  # every active sentence has made exactly i updates
        m_rows = beta1 * tf.gather(m, rows) + (1 - beta1) * grad
        v_rows = beta2 * tf.gather(v, rows) + (1 - beta2) * tf.square(grad)
        step = s.learning_rate * tf.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        pb = update(pb, rows, tf.gather(pb, rows) - step * m_rows / (tf.sqrt(v_rows) + adam_eps))
        m, v = update(m, rows, m_rows), update(v, rows, v_rows)
        iterations = tf.tensor_scatter_nd_add(iterations, rows[:, None], tf.ones_like(rows, tf.int32))
        if s.stop == "early":
            best_rows = tf.gather(best, rows)
            improved = ce < best_rows - s.epsilon
            best = update(best, rows, tf.where(improved, ce, best_rows))
            waited_rows = tf.where(improved, 0, tf.gather(waited, rows) + 1)
            waited = update(waited, rows, waited_rows)
            active = update(active, rows, waited_rows < s.patience)
        elif s.stop == "grad_norm":
            active = update(active, rows, norm >= s.grad_threshold)
        return i + 1, pb, m, v, best, waited, active, iterations, last, history, pb_history, norm_history

    zeros = tf.zeros_like(pb)
    histories = [tf.TensorArray(tf.float32, size=0, dynamic_size=True) for _ in range(3)]
    loop_vars = (tf.constant(0), pb, zeros, zeros, tf.fill([batch], float("inf")), tf.zeros([batch], tf.int32),
                 tf.ones([batch], tf.bool), tf.zeros([batch], tf.int32), tf.zeros([batch]), *histories)
    _, pb, _, _, _, _, _, iterations, _, *histories = tf.while_loop(
        lambda i, pb, m, v, best, waited, active, *_: (i < s.max_iterations) & tf.reduce_any(active),
        body, loop_vars)
    result = {"pb": pb, "iterations": iterations}
    if record:
        for name, array in zip(("history", "pb_history", "grad_norm_history"), histories):
            result[name] = array.stack()
    return result

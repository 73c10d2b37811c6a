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

STOPPING = ("early", "fixed", "grad_norm")


@dataclasses.dataclass(frozen=True)
class RecognitionSettings:
    learning_rate: float = 0.01
    max_iterations: int = 100
    stop: str = "early"
    patience: int = 3
    epsilon: float = 1e-4
    grad_threshold: float = 1.0
    clip: float = 1.0

    @classmethod
    def from_params(cls, p):
        return cls(p["pb_learning_rate"], p["max_recog_epochs"], p["recog_stop"], p["recog_patience"],
                   p["recog_epsilon"], p["recog_grad_threshold"], p["gradient_clip"])


def recognize(language_model, seq, settings, record=False):
    """Recognise PBs for sentences ``seq`` (B, T) in ``language_model``.

    Returns a dict: ``pb`` (B, num_PB), ``iterations`` (B,) updates each sentence made, ``loss``
    (B,) its final summed cross-entropy, and with ``record`` ``history`` (iterations, B): the loss
    before each update (a stopped sentence repeats its last value).
    """
    s = settings
    if s.stop not in STOPPING:
        raise ValueError(f"unknown recognition stopping scheme {s.stop!r}")
    batch = tf.shape(seq)[0]
    pb = tf.zeros([batch, language_model.num_pb])
    beta1, beta2, adam_eps = 0.9, 0.999, 1e-7

    def loss_and_grad(pb):
        with tf.GradientTape() as tape:
            tape.watch(pb)
            ce, _ = language_model.sentence_losses(seq, pb, training=False)
            total = tf.reduce_sum(ce)
        return ce, tape.gradient(total, pb)

    def body(i, pb, m, v, best, waited, active, iterations, history):
        ce, grad = loss_and_grad(pb)
        norm = tf.norm(grad, axis=1)
        history = history.write(i, ce)
        grad = grad * tf.minimum(1.0, s.clip / tf.maximum(norm, 1e-12))[:, None]
        t = tf.cast(i + 1, tf.float32)
        m_new = beta1 * m + (1 - beta1) * grad
        v_new = beta2 * v + (1 - beta2) * tf.square(grad)
        step = s.learning_rate * tf.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        pb_new = pb - step * m_new / (tf.sqrt(v_new) + adam_eps)
        rows = active[:, None]
        pb, m, v = tf.where(rows, pb_new, pb), tf.where(rows, m_new, m), tf.where(rows, v_new, v)
        iterations += tf.cast(active, tf.int32)
        if s.stop == "early":
            improved = ce < best - s.epsilon
            best = tf.where(active & improved, ce, best)
            waited = tf.where(improved, 0, waited + 1)
            active = active & (waited < s.patience)
        elif s.stop == "grad_norm":
            active = active & (norm >= s.grad_threshold)
        return i + 1, pb, m, v, best, waited, active, iterations, history

    zeros = tf.zeros_like(pb)
    loop_vars = (tf.constant(0), pb, zeros, zeros, tf.fill([batch], float("inf")), tf.zeros([batch], tf.int32),
                 tf.ones([batch], tf.bool), tf.zeros([batch], tf.int32),
                 tf.TensorArray(tf.float32, size=0, dynamic_size=True))
    _, pb, _, _, _, _, _, iterations, history = tf.while_loop(
        lambda i, pb, m, v, best, waited, active, iterations, history:
            (i < s.max_iterations) & tf.reduce_any(active),
        body, loop_vars)
    final, _ = language_model.sentence_losses(seq, pb, training=False)
    result = {"pb": pb, "iterations": iterations, "loss": final}
    if record:
        result["history"] = history.stack()
    return result

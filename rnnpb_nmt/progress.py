"""Progress bars for long loops (training epochs, dev recognition, test translation).

Keras's Progbar on a terminal; silent when stdout is not one (CI logs, pipes, nohup), so that logs
hold the per-epoch lines only.
"""

import sys

import tensorflow as tf


def bar(total, stateful=(), enabled=True):
    """A progress bar over ``total`` steps (None: unknown); ``update(step, [(name, value)])``.

    ``stateful`` names values shown as given rather than averaged over the steps so far.
    """
    shown = enabled and sys.stdout.isatty()
    return tf.keras.utils.Progbar(total, stateful_metrics=list(stateful), verbose=1 if shown else 0)

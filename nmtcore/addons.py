"""Every use of tensorflow-addons (end-of-life, caps TensorFlow at 2.15) lives here.

Replacing it means reimplementing this module only: LazyAdam is Adam that updates the moments and
weights of the embedding/PB rows a batch touches, and leaves the other rows alone.
"""

import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the package's end-of-life notice, once per process
    import tensorflow_addons as tfa


def lazy_adam(learning_rate, variables):
    """LazyAdam with the thesis's settings (beta1 0.9, beta2 0.999, epsilon 1e-7) for ``variables``.

    Its slots are created here, outside any compiled function: compiled training steps may be
    traced several times (one per kind of batch) and must not create variables.
    """
    optimizer = tfa.optimizers.LazyAdam(learning_rate=learning_rate, beta_1=0.9, beta_2=0.999, epsilon=1e-7)
    optimizer._create_all_weights(variables)  # noqa: SLF001 (Keras has no public way for legacy optimizers)
    return optimizer

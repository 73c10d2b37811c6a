"""The one place that depends on which TensorFlow stack is installed (docs/install.md).

- Python 3.11: TensorFlow 2.15.1 with tensorflow-addons' LazyAdam (end-of-life, caps TensorFlow
  at 2.15; the project's card names it).
- Python 3.12+: the newest TensorFlow, where tensorflow-addons cannot be installed, with the
  project's own LazyAdam below. ``tf.keras`` is tf-keras (Keras 2, through
  ``TF_USE_LEGACY_KERAS``), so layers and optimisers keep the variables, names and checkpoint
  keys of the 3.11 stack and a checkpoint written by one stack loads with the other.

LazyAdam is Adam that updates the moments and weights of the embedding/PB rows a batch touches,
and leaves the other rows alone.
"""

import contextlib
import importlib.util
import os
import platform
import re
import sys
import tempfile
import warnings

if importlib.util.find_spec("tf_keras"):
    # TensorFlow 2.16+ reads this at the first use of tf.keras; without it tf.keras is Keras 3.
    # (TensorFlow 2.15 reads it too, and would then want tf_keras, which its stack does not have.)
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


# What TensorFlow's and SentencePiece's C++ code logs below an error (and absl's notice that it logs
# to stderr): start-up notes, a model's normalisation, not for users.
LIBRARY_NOISE = re.compile(rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] |[IW]\d{4} \d\d:\d\d:\d\d\.\d+ "
                           rb"|\S+\.cc\(\d+\) LOG\(INFO\) |WARNING: All log messages before absl::InitializeLog)")


@contextlib.contextmanager
def library_logs_hidden(shown=lambda line: not LIBRARY_NOISE.match(line)):
    """Inside, what is written to stderr's descriptor (where C++ libraries log) is held back; on
    leaving, its lines that are ``shown`` (bytes -> bool; by default all but ``LIBRARY_NOISE``),
    or all of them if the block raised, are written to stderr."""
    sys.stderr.flush()
    saved, failed = os.dup(2), False
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            os.write(2, b"".join(line for line in log.read().splitlines(keepends=True) if failed or shown(line)))


def import_tensorflow():
    """``import tensorflow``, with its start-up messages hidden when TF_CPP_MIN_LOG_LEVEL asks.

    TensorFlow 2.16+ logs them (oneDNN, CUDA, CPU features) to stderr before it applies
    TF_CPP_MIN_LOG_LEVEL, which hid them up to 2.15; the entry points set it so that a user sees
    one-line errors only. If the import fails, what it logged is shown.
    """
    if "tensorflow" in sys.modules or os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") == "0":
        return importlib.import_module("tensorflow")
    with library_logs_hidden(shown=lambda line: False):
        return importlib.import_module("tensorflow")


tf = import_tensorflow()

try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the package's end-of-life notice, once per process
        import tensorflow_addons as tfa
except ImportError:  # Python 3.12+: no distribution of tensorflow-addons
    tfa = None

KERAS_VERSION = sys.modules[tf.keras.Model.__module__.split(".")[0]].__version__
if not KERAS_VERSION.startswith("2."):
    # Keras 3 layers name and track their variables differently: checkpoints would not load.
    raise ImportError(f"tf.keras is Keras {KERAS_VERSION}; this project needs Keras 2 "
                      "(install tf_keras, and leave TF_USE_LEGACY_KERAS unset or set it to 1)")

# What `make` prints after installing, and the benchmark records.
STACK = (f"Python {platform.python_version()}, TensorFlow {tf.__version__}, Keras {KERAS_VERSION}, "
         f"LazyAdam of {'tensorflow-addons' if tfa else 'rnnpb_nmt.tf_stack'}")


class LazyAdam(tf.keras.optimizers.legacy.Adam):
    """tensorflow-addons' LazyAdam (Apache 2.0), for stacks without tensorflow-addons.

    The same class hierarchy as tensorflow-addons' (Keras 2's legacy Adam), so its slots ``m``
    and ``v``, its step counter and hyperparameters are checkpointed under the same keys, and
    dense gradients get Keras's Adam update, as there. Sparse gradients (embedding and PB rows;
    Keras has summed duplicate rows before this is called) update only the rows they touch.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="LazyAdam"):
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon, name=name)

    def _resource_apply_sparse(self, grad, var, indices):
        dtype = var.dtype.base_dtype
        beta_1, beta_2 = self._get_hyper("beta_1", dtype), self._get_hyper("beta_2", dtype)
        step = tf.cast(self.iterations + 1, dtype)
        lr = self._decayed_lr(dtype) * tf.sqrt(1 - beta_2 ** step) / (1 - beta_1 ** step)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_rows = beta_1 * tf.gather(m, indices) + (1 - beta_1) * grad
        v_rows = beta_2 * tf.gather(v, indices) + (1 - beta_2) * tf.square(grad)
        var_rows = lr * m_rows / (tf.sqrt(v_rows) + tf.convert_to_tensor(self.epsilon, dtype))
        return tf.group(tf.raw_ops.ResourceScatterSub(resource=var.handle, indices=indices, updates=var_rows),
                        tf.raw_ops.ResourceScatterUpdate(resource=m.handle, indices=indices, updates=m_rows),
                        tf.raw_ops.ResourceScatterUpdate(resource=v.handle, indices=indices, updates=v_rows))


def lazy_adam(learning_rate, variables):
    """LazyAdam with the thesis's settings (beta1 0.9, beta2 0.999, epsilon 1e-7) for ``variables``:
    tensorflow-addons' where it is installed, else the project's own.

    Its slots are created here, outside any compiled function: compiled training steps may be
    traced several times (one per kind of batch) and must not create variables.
    """
    cls = tfa.optimizers.LazyAdam if tfa else LazyAdam
    optimizer = cls(learning_rate=learning_rate, beta_1=0.9, beta_2=0.999, epsilon=1e-7)
    optimizer._create_all_weights(variables)
    return optimizer

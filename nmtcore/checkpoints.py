"""Reading TensorFlow checkpoints so that a damaged or mismatched one is a one-line UserError."""

import tensorflow as tf

from nmtcore.errors import UserError

# What a missing, truncated, garbled or other-shaped checkpoint raises (a truncated data file
# gives an IndexError from TensorFlow's reader).
READ_ERRORS = (tf.errors.OpError, AssertionError, ValueError, IndexError)


def read(checkpoint, path, purpose):
    """Restore ``checkpoint`` (a tf.train.Checkpoint) from ``path`` with every existing object
    matched; returns the load status. ``purpose`` completes "cannot ..." in the error."""
    try:
        return checkpoint.read(path).assert_existing_objects_matched()
    except READ_ERRORS as e:
        raise UserError(f"{path}: cannot {purpose} ({str(e).split(chr(10))[0]})") from None

"""A run's checkpoints: the best dev epoch's weights (``best/``) and the last finished epoch's
whole training state (``state/``), read so that a damaged or mismatched one is a one-line UserError."""

import os

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


class RunCheckpoints:
    """``best/`` holds the model's variables only (what translation needs); ``state/`` also the
    optimisers' slots (``optimizers``, in order), so that a run resumes exactly."""

    def __init__(self, working_dir, model, optimizers=()):
        self.model = model
        self.best_dir = os.path.join(working_dir, "best")
        self.state_dir = os.path.join(working_dir, "state")
        self._state = tf.train.Checkpoint(model=model, **{f"optimizer_{i}": o for i, o in enumerate(optimizers)})
        self._best_manager = self._state_manager = None

    def _best(self):
        if self._best_manager is None:
            self._best_manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=self.model), self.best_dir,
                                                            max_to_keep=1)
        return self._best_manager

    def _states(self):
        if self._state_manager is None:
            # Two kept, so the one training_stats.json names survives a kill while the next is written.
            self._state_manager = tf.train.CheckpointManager(self._state, self.state_dir, max_to_keep=2)
        return self._state_manager

    def save_best(self, epoch):
        self._best().save(checkpoint_number=epoch)

    def save_state(self, epoch):
        """Save the whole training state; returns the checkpoint's name within ``state/``."""
        return os.path.basename(self._states().save(checkpoint_number=epoch))

    def restore_state(self, name):
        """Restore the training state saved as ``name`` (by name within this run's ``state/``: a
        working directory may have been moved or renamed since)."""
        read(self._state, os.path.join(self.state_dir, os.path.basename(name)), "resume")

    def restore_best(self):
        """Restore the best epoch's weights into the model (optimiser slots are not needed)."""
        checkpoint = tf.train.latest_checkpoint(self.best_dir)
        if checkpoint is None:
            raise UserError(f"{self.best_dir}: no saved weights "
                            "(training never finished an epoch, or best/checkpoint is damaged)")
        read(tf.train.Checkpoint(model=self.model), checkpoint, "restore weights").expect_partial()

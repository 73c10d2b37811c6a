"""A run's checkpoints: the best dev epoch's weights (``best/``) and the last finished epoch's
whole training state (``state/``), read so that a damaged or mismatched one is a one-line UserError,
and written so that a failed save (a full disk) is one too, leaving the previous checkpoint in place."""

import logging
import os
import re

import tensorflow as tf

from rnnpb_nmt.data.files import writing
from rnnpb_nmt.errors import UserError

# What a missing, truncated, garbled or other-shaped checkpoint raises (a truncated data file
# gives an IndexError from TensorFlow's reader).
READ_ERRORS = (tf.errors.OpError, AssertionError, ValueError, IndexError)


def read(checkpoint, path, purpose):
    """Restore ``checkpoint`` (a tf.train.Checkpoint) from ``path`` with every existing object
    matched; returns the load status. Values it does not use (a state's ``save_counter``, the
    optimiser slots when only weights are wanted) are expected: TensorFlow would warn of them at
    exit, also after a mismatch, so they are expected before the match is asserted. ``purpose``
    completes "cannot ..." in the error."""
    try:
        return checkpoint.read(path).expect_partial().assert_existing_objects_matched()
    except READ_ERRORS as e:
        _quiet_failed_restores()
        raise UserError(f"{path}: cannot {purpose} ({str(e).split(chr(10))[0]})") from None


class _FailedRestoreWarnings(logging.Filter):
    """Drops TensorFlow's warning that a restore left values unused, logged when the restore is
    collected. A read that fails half done (a variable of another shape) returns no status to
    call ``expect_partial`` on, and the model keeps the restore until exit, so the warning would
    follow the one-line error that already said what is wrong (at a test run's exit, onto a closed
    stream: "--- Logging error ---")."""

    MESSAGES = ("Detecting that an object or model or tf.train.Checkpoint is being deleted with unrestored values",
                "Value in checkpoint could not be found in the restored object",
                "An attribute in the restored object could not be found in the checkpoint")

    def filter(self, record):
        return not str(record.msg).startswith(self.MESSAGES)


def _quiet_failed_restores():
    """Install ``_FailedRestoreWarnings`` on TensorFlow's logger, once (after the first failed read)."""
    logger = tf.get_logger()
    if not any(isinstance(f, _FailedRestoreWarnings) for f in logger.filters):
        logger.addFilter(_FailedRestoreWarnings())


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
        save(self._best(), epoch)

    def save_state(self, epoch):
        """Save the whole training state; returns the checkpoint's name within ``state/``."""
        return os.path.basename(save(self._states(), epoch))

    def restore_state(self, name):
        """Restore the training state saved as ``name`` (by name within this run's ``state/``: a
        working directory may have been moved or renamed since)."""
        read(self._state, os.path.join(self.state_dir, os.path.basename(name)), "resume")

    def restore_best(self):
        """Restore the best epoch's weights into the model (optimiser slots are not needed).

        A run being trained may replace its best checkpoint meanwhile: the manager writes the
        new one whole, then names it in ``best/checkpoint``, then deletes the old one, which this
        may have been about to read. A read that fails is therefore tried again with the checkpoint
        the index names then (a newer, complete one); one that fails twice is damaged.
        """
        failed = None
        while True:
            name = self._best_name()
            if name is None:
                raise UserError(f"{self.best_dir}: no saved weights "
                                "(training never finished an epoch, or best/checkpoint is damaged)")
            try:
                read(tf.train.Checkpoint(model=self.model), name, "restore weights")
                return
            except UserError:
                if name == failed:
                    raise
                failed = name

    def _best_name(self):
        """The checkpoint ``best/checkpoint`` names, within ``best/`` (the directory may have been
        moved), or None. Read here in one go: TensorFlow's reader can see the index half-replaced
        while a save replaces it (a parse error, then no checkpoint at all)."""
        try:
            with open(os.path.join(self.best_dir, "checkpoint"), encoding="utf-8") as f:
                found = re.search(r'^model_checkpoint_path: "([^"]+)"', f.read(), re.M)
        except (OSError, UnicodeDecodeError):
            return None
        return os.path.join(self.best_dir, os.path.basename(found.group(1))) if found else None


def save(manager, epoch):
    """Save a checkpoint as number ``epoch``; returns its path. A save is nothing but writing
    files, so any TensorFlow error in it is a failed write (a full disk raises ResourceExhaustedError);
    the manager names the new checkpoint, and deletes old ones, only once it is whole."""
    with writing(os.path.join(manager.directory, f"ckpt-{epoch}"), (OSError, tf.errors.OpError)):
        return manager.save(checkpoint_number=epoch)

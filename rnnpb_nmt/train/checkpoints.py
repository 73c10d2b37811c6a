"""A run's checkpoints: the best dev epoch's weights (``best/``), the last finished epoch's whole
training state (``state/``) and, with --keep_checkpoints, some finished epochs' weights (``epochs/``,
which --average_checkpoints averages), read so that a damaged or mismatched one is a one-line
UserError, and written so that a failed save (a full disk) is one too, leaving the previous
checkpoints in place."""

import logging
import os
import re
import shutil

import numpy as np
import tensorflow as tf

from rnnpb_nmt.data.files import writing
from rnnpb_nmt.errors import UserError

# What a missing, truncated, garbled or other-shaped checkpoint raises (a truncated data file
# gives an IndexError from TensorFlow's reader).
READ_ERRORS = (tf.errors.OpError, AssertionError, ValueError, IndexError)
# What a failed save raises: a save is nothing but writing files (a full disk: ResourceExhaustedError).
SAVE_ERRORS = (OSError, tf.errors.OpError)

EPOCHS = "epochs"  # the folder of the kept epochs' weights, epoch-<E> each
# A file or folder of epoch E's checkpoint: epoch-E.index, epoch-E.data-*, and the epoch-E_temp/
# that a save writes first (left behind by a save that failed or was killed).
_EPOCH_FILE = re.compile(r"epoch-(\d+)[._]")


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


def _while_replaced(choose, load):
    """``(chosen, load(chosen))`` for ``chosen = choose()``. A run being trained replaces and deletes
    checkpoints meanwhile (best/'s previous one once the next is whole, the epochs that drop out of
    those epochs/ keeps), which a read may have been about to use; so a read that fails is tried
    again with what ``choose`` says then (newer, complete ones). A choice that fails twice is damaged."""
    failed = None
    while True:
        chosen = choose()
        try:
            return chosen, load(chosen)
        except UserError:
            if chosen == failed:
                raise
            failed = chosen


class RunCheckpoints:
    """``best/`` holds the model's variables only (what translation needs); ``state/`` also the
    optimisers' slots (``optimizers``, in order), so that a run resumes exactly; ``epochs/``, with a
    ``keep`` (a function of training_stats.json's epoch records naming the epochs to keep), the
    variables of those epochs, like ``best/``'s."""

    def __init__(self, working_dir, model, optimizers=(), keep=None):
        self.model, self.keep = model, keep
        self.best_dir = os.path.join(working_dir, "best")
        self.state_dir = os.path.join(working_dir, "state")
        self.epochs_dir = os.path.join(working_dir, EPOCHS)
        self._state = training_state(model, optimizers)
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
        may have been about to read (``_while_replaced``).
        """
        _while_replaced(self._best_path, lambda path: read(tf.train.Checkpoint(model=self.model), path,
                                                           "restore weights"))

    def _best_path(self):
        name = self._best_name()
        if name is None:
            raise UserError(f"{self.best_dir}: no saved weights "
                            "(training never finished an epoch, or best/checkpoint is damaged)")
        return name

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

    def epoch_path(self, epoch):
        return os.path.join(self.epochs_dir, f"epoch-{epoch}")

    def save_epoch(self, epoch):
        """Save the model's variables as ``epochs/epoch-<epoch>``. Only training_stats.json, written
        after, makes it one of the kept epochs: a save that fails or is killed half done leaves files
        of an epoch that no reader chooses, which the epoch's save when it is trained again replaces,
        and ``prune_epochs`` deletes otherwise."""
        path = self.epoch_path(epoch)
        with writing(path, SAVE_ERRORS):
            tf.train.Checkpoint(model=self.model).write(path)

    def prune_epochs(self, records):
        """Delete the files of every epoch in ``epochs/`` that ``keep(records)`` does not name: those
        that dropped out of the kept ones, and any a failed or killed save left. The kept epochs are a
        function of the records alone, so a resumed run keeps what the uninterrupted one keeps."""
        kept = set(self.keep(records))
        remove_entries(self.epochs_dir,
                       lambda name: (found := _EPOCH_FILE.match(name)) is not None and int(found.group(1)) not in kept)

    def restore_average(self, choose):
        """Set the model's trainable float variables to their element-wise mean over the kept epochs
        ``choose()`` names, the others (integer or non-trainable ones, if any: nothing to average) to
        best/'s; returns those epochs. ``choose`` is asked again when a read fails (``_while_replaced``)."""
        averaged = [v for v in self.model.trainable_variables if v.dtype.is_floating]
        epochs, means = _while_replaced(choose, lambda epochs: self._means(averaged, epochs))
        self.restore_best()
        for variable, mean in zip(averaged, means):
            variable.assign(mean)
        return epochs

    def _means(self, variables, epochs):
        """Each of ``variables``' element-wise mean over the checkpoints of ``epochs``, summed in
        float64: the mean of one checkpoint is its values exactly, and of several the rounded mean."""
        sums = [np.zeros(v.shape, np.float64) for v in variables]
        for epoch in epochs:
            read(tf.train.Checkpoint(model=self.model), self.epoch_path(epoch), "restore weights to average")
            for total, variable in zip(sums, variables):
                total += variable.numpy()
        return [(total / len(epochs)).astype(v.dtype.as_numpy_dtype) for total, v in zip(sums, variables)]


def training_state(model, optimizers, **more):
    """The tf.train.Checkpoint of a run's whole training state: the model, the optimisers (their
    slots and step counts, in order) and ``more``."""
    return tf.train.Checkpoint(model=model, **{f"optimizer_{i}": o for i, o in enumerate(optimizers)}, **more)


def remove_entries(folder, doomed):
    """Delete each file or folder in ``folder`` whose name ``doomed(name)`` is true. Deleting is
    writing the folder: a failure is its one-line error."""
    with writing(folder):
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if not doomed(name):
                continue
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.remove(path)


def save(manager, epoch):
    """Save a checkpoint as number ``epoch``; returns its path. Any TensorFlow error in it is a
    failed write (``SAVE_ERRORS``); the manager names the new checkpoint, and deletes old ones,
    only once it is whole."""
    with writing(os.path.join(manager.directory, f"ckpt-{epoch}"), SAVE_ERRORS):
        return manager.save(checkpoint_number=epoch)

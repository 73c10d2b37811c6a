"""Reading ``best/`` while a training process replaces it: always a whole checkpoint, never an error.

Run as a script (``python test_checkpoints.py DIR SAVES``), this file is the saving process.
"""

import gc
import logging
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from helpers import ROOT  # noqa: F401 (puts the repository on the path when run as a script)

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import checkpoints as checkpoints_module
from rnnpb_nmt.train.checkpoints import RunCheckpoints


def weights():
    """A stand-in model: large enough that a save takes a while, two variables to catch a mix."""
    module = tf.Module()
    module.a, module.b = tf.Variable(tf.zeros([500_000])), tf.Variable(tf.zeros([1000]))
    return module


def save_repeatedly(working_dir, saves):
    """Save ``best/`` ``saves`` times, as fast as it goes, every weight equal to the save's number."""
    model = weights()
    checkpoints = RunCheckpoints(working_dir, model)
    for n in range(1, saves + 1):
        for variable in (model.a, model.b):
            variable.assign(tf.fill(variable.shape, float(n)))
        checkpoints.save_best(n)


@pytest.mark.long  # starts a second process that saves repeatedly
def test_best_is_read_whole_while_another_process_replaces_it(tmp_path):
    """Before the fix, about 1 read in 30 failed here (the index read half-replaced, or the checkpoint
    it named deleted while being read)."""
    model = weights()
    checkpoints = RunCheckpoints(str(tmp_path), model)
    checkpoints.save_best(0)
    saver = subprocess.Popen([sys.executable, __file__, str(tmp_path), "150"])
    seen = set()
    while saver.poll() is None:
        checkpoints.restore_best()
        values = np.unique(np.concatenate([model.a.numpy(), model.b.numpy()]))
        assert len(values) == 1, f"a mix of checkpoints: {values}"
        seen.add(float(values[0]))
    assert saver.returncode == 0
    assert len(seen) > 10, "too few reads overlapped the saves to test anything"


@pytest.mark.parametrize("other", ["names", "shapes"])
def test_a_mismatched_checkpoint_is_a_user_error_and_leaves_no_warning_for_exit(tmp_path, other):
    """TensorFlow warns of a restore's unused values when its status is collected, which at the
    test run's exit meant a "Logging error" on a closed stream: a checkpoint of other variables,
    or of the same variables in other shapes (a vocabulary of another size), where the restore
    itself fails half done."""
    path = tf.train.Checkpoint(a=tf.Variable([1.0]), b=tf.Variable(2.0)).save(str(tmp_path / "ckpt"))
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    try:
        reader = (tf.train.Checkpoint(a=tf.Variable([0.0]), c=tf.Variable(3.0)) if other == "names" else
                  tf.train.Checkpoint(a=tf.Variable([0.0, 0.0]), b=tf.Variable(3.0)))
        with pytest.raises(UserError, match="ckpt.*cannot restore"):
            checkpoints_module.read(reader, path, "restore")
        del reader
        gc.collect()
    finally:
        tf.get_logger().removeHandler(handler)
        for quiet in [f for f in tf.get_logger().filters if isinstance(f, checkpoints_module._FailedRestoreWarnings)]:
            tf.get_logger().removeFilter(quiet)  # each case installs its own
    assert not [r.getMessage() for r in records if "unrestored" in r.getMessage() or "could not be found" in r.getMessage()]


if __name__ == "__main__":
    save_repeatedly(sys.argv[1], int(sys.argv[2]))

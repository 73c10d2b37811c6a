"""Reading ``best/`` while a training process replaces it: always a whole checkpoint, never an error.

Run as a script (``python test_checkpoints.py DIR SAVES``), this file is the saving process.
"""

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from helpers import ROOT  # noqa: F401 (puts the repository on the path when run as a script)

from nmtcore.checkpoints import RunCheckpoints


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


@pytest.mark.slow  # starts a second process that saves repeatedly
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


if __name__ == "__main__":
    save_repeatedly(sys.argv[1], int(sys.argv[2]))

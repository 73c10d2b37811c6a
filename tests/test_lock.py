"""One training per working directory: a second is refused at once, and a killed one leaves no lock."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import lock

from helpers import ROOT, run_nmt, train_args

# A bound RNNPB: its first epoch (tracing, dev recognition) outlasts a refused command's start.
FLAGS = ["--model=rnnpbnmt", "--num_PB=8", "--max_recog_epochs=5", "--dropout=0.2", "--seed=11", "--max_epochs=2"]


def test_a_locked_working_dir_is_refused_naming_the_holder(tmp_path):
    with lock.exclusive(str(tmp_path / "wd")):
        # flock locks belong to an open file, so a second open in this same process conflicts too.
        with pytest.raises(UserError, match=rf"is being trained by another process \(PID {os.getpid()}\)"):
            with lock.exclusive(str(tmp_path / "wd")):
                pass
    with lock.exclusive(str(tmp_path / "wd")):  # released on leaving
        pass


def test_a_killed_holder_leaves_no_lock_behind(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from rnnpb_nmt.train import lock\n"
                               "with lock.exclusive(sys.argv[1]):\n    print('locked', flush=True); time.sleep(600)",
                               str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "locked\n"
    with pytest.raises(UserError, match=f"PID {holder.pid}"):
        with lock.exclusive(str(tmp_path)):
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    with lock.exclusive(str(tmp_path)):
        pass


def results(working_dir):
    """Every epoch's statistics but its times."""
    rows = json.loads((working_dir / "training_stats.json").read_text())["epochs"]
    return [{k: v for k, v in row.items() if "seconds" not in k} for row in rows]


@pytest.mark.long
def test_a_second_training_on_one_dir_is_refused_and_the_first_runs_as_alone(demo_data, tmp_path):
    alone, shared = tmp_path / "alone", tmp_path / "shared"
    run_nmt(*train_args(demo_data, alone, *FLAGS))
    args = [sys.executable, str(ROOT / "nmt.py"), *train_args(demo_data, shared, *FLAGS)]
    with open(tmp_path / "first.log", "w+") as log:
        first = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        while not (shared / ".lock").is_file() or (shared / ".lock").read_text().strip() != str(first.pid):
            assert first.poll() is None, (tmp_path / "first.log").read_text()
            time.sleep(0.02)
        second = run_nmt(*train_args(demo_data, shared, *FLAGS), check=False)
        still_in_epoch_1 = first.poll() is None and not (shared / "training_stats.json").exists()
        assert first.wait(timeout=600) == 0, (tmp_path / "first.log").read_text()
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert second.stderr == f"error: --working_dir={shared} is being trained by another process (PID {first.pid}); " \
                            "wait for it to end, or stop it and run the same command again to resume\n"
    assert still_in_epoch_1, "the second run was refused only after the first had finished an epoch"
    assert len(results(shared)) == 2 and results(shared) == results(alone)

"""Killed or stopped training resumes, with the same command, into the run it would have been."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from helpers import ROOT, cli_in_process, latest_variables, run_nmt, train_args

pytestmark = pytest.mark.long  # every test here trains through the command line or a strategy, in processes of its own

# Bound RNNPB with dropout, PB noise and PB resets, so that every random draw of training matters.
FLAGS = ["--model=rnnpbnmt", "--num_PB=8", "--max_recog_epochs=5", "--dropout=0.2", "--sigma=0.1",
         "--p_reset=0.1", "--seed=11", "--max_epochs=3", "--num_layers=1"]


def epochs_done(working_dir):
    try:
        return len(json.loads((working_dir / "training_stats.json").read_text())["epochs"])
    except FileNotFoundError:
        return 0


def start_and_signal(args, working_dir, after_epochs, signum, log):
    """Start training and send ``signum`` while epoch ``after_epochs + 1`` runs.

    Returns (exit status, stderr); ``log`` is where stderr goes (a file, not a pipe nobody reads).
    """
    with open(log, "w+") as err:
        proc = subprocess.Popen([sys.executable, str(ROOT / "nmt.py"), *map(str, args)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.time() + 600
        while epochs_done(working_dir) < after_epochs:
            assert proc.poll() is None and time.time() < deadline, f"training stopped early:\n{log.read_text()}"
            time.sleep(0.02)
        proc.send_signal(signum)
        proc.wait(timeout=120)
    assert epochs_done(working_dir) == after_epochs, "the signal came too late: the next epoch had finished"
    return proc.returncode, log.read_text()


@pytest.mark.parametrize("batching", [[], ["--batch_tokens=90"]], ids=["sentences", "tokens"])
def test_killed_and_stopped_training_resumes_into_the_uninterrupted_run(demo_data, tmp_path, batching):
    whole_dir, parts_dir = tmp_path / "whole", tmp_path / "parts"
    run_nmt(*train_args(demo_data, whole_dir, *FLAGS, *batching))
    parts = train_args(demo_data, parts_dir, *FLAGS, *batching)
    status, _ = start_and_signal(parts, parts_dir, 1, signal.SIGKILL, tmp_path / "killed.log")
    assert status == -signal.SIGKILL
    assert (parts_dir / ".lock").is_file()  # left behind, but its lock died with the process: no cleanup
    status, stderr = start_and_signal(parts, parts_dir, 2, signal.SIGTERM, tmp_path / "stopped.log")
    assert status == 130 and "Traceback" not in stderr, stderr
    assert "interrupted: run the same command again to resume" in stderr
    proc = run_nmt(*parts)
    assert "resuming" in proc.stdout and "after epoch 2" in proc.stdout

    whole, resumed = (json.loads((d / "training_stats.json").read_text()) for d in (whole_dir, parts_dir))
    assert [e["epoch"] for e in resumed["epochs"]] == [1, 2, 3]
    for a, b in zip(whole["epochs"], resumed["epochs"]):
        assert a["dev_perplexity"] == pytest.approx(b["dev_perplexity"], abs=1e-5)
        assert a["train_perplexity"] == pytest.approx(b["train_perplexity"], abs=1e-5)
    for folder in ("best", "state"):
        expected, got = latest_variables(whole_dir, folder), latest_variables(parts_dir, folder)
        assert expected.keys() == got.keys()
        held = {name.split("/.ATTRIBUTES")[0] for name in expected}  # the whole model: both LMs, both PB tables
        assert {"model/lm_a/lstm/kernel_0", "model/lm_b/lstm/kernel_0", "model/pbs/a", "model/pbs/b"} <= held
        for name, value in expected.items():
            np.testing.assert_allclose(got[name], value, atol=1e-6, err_msg=f"{folder}: {name}")


def test_a_run_continues_past_its_epoch_cap_but_not_in_another_configuration(demo_data, tmp_path, capsys):
    flags = ["--model=encdec", "--reverse_source", "--seed=3"]
    run_nmt(*train_args(demo_data, tmp_path, *flags, "--max_epochs=1"))
    proc = run_nmt(*train_args(demo_data, tmp_path, *flags, "--max_epochs=2"))
    assert "resuming" in proc.stdout and "after epoch 1" in proc.stdout
    assert epochs_done(tmp_path) == 2
    status, _, err = cli_in_process(train_args(demo_data, tmp_path, "--model=encdec", "--max_epochs=5"), capsys)
    assert status == 1 and "another configuration: --reverse_source" in err
    status, _, err = cli_in_process(train_args(demo_data, tmp_path, *flags, "--max_epochs=5", "--gradient_clip=3"), capsys)
    assert status == 1 and "--gradient_clip (was 1.0, now 3.0)" in err


def test_ctrl_c_stops_training_like_sigterm_and_it_resumes(demo_data, tmp_path):
    """SIGINT, as a terminal's Ctrl-C sends it; small batches make the epoch it lands in long."""
    wd = tmp_path / "wd"
    args = train_args(demo_data, wd, "--model=encdec", "--seed=3", "--max_epochs=2", "--batch_size=8")
    status, stderr = start_and_signal(args, wd, 1, signal.SIGINT, tmp_path / "interrupted.log")
    assert status == 130 and "Traceback" not in stderr, stderr
    assert stderr.endswith("interrupted: run the same command again to resume from the last finished epoch\n")
    proc = run_nmt(*args)
    assert "resuming" in proc.stdout and "after epoch 1" in proc.stdout and epochs_done(wd) == 2

"""Full disks and unwritable places: refused before any work, or stopped with the last state kept.

The full disk is a real one, a 4 MB tmpfs each test mounts (and always unmounts) for itself; the
unwritable places are a read-only bind mount, and a directory where a file should go. Mounting
needs root (tests run as root, where permission bits stop no write); elsewhere these tests skip.
"""

import json
import os
import subprocess

import pytest

from rnnpb_nmt.data import files
from rnnpb_nmt.errors import UserError

from helpers import cli_in_process, run_nmt, train_args, untrained_working_dir

SMALL = ["--model=encdec", "--seed=3"]


def mount_or_skip(target, *commands):
    """Run the mount ``commands`` (argument lists) on ``target``; skip the test if they fail."""
    for command in commands:
        proc = subprocess.run([*command, str(target)], capture_output=True, text=True)
        if proc.returncode:
            subprocess.run(["umount", str(target)], capture_output=True)
            pytest.skip(f"cannot mount here ({' '.join(command)}: {proc.stderr.strip()})")


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB file system of this test's own."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount_or_skip(disk, ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs"])
    yield disk
    subprocess.run(["umount", "--lazy", str(disk)], check=True)


@pytest.fixture
def read_only(tmp_path):
    """A read-only view (bind mount) of ``tmp_path/ro``, and the directory under it to fill first."""
    writable = tmp_path / "ro"
    writable.mkdir()
    mount_or_skip(writable, ["mount", "--bind", str(writable)], ["mount", "-o", "remount,bind,ro"])
    yield writable
    subprocess.run(["umount", "--lazy", str(writable)], check=True)


def fill(disk, leave=0):
    """Fill ``disk`` up to ``leave`` free bytes."""
    stat = os.statvfs(disk)
    with open(disk / "filler", "wb") as f:
        f.write(bytes(max(stat.f_bavail * stat.f_frsize - leave, 0)))


def one_line_error(proc):
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1, proc.stderr
    return proc.stderr


def one_line_error_in_process(args, capsys):
    """The stderr of ``args`` run in this process (``cli_in_process``), which must return status 1
    (not raise) with one line on stderr."""
    status, _, err = cli_in_process(args, capsys)
    assert status == 1 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    return err


def test_a_full_disk_keeps_the_old_json_file(small_disk):
    path = small_disk / "stats.json"
    files.write_json(path, {"epochs": [1]})
    fill(small_disk)
    with pytest.raises(UserError, match=rf"^{path}: cannot write \(No space left on device\)$"):
        files.write_json(path, {"epochs": list(range(100_000))})
    assert json.loads(path.read_text()) == {"epochs": [1]}
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "stats.json"]  # no temporary file left


def test_an_atomic_write_spares_other_files_and_writes_through_a_link(tmp_path):
    (tmp_path / "out.txt.tmp").write_text("a file of the user's\n")  # the old fixed temporary name
    (tmp_path / "real.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    files.write_text(tmp_path / "out.txt", "new\n")
    files.write_text(tmp_path / "link.txt", "through\n")
    assert (tmp_path / "out.txt.tmp").read_text() == "a file of the user's\n"
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "through\n"
    with pytest.raises(ZeroDivisionError), files.atomic_file(tmp_path / "out.txt") as f:
        f.write("half")
        raise ZeroDivisionError  # an interrupted write: the previous file stays, no temporary one
    assert (tmp_path / "out.txt").read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "out.txt", "out.txt.tmp", "real.txt"]


@pytest.mark.long
def test_a_full_disk_while_saving_an_epoch_keeps_the_last_one(demo_data, small_disk):
    """Room for the run's small files (hyperparameters, vocabularies, lock), not for a checkpoint."""
    wd = small_disk / "wd"
    run_nmt(*train_args(demo_data, wd, *SMALL, "--max_epochs=1"))
    stats = (wd / "training_stats.json").read_bytes()
    fill(small_disk, leave=64 * 1024)
    error = one_line_error(run_nmt(*train_args(demo_data, wd, *SMALL, "--max_epochs=2"), check=False))
    assert error.startswith(f"error: {wd}/") and "/ckpt-2: cannot write (No space left on device); epoch 2 was not " \
                                                  "saved: run the same command again" in error
    assert (wd / "training_stats.json").read_bytes() == stats
    (small_disk / "filler").unlink()
    proc = run_nmt(*train_args(demo_data, wd, *SMALL, "--max_epochs=2"))
    assert "resuming" in proc.stdout and "after epoch 1" in proc.stdout
    assert len(json.loads((wd / "training_stats.json").read_text())["epochs"]) == 2


@pytest.mark.parametrize("inside", [".", "wd"], ids=["existing", "to_be_made"])
def test_an_unwritable_working_dir_is_refused_before_training(demo_data, read_only, inside, capsys):
    wd = os.path.normpath(read_only / inside)
    error = one_line_error_in_process(train_args(demo_data, wd, *SMALL), capsys)
    assert error == f"error: --working_dir={wd}: cannot write there (Read-only file system)\n"


def test_unwritable_outputs_are_refused_before_testing_analysing_or_training(demo_data, tmp_path, capsys):
    """A directory where test_trans.txt goes, a file where analysis/ goes (tricks that stop root too)."""
    untrained_working_dir(tmp_path, demo_data, model="encdec")
    (tmp_path / "test_trans.txt").mkdir()
    (tmp_path / "analysis").write_text("")
    testing = ["--do_testing", f"--test_set={demo_data}/test.en"]
    error = one_line_error_in_process([*testing, f"--working_dir={tmp_path}"], capsys)
    assert error == f"error: {tmp_path}/test_trans.txt: cannot write (a directory is in the way)\n"
    assert not (tmp_path / "testing_stats.json").exists()
    error = one_line_error_in_process(["--analyze", f"--working_dir={tmp_path}"], capsys)
    assert error == f"error: {tmp_path}/analysis/summary.json: cannot write ({tmp_path}/analysis is a file)\n"
    error = one_line_error_in_process(["--analyze", f"--analysis_dir={tmp_path}/analysis", f"--working_dir={tmp_path}"],
                                      capsys)
    assert error == f"error: {tmp_path}/analysis/summary.json: cannot write ({tmp_path}/analysis is a file)\n"
    error = one_line_error_in_process([*testing, f"--analysis_dir={tmp_path}/a", f"--working_dir={tmp_path}"],
                                      capsys)
    assert error == "error: --analysis_dir: only with --analyze\n"
    new = tmp_path / "new"
    (new / "test_trans.txt").mkdir(parents=True)
    error = one_line_error_in_process([*train_args(demo_data, new, *SMALL), *testing], capsys)
    assert error == f"error: {new}/test_trans.txt: cannot write (a directory is in the way)\n"
    assert [p.name for p in new.iterdir()] == ["test_trans.txt"]  # refused before training wrote anything

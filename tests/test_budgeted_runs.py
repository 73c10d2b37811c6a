"""What the run scripts share: a kept test is reused only while it is of the run's weights and command."""

import json
import os
import subprocess
import sys
import threading

import pytest

import budgeted_runs

from rnnpb_nmt.config import Config
from rnnpb_nmt.errors import UserError

COMMAND = ["/no/such/python", "nmt.py", "--do_testing", "--test_set=dev.src", "--working_dir=w"]


def keep(working_dir, command, trained_at, tested_at):
    """A run trained (its last epoch written) at ``trained_at`` and tested by ``command`` at ``tested_at``."""
    trained, kept = working_dir / "training_stats.json", working_dir / "testing_stats_dev.json"
    trained.write_text("{}")
    kept.write_text(json.dumps({"accuracy": 0.5, "command": command}))
    os.utime(trained, (trained_at, trained_at))
    os.utime(kept, (tested_at, tested_at))
    return str(kept)


def test_a_kept_test_is_current_only_for_the_same_command_after_the_last_epoch(tmp_path):
    assert budgeted_runs.current_test(keep(tmp_path, COMMAND, 100, 200), COMMAND, str(tmp_path)) == {"accuracy": 0.5}
    assert budgeted_runs.current_test(keep(tmp_path, COMMAND, 300, 200), COMMAND, str(tmp_path)) is None  # trained on since
    other = [*COMMAND, "--beam_size=5"]
    assert budgeted_runs.current_test(keep(tmp_path, other, 100, 200), COMMAND, str(tmp_path)) is None
    kept = keep(tmp_path, COMMAND, 100, 200)
    os.remove(tmp_path / "training_stats.json")  # an ensemble's directory: no training of its own
    assert budgeted_runs.current_test(kept, COMMAND, str(tmp_path)) is None


def test_a_current_kept_test_is_returned_without_running_anything(tmp_path):
    keep(tmp_path, COMMAND, 100, 200)
    # The command would fail if it ran (no such program), so returning means it did not.
    stats = budgeted_runs.run_test(COMMAND, str(tmp_path), "dev")
    assert stats == {"accuracy": 0.5}


def test_a_run_that_reached_its_cap_goes_on_under_a_larger_one_in_the_command(tmp_path):
    (tmp_path / "hparams.json").write_text(json.dumps(Config().replace(max_epochs=2, early_stopping_steps=5).to_flat()))
    (tmp_path / "training_stats.json").write_text(json.dumps(
        {"epochs": [{"seconds": 5}] * 2, "best_epoch": 2, "best_dev_perplexity": 3.0, "waited": 0, "total_seconds": 10}))
    assert budgeted_runs.progress(str(tmp_path))[1]
    assert budgeted_runs.progress(str(tmp_path), ["nmt.py", "--max_epochs=2"])[1]
    assert not budgeted_runs.progress(str(tmp_path), ["nmt.py", "--do_training", "--max_epochs=4"])[1]
    stats = json.loads((tmp_path / "training_stats.json").read_text())
    (tmp_path / "training_stats.json").write_text(json.dumps(dict(stats, waited=5)))  # stopped early: stays stopped
    assert budgeted_runs.progress(str(tmp_path), ["nmt.py", "--max_epochs=4"])[1]


def test_statistics_caught_mid_write_are_read_again_at_the_next_poll(tmp_path):
    """A training's statistics that do not read are an error before it starts, but while it runs
    they are a file being written: the budget is not used up yet, and the next poll reads again."""
    (tmp_path / "hparams.json").write_text(json.dumps(Config().to_flat()))
    stats_file = tmp_path / "training_stats.json"
    stats_file.write_text('{"epochs": [{"seconds": 10}], "best_ep')
    with pytest.raises(UserError, match="training_stats.json: corrupted"):
        budgeted_runs.budget_state(str(tmp_path), [], 15)
    assert not budgeted_runs.used_up_while_training(str(tmp_path), [], 15)
    stats_file.write_text(json.dumps(
        {"epochs": [{"seconds": 10}], "best_epoch": 1, "best_dev_perplexity": 3.0, "waited": 0, "total_seconds": 10}))
    assert budgeted_runs.used_up_while_training(str(tmp_path), [], 15)  # 5 s left: no room for an epoch of 10


def test_a_run_that_ignores_the_budgets_sigterm_is_killed(tmp_path):
    """The budget's SIGTERM, then SIGKILL after the grace: a stuck run cannot hold up the cells after it."""
    started = tmp_path / "started"
    stubborn = ("import pathlib, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                f"pathlib.Path({str(started)!r}).touch(); time.sleep(30)")
    said = []
    stopped = budgeted_runs.train_within_budget([sys.executable, "-c", stubborn], str(tmp_path / "w"), 3,
                                                said.append, grace=1, poll=0.1)
    assert stopped == "time budget" and started.exists()
    assert said[-2].endswith("still training 2 times its budget of 3 s after it started; stopped")
    assert said[-1].endswith("still running 1 s after SIGTERM; killed")


# A training that writes an epoch of 10 s (by its record) every second of wall time, forever or until
# its epoch cap (a second argument); a SIGTERM ends it, as it ends the toolkit's, between epochs.
FAKE_TRAINING = """
import json, os, sys, time
stats_file = os.path.join(sys.argv[1], "training_stats.json")
epochs = json.load(open(stats_file))["epochs"] if os.path.exists(stats_file) else []
while len(sys.argv) < 3 or len(epochs) < int(sys.argv[2]):
    time.sleep(1)
    epochs.append({"seconds": 10})
    stats = {"epochs": epochs, "best_epoch": len(epochs), "best_dev_perplexity": 2.0, "waited": 0,
             "total_seconds": 10 * len(epochs)}
    with open(stats_file + ".tmp", "w") as f:
        json.dump(stats, f)
    os.replace(stats_file + ".tmp", stats_file)
"""


def test_the_budget_counts_finished_epochs_so_a_resumed_run_trains_as_an_uninterrupted_one(tmp_path):
    """The budget of 35 s holds three epochs of 10 s (a fourth as long would not fit), whatever
    the process's own wall time; a run cut after its first epoch and resumed stops there too."""
    def run(working_dir, budget=35):
        os.makedirs(working_dir, exist_ok=True)
        (working_dir / "hparams.json").write_text(json.dumps(Config().replace(early_stopping_steps=1000).to_flat()))
        command = [sys.executable, "-c", FAKE_TRAINING, str(working_dir)]
        return budgeted_runs.train_within_budget(command, str(working_dir), budget, lambda message: None, poll=0.05)

    def epochs(working_dir):
        return len(json.loads((working_dir / "training_stats.json").read_text())["epochs"])

    assert run(tmp_path / "whole") == "time budget" and epochs(tmp_path / "whole") == 3
    assert run(tmp_path / "cut", budget=15) == "time budget" and epochs(tmp_path / "cut") == 1  # as if a session stopped it there
    assert run(tmp_path / "cut") == "time budget" and epochs(tmp_path / "cut") == 3
    assert run(tmp_path / "cut") == "time budget" and epochs(tmp_path / "cut") == 3  # used up: not started again


def test_a_run_without_a_time_budget_trains_until_it_ends_by_itself(tmp_path):
    """A run budgeted in batches (its epoch cap) has no time budget: 4 epochs of 10 s, which any
    budget under 40 s would have cut, and no wall-time limit either."""
    working_dir = tmp_path / "w"
    working_dir.mkdir()
    (working_dir / "hparams.json").write_text(json.dumps(Config().replace(max_epochs=4).to_flat()))
    command = [sys.executable, "-c", FAKE_TRAINING, str(working_dir), "4"]
    assert budgeted_runs.train_within_budget(command, str(working_dir), None, lambda m: None, poll=0.05) == "finished"
    assert len(json.loads((working_dir / "training_stats.json").read_text())["epochs"]) == 4
    assert budgeted_runs.budget_state(str(working_dir), command, None) == (True, False)


# A training that finishes one epoch, then fails with ``error`` on stderr and exit 1, as nmt.py does;
# its statistics complete and written as nmt.py writes them (atomically), so that the budget's poll
# never reads a statistics file other than a run's.
FAILING_TRAINING = """
import os, sys
from rnnpb_nmt.data.files import write_json
stats = {"epochs": [{"seconds": 10}], "best_epoch": 1, "best_dev_perplexity": 3.0, "waited": 0, "total_seconds": 10}
write_json(os.path.join(sys.argv[1], "training_stats.json"), stats)
sys.exit("error: " + sys.argv[2])
"""


def fail_training(working_dir, error):
    """train_within_budget of a FAILING_TRAINING with ``error`` in ``working_dir``, and what it logged."""
    os.makedirs(working_dir, exist_ok=True)
    (working_dir / "hparams.json").write_text(json.dumps(Config().to_flat()))
    said = []
    command = [sys.executable, "-c", FAILING_TRAINING, str(working_dir), error]
    return budgeted_runs.train_within_budget(command, str(working_dir), 600, said.append, poll=0.05), said


def test_a_diverged_run_is_a_stopped_run_of_the_grid_and_other_failures_raise(tmp_path):
    """A run whose loss went non-finite keeps its best epoch and is recorded as diverged, so that a
    learning-rate grid goes on to its other runs (one high rate must not end the grid with a
    traceback); any other failure still stops the script."""
    diverged = "training diverged: loss or gradient is not finite at epoch 2, step 52; the best weights so far are in b"
    stopped, said = fail_training(tmp_path / "diverged", diverged)
    assert stopped == "diverged" and said[-1].endswith("diverged; its best epoch so far is kept")
    record = budgeted_runs.training_record(["train"], str(tmp_path / "diverged"), stopped, 600)
    assert (record["stopped"], record["epochs"], record["best_epoch"]) == ("diverged", 1, 1)
    with pytest.raises(subprocess.CalledProcessError):
        fail_training(tmp_path / "other", "hparams.json: corrupted (no 'units')")


def test_jobs_run_at_once_each_pinned_to_a_core_of_its_own_with_the_processes_they_start():
    cores = budgeted_runs.cores()
    if len(cores) < 2 or not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs two cores and per-thread CPU affinity (Linux)")
    together = threading.Barrier(2, timeout=120)  # broken unless the first two items run at once
    running, most, lock = [0], [0], threading.Lock()

    def item(number):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        if number < 2:
            together.wait()
        child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, check=True)
        with lock:
            running[0] -= 1
        return number, sorted(os.sched_getaffinity(0)), json.loads(child.stdout)

    results = budgeted_runs.in_parallel(item, range(5), 2)
    assert [number for number, _, _ in results] == [0, 1, 2, 3, 4] and most[0] == 2
    assert all(len(mine) == 1 and mine[0] in cores[:2] and child == mine for _, mine, child in results)
    assert results[0][1] != results[1][1]  # the two at once, on two cores
    assert sorted(os.sched_getaffinity(0)) == cores  # the caller's own thread is not pinned


def test_a_failing_job_is_raised_after_the_running_ones_end():
    if len(budgeted_runs.cores()) < 2:
        pytest.skip("needs two cores")
    ended, together = [], threading.Barrier(2, timeout=120)

    def item(number):
        together.wait()  # both running before the first fails
        if number == 0:
            raise SystemExit("seed1: no epoch finished within 5 s of training")
        ended.append(number)
        return number

    with pytest.raises(SystemExit, match="seed1: no epoch finished"):
        budgeted_runs.in_parallel(item, [0, 1], 2)
    assert ended == [1]


@pytest.mark.parametrize("text", ["0", "-1", str(len(budgeted_runs.cores()) + 1)])
def test_more_jobs_than_cores_or_none_is_refused_naming_the_cores(text):
    with pytest.raises(Exception, match=f"{text}: from 1 to {len(budgeted_runs.cores())}, the cores this process may use"):
        budgeted_runs.job_count(text)

"""What the run scripts share: a kept test is reused only while it is of the run's weights and command."""

import json
import os
import sys


import budgeted_runs

from rnnpb_nmt.config import Config

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


def test_a_run_that_ignores_the_budgets_sigterm_is_killed(tmp_path):
    """The budget's SIGTERM, then SIGKILL after the grace: a stuck run cannot hold up the cells after it."""
    started = tmp_path / "started"
    stubborn = ("import pathlib, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                f"pathlib.Path({str(started)!r}).touch(); time.sleep(30)")
    said = []
    stopped = budgeted_runs.train_within_budget([sys.executable, "-c", stubborn], str(tmp_path / "w"), 3,
                                                said.append, grace=1)
    assert stopped and started.exists()
    assert said[-1].endswith("still running 1 s after SIGTERM; killed")

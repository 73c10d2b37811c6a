"""What the run scripts of trained-and-tested cells share (``run_transduction.py``,
``run_inflection.py``, ``run_question_formation.py``): data generators run once, training within
a time budget and what is recorded of it, tests whose files are kept under their own names, and
commands recorded relative to the current directory.

The time budget counts finished epochs (``training_stats.json``): training starts (or resumes)
only while one more epoch as long as the last fits, and is stopped with SIGTERM as soon as its
finished epochs leave no such room (the toolkit stops between steps; the partial epoch is lost,
the run stays resumable). Counting epochs, not the process's wall time (which also holds its
start-up, data loading and checkpoint writing), a run cut by a session's stop and resumed trains
the epochs an uninterrupted one does; until 2026-12-02 the budget was the wall time, and a
resumed run got the start-up time of its first process as more epochs. A run whose epochs never
use up the budget (one that hangs) is stopped ``WALL_LIMIT_FACTOR`` times the budget after it
started. A run still alive ``STOP_GRACE_SECONDS`` after the SIGTERM is killed: once (2026-11-24), a
SIGTERMed question-formation training slept without exiting and would have held up every cell
after it; a kill loses no more than the SIGTERM would (resuming after SIGKILL is tested,
``test_resume.py``).

``--jobs N`` trains N of a cell's members, restarts or runs at once (``in_parallel``), each pinned to
a core of its own, so that a time budget buys the same training as one run alone on its core.
"""

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
from rnnpb_nmt import registry  # noqa: E402
from rnnpb_nmt.errors import UserError  # noqa: E402
from rnnpb_nmt.run_stats import load_stats  # noqa: E402
from rnnpb_nmt.train import loop as training  # noqa: E402
from rnnpb_nmt.train import workdir  # noqa: E402

NMT = os.path.join(os.path.dirname(HERE), "nmt.py")
GENERATORS = os.path.join(os.path.dirname(HERE), "data")
# Time for a stopped run to finish its step and leave (a step of the largest cell takes seconds).
STOP_GRACE_SECONDS = 120
# How often a running training's finished epochs are read, in seconds (epochs take a minute or more).
POLL_SECONDS = 2
# A training is stopped this many times its budget after it started, whatever its epochs say.
WALL_LIMIT_FACTOR = 2
# How train_within_budget says a run stopped: the values of a record's "stopped".
FINISHED, BUDGET, DIVERGED = "finished", "time budget", "diverged"
# The start of nmt.py's one-line error when a loss or gradient is not finite (rnnpb_nmt/train/step.py).
DIVERGED_ERROR = "error: training diverged"


def generate_once(script, flags, last_file):
    """Run the data generator ``data/<script>`` with ``flags`` unless ``last_file``, the last file
    it writes, exists (an interrupted generation runs again); its command, for the record."""
    command = [sys.executable, os.path.join(GENERATORS, script), *flags]
    if not os.path.isfile(last_file):
        subprocess.run(command, check=True)
    return command


def cores():
    """The cores this process may run on (under ``taskset``, those it was given)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def whole_number(text):
    """A count or budget on the command line (``--restarts``, ``--train_seconds``, ``--batches``): a whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be a whole number above 0")
    return value


def job_count(text):
    """A ``--jobs`` value: how many runs at once, at most one a core of ``cores()``."""
    value, available = int(text), len(cores())
    if not 1 <= value <= available:
        raise argparse.ArgumentTypeError(f"{text}: from 1 to {available}, the cores this process may use")
    return value


def in_parallel(function, items, jobs=1):
    """``[function(item) for item in items]``, ``jobs`` items at a time. Each job's thread is pinned
    to a core of its own (where the system allows it), and the processes it starts inherit the pin
    (Linux keeps affinity per thread): one training per core, as when runs are started by hand under
    ``taskset``. A failing item's error is raised once the items running end as they would have
    (their training kept, resumable); the items still waiting are dropped."""
    if jobs == 1:
        return [function(item) for item in items]
    free = queue.SimpleQueue()
    for core in cores()[:jobs]:
        free.put(core)

    def pinned(item):
        core = free.get()
        try:
            if hasattr(os, "sched_setaffinity"):
                os.sched_setaffinity(0, {core})
            return function(item)
        finally:
            free.put(core)

    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(pinned, item) for item in items]
        try:
            return [future.result() for future in futures]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


def progress(working_dir, command=()):
    """(the run's training statistics or None, whether it is finished). A ``--max_epochs`` in the
    training ``command`` counts instead of the saved one, as for nmt.py: a run that reached its
    cap goes on under a larger one."""
    stats = load_stats(working_dir) if workdir.is_trained(working_dir) else None
    if not stats:
        return stats, False
    config = workdir.load_config(working_dir, registry.models())
    capped = [int(a.split("=", 1)[1]) for a in command if a.startswith("--max_epochs=")]
    return stats, training.is_finished(stats, config.replace(max_epochs=capped[-1]) if capped else config)


def remaining_seconds(stats, budget):
    """Seconds of ``budget`` left, 0 when one more epoch as long as the last would not fit (None: no
    time budget, as a run budgeted in batches has; its epoch cap ends it)."""
    if budget is None:
        return float("inf")
    if not stats:
        return budget
    left = budget - stats["total_seconds"]
    return left if left >= stats["epochs"][-1]["seconds"] else 0


def budget_state(working_dir, command, budget):
    """(whether the run finished by itself, whether the budget stopped it: its finished epochs leave
    no room for another within ``budget`` seconds), the one rule for starting a training and for
    stopping it."""
    stats, finished = progress(working_dir, command)
    return finished, not finished and remaining_seconds(stats, budget) <= 0


def used_up_while_training(working_dir, command, budget):
    """``budget_state``'s second answer for a run still training. Its statistics that do not read
    count as room left and are read again at the next poll: the toolkit replaces the file
    atomically, but a training that writes it in place can be caught mid-write (a test's fake
    training did, and failed 27 of 30 runs on a loaded core: issue 93)."""
    try:
        return budget_state(working_dir, command, budget)[1]
    except UserError:
        return False


def train_within_budget(command, working_dir, budget, log, grace=STOP_GRACE_SECONDS, poll=POLL_SECONDS):
    """Train (or resume) until the run finishes or its finished epochs leave no room for another
    within ``budget`` seconds; how it stopped: ``"finished"``, ``"time budget"`` (SIGTERM, then
    SIGKILL after ``grace`` seconds) or ``"diverged"`` (nmt.py's one-line error: a non-finite loss
    or gradient; its best epoch so far stays on disk, a restart of a grid like any other). Any
    other failure raises. A diverged run started again resumes from its last finished epoch and,
    training being repeatable, diverges there again."""
    finished, used_up = budget_state(working_dir, command, budget)
    if finished or used_up:
        return BUDGET if used_up else FINISHED
    log(" ".join(command))
    os.makedirs(working_dir, exist_ok=True)
    # The whole budget: start-up takes its time. A run without a time budget is never stopped.
    deadline = float("inf") if budget is None else time.monotonic() + WALL_LIMIT_FACTOR * budget
    with open(os.path.join(working_dir, "train_log.txt"), "a") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        while True:
            try:
                returncode = proc.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                used_up = used_up_while_training(working_dir, command, budget)
                overdue = time.monotonic() > deadline
                if not (used_up or overdue):  # training on within the budget, or finished and exiting
                    continue
                if not used_up:
                    log(f"{working_dir}: still training {WALL_LIMIT_FACTOR} times its budget of {budget} s after "
                        "it started; stopped")
                stop(proc, working_dir, log, grace)
                return BUDGET
    if returncode == 0:
        return FINISHED
    if last_line(os.path.join(working_dir, "train_log.txt")).startswith(DIVERGED_ERROR):
        log(f"{working_dir}: diverged; its best epoch so far is kept")
        return DIVERGED
    raise subprocess.CalledProcessError(returncode, command)


def last_line(path):
    """The last non-empty line of the text file at ``path`` ('' if none)."""
    with open(path, errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[-1] if lines else ""


def stop(proc, working_dir, log, grace):
    """SIGTERM (the toolkit stops between steps; the last finished epoch is kept), then SIGKILL."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        log(f"{working_dir}: still running {grace} s after SIGTERM; killed")
        proc.kill()
        proc.wait()


def training_record(command, working_dir, stopped, budget):
    """What a run script records of the training ``train_within_budget`` ran (``stopped``: how it
    stopped, as it returned); exits naming the directory when no epoch finished."""
    path = os.path.join(working_dir, "training_stats.json")
    if not os.path.isfile(path):
        within = "" if budget is None else f" within {budget} s of training (give more --train_seconds)"
        sys.exit(f"{working_dir}: no epoch finished{within}")
    with open(path) as f:
        stats = json.load(f)
    return {"working_dir": shown([working_dir]), "train_command": shown(command),
            "stopped": stopped, "epochs": len(stats["epochs"]),
            "best_epoch": stats["best_epoch"], "best_dev_perplexity": stats["best_dev_perplexity"],
            "train_seconds": round(stats["total_seconds"])}


def run_test(command, working_dir, name):
    """Run a ``--do_testing`` command writing into ``working_dir``; return its testing_stats.json,
    also kept as ``testing_stats_<name>.json`` (with the command) and the outputs as
    ``test_trans_<name>.txt`` (each test writes testing_stats.json and test_trans.txt anew).

    A kept test of the same command, newer than the run's last epoch, is returned as it is: a
    finished cell run again (to add restarts, or after an interruption) re-tests nothing."""
    kept = os.path.join(working_dir, f"testing_stats_{name}.json")
    current = current_test(kept, command, working_dir)
    if current is not None:
        return current
    os.makedirs(working_dir, exist_ok=True)
    with open(os.path.join(working_dir, f"test_log_{name}.txt"), "w") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=True)
    shutil.copy(os.path.join(working_dir, "test_trans.txt"), os.path.join(working_dir, f"test_trans_{name}.txt"))
    with open(os.path.join(working_dir, "testing_stats.json")) as f:
        stats = json.load(f)
    with open(kept, "w") as f:
        json.dump(dict(stats, command=command), f, indent=2)
    return stats


def current_test(kept, command, working_dir):
    """The statistics in ``kept`` if it holds a test by ``command`` of the run's weights as they
    are now (it was written after the run's last epoch; a directory without a training, e.g. an
    ensemble's, never has one); else None."""
    trained = os.path.join(working_dir, "training_stats.json")
    if not (os.path.isfile(kept) and os.path.isfile(trained)) or os.path.getmtime(kept) < os.path.getmtime(trained):
        return None
    with open(kept) as f:
        stats = json.load(f)
    if stats.pop("command", None) != command:
        return None
    return stats


def relative(argument):
    """A command's argument with its absolute path (bare, or a flag's value; a comma-separated
    list of paths too) relative to the current directory."""
    flag, _, value = argument.rpartition("=")
    if flag and os.path.isabs(value.split(",")[0]):
        return f"{flag}={','.join(os.path.relpath(v) for v in value.split(','))}"
    return os.path.relpath(argument) if os.path.isabs(argument) else argument


def shown(command):
    """A command as recorded: one string, its paths relative."""
    return " ".join(map(relative, command))

"""run_scripts/memory_init_study.py: its batches are the task's read-then-generate sequences, it
trains the toolkit's own memory LSTM with the initial biases of the flag it studies, and it scores
coarse and fine accuracy as §4.3 defines them."""

import subprocess
import sys

import numpy as np
import pytest

from helpers import ROOT

sys.path.insert(0, str(ROOT / "run_scripts"))
import memory_init_study as study  # noqa: E402


@pytest.mark.parametrize("size", [study.SMALL, study.Size(symbols=128, shortest=8, longest=20)])
def test_a_batch_is_source_separator_target_with_the_target_and_end_as_labels(size):
    inputs, labels = study.batch("reverse", np.random.default_rng(0), 20, size)
    for row, label in zip(inputs, labels):
        length = list(row).index(size.separator)
        source, target = list(row[:length]), list(row[length + 1:2 * length + 1])
        assert size.shortest <= length <= size.longest and target == source[::-1]
        assert all(0 <= symbol < size.symbols for symbol in source)
        assert all(row[2 * length + 1:] == size.pad)
        # the output at the separator and at each target symbol predicts the next target symbol, then <end>
        assert list(label[length:2 * length + 1]) == target + [size.end]
        assert (label[:length] == -1).all() and (label[2 * length + 1:] == -1).all()


def test_a_batch_keeps_to_a_shorter_longest_source():
    size = study.Size(shortest=3, longest=50)
    inputs, _ = study.batch("copy", np.random.default_rng(0), 200, size, longest=7)
    lengths = [list(row).index(size.separator) for row in inputs]
    assert min(lengths) == 3 and max(lengths) == 7


def test_the_curriculum_grows_the_longest_source_to_the_longest_and_stays_there():
    size = study.Size(shortest=8, longest=64)
    longest = [size.longest_at(step, 100) for step in range(1, 301)]
    # step 1: 8 + 4, and one step's growth of (64 - 12) / 100 rounded up
    assert longest[0] == 13 and longest[99] == 64 and set(longest[100:]) == {64}
    assert longest == sorted(longest)
    assert {size.longest_at(step, 0) for step in (1, 50)} == {64}  # no curriculum


def test_coarse_and_fine_accuracy_of_a_hand_worked_example():
    # two sequences; -1 marks positions without a label (the source), True there by construction
    labels = np.array([[-1, 5, 6, 7, 1], [-1, -1, 4, 1, -1]])
    right = np.array([[True, True, False, True, True], [True, True, True, True, True]])
    coarse, fine = study.accuracies(right, labels)
    assert coarse == 0.5
    # the first is right on 1 of its 4 targets before its first error, the second on 2 of 2
    assert fine == pytest.approx((1 / 4 + 2 / 2) / 2)


def test_a_short_study_reports_its_perplexity_and_accuracies():
    printed = []
    study.study("copy", "deque_lstm", "per_end", seed=1, steps=3, learning_rate=0.01, log=printed.append,
                curriculum=2, report_every=2)
    assert len(printed) == 2
    assert "copy deque_lstm --deque_biases=per_end lr 0.01 seed 1: after 2 steps" in printed[0]
    assert "after 3 steps" in printed[1]
    for line in printed:
        coarse = float(line.split("coarse ")[1].split(",")[0])
        fine = float(line.split("fine ")[1].split()[0])
        assert 0.0 <= coarse <= fine <= 1.0


@pytest.mark.parametrize("flags, message", [(["--lengths", "9", "3"], "--lengths 9 3: need 1 <= SHORTEST <= LONGEST"),
                                            (["--symbols", "0"], "must be positive")])
def test_an_impossible_problem_is_a_usage_error(flags, message):
    run = subprocess.run([sys.executable, str(ROOT / "run_scripts" / "memory_init_study.py"), "copy", *flags],
                         capture_output=True, text=True)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr

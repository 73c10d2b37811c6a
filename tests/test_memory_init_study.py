"""run_scripts/memory_init_study.py: its batches are the task's read-then-generate sequences, and
it trains the toolkit's own memory LSTM with the initial biases of the flag it studies."""

import sys

import numpy as np

from helpers import ROOT

sys.path.insert(0, str(ROOT / "run_scripts"))
import memory_init_study as study  # noqa: E402


def test_a_batch_is_source_separator_target_with_the_target_and_end_as_labels():
    inputs, labels = study.batch("reverse", np.random.default_rng(0), 20)
    for row, label in zip(inputs, labels):
        length = list(row).index(study.SEPARATOR)
        source, target = list(row[:length]), list(row[length + 1:2 * length + 1])
        assert 2 <= length <= 8 and target == source[::-1]
        assert all(row[2 * length + 1:] == study.PAD)
        # the output at the separator and at each target symbol predicts the next target symbol, then <end>
        assert list(label[length:2 * length + 1]) == target + [study.END]
        assert (label[:length] == -1).all() and (label[2 * length + 1:] == -1).all()


def test_a_short_study_reports_its_perplexity_and_coarse_accuracy():
    printed = []
    study.study("copy", "deque_lstm", "per_end", seed=1, steps=3, learning_rate=0.01, log=printed.append)
    assert len(printed) == 1 and "copy deque_lstm --deque_biases=per_end lr 0.01 seed 1: after 3 steps" in printed[0]
    coarse = float(printed[0].split("coarse ")[1].split()[0])
    assert 0.0 <= coarse <= 1.0

"""run_scripts/memory_init_study.py: its batches are the task's read-then-generate sequences, it
trains the toolkit's own memory LSTM with the initial biases of the flag it studies, and it scores
coarse and fine accuracy as §4.3 defines them."""

import re
import sys

import numpy as np
import pytest
import tensorflow as tf


import memory_init_study as study


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


@pytest.mark.slow  # traces and runs a whole study of a deque LSTM: about 8 s
def test_a_short_study_reports_its_perplexity_and_accuracies():
    printed = []
    study.study("copy", "deque_lstm", "per_end", seed=1, steps=3, learning_rate=0.01, log=printed.append,
                curriculum=2, report_every=2, show_ops=True)
    assert len(printed) == 4
    assert "copy deque_lstm --deque_biases=per_end lr 0.01 seed 1: after 2 steps" in printed[0]
    assert "after 3 steps" in printed[2]
    # per_end's initial biases, after 3 steps still near where they started: the top pushes about
    # half (sigmoid(0)) and hardly pops (sigmoid(-3) = 0.05), the bottom hardly pushes
    for line in printed[1::2]:
        first_half = line.split("source, first half: ")[1].split(";")[0]
        strengths = {name: float(value) for name, value in re.findall(r"(\w+ \(\w+\)) ([\d.]+)", first_half)}
        assert abs(strengths["push (top)"] - 0.5) < 0.1
        assert strengths["pop (top)"] < 0.1 and strengths["push (bottom)"] < 0.1
    for line in printed[::2]:
        coarse = float(line.split("coarse ")[1].split(",")[0])
        fine = float(line.split("fine ")[1].split()[0])
        assert 0.0 <= coarse <= fine <= 1.0


@pytest.mark.parametrize("flags, message", [(["--lengths", "9", "3"], "--lengths 9 3: need 1 <= SHORTEST <= LONGEST"),
                                            (["--symbols", "0"], "must be positive")])
def test_an_impossible_problem_is_a_usage_error(flags, message, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["memory_init_study.py", "copy", *flags])
    with pytest.raises(SystemExit) as stop:
        study.main()
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and "Traceback" not in err


def test_phases_split_the_source_in_halves_then_the_separator_and_the_target():
    size = study.SMALL
    s, p = size.separator, size.pad
    # sources of 3 and of 2 symbols: the first half is the first ceil(length / 2) symbols
    inputs = np.array([[1, 2, 3, s, 3, 2, 1], [4, 5, s, 5, 4, p, p]])
    np.testing.assert_array_equal(study.phases(inputs, size), [[0, 0, 1, 2, 3, 3, 3], [0, 1, 2, 3, 3, -1, -1]])


def test_strengths_by_phase_are_the_means_over_the_positions_of_each_phase():
    size = study.SMALL
    s = size.separator
    inputs = np.array([[1, 2, 3, 4, s, 4, 3, 2, 1]])
    operations = np.zeros((1, 9, 2, 1))
    operations[0, :2, 0] = 1.0  # pushes the first half of the source only
    operations[0, 5:, 1, 0] = [1.0, 1.0, 0.5, 0.5]  # pops while generating
    line = study.operations_by_phase(operations, inputs, size)
    assert line == ("  strengths: source, first half: push 1.00, pop 0.00; source, second half: push 0.00, pop 0.00; "
                    "separator: push 0.00, pop 0.00; target: push 0.00, pop 0.75")
    # A one-symbol source has no second half: its strengths are not a number, the others are.
    one = study.operations_by_phase(np.ones((1, 3, 2, 1)), np.array([[1, s, 1]]), size)
    assert "source, second half: push nan, pop nan; separator: push 1.00, pop 1.00" in one
    # The deque's two heads, top then bottom.
    assert "target: push (top) 0.00, pop (top) 0.75, push (bottom) 0.00, pop (bottom) 0.75" in \
        study.operations_by_phase(np.repeat(operations, 2, axis=3), inputs, size)


def test_separate_embeddings_move_the_target_symbols_alone_to_a_table_of_their_own(monkeypatch):
    size = study.SMALL
    s, p = size.separator, size.pad
    inputs = np.array([[1, 2, s, 2, 1, p]])
    moved = size.symbols + 3
    np.testing.assert_array_equal(study.separate_ids(inputs, size), [[1, 2, s, 2 + moved, 1 + moved, p]])
    tables = []

    class Recorded(tf.keras.layers.Embedding):
        """The study's embedding, keeping the ids its report looks up (eagerly: training's are traced)."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.looked_up = []
            tables.append(self)

        def call(self, inputs):
            if tf.executing_eagerly():
                self.looked_up.append(np.array(inputs))
            return super().call(inputs)

    monkeypatch.setattr(tf.keras.layers, "Embedding", Recorded)
    printed = []
    study.study("reverse", "stack_lstm", "same", seed=1, steps=2, learning_rate=0.01, log=printed.append,
                separate_embeddings=True)
    assert "after 2 steps" in printed[0]
    [table] = tables
    assert table.embeddings.shape[0] == 2 * moved  # the target symbols' block after the first
    [reported] = table.looked_up
    for row in reported:
        cut = list(row).index(s)
        target = row[cut + 1:][row[cut + 1:] != p]
        assert (row[:cut] < size.symbols).all() and len(target) and (target >= moved).all(), row

"""--epoch_examples: epochs of N pairs cut from a stream through the corpus; --batch_order=fixed:
one cycle of batches of one source length, made once."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rnnpb_nmt.config import Config, check_applicable
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train.curriculum import curriculum_indices
from rnnpb_nmt.train.epoch_length import fixed_epoch, fixed_order_batches, stream_indices


@given(st.integers(1, 40), st.integers(1, 60), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_consecutive_epochs_run_through_every_pass_in_its_own_order(n, size, passes, seed):
    epochs = -(-passes * n // size)  # enough epochs to cover the passes
    stream = [i for epoch in range(1, epochs + 1) for i in stream_indices(n, epoch, size, seed)]
    assert len(stream) == epochs * size
    for p in range(passes):
        assert sorted(stream[p * n:(p + 1) * n]) == list(range(n))  # each pass: every pair once
    # An epoch is a window of one stream (by its number alone): cut into epochs of one pair, the same stream
    one_by_one = [i for position in range(1, epochs * size + 1) for i in stream_indices(n, position, 1, seed)]
    assert stream == one_by_one


def test_the_passes_have_different_orders():
    stream = [i for epoch in range(1, 5) for i in stream_indices(50, epoch, 25, seed=3)]
    assert stream[:50] != stream[50:]
    assert stream_indices(0, 1, 5, seed=3) == []


def drawn(trainer, corpus, epoch):
    batches = trainer.epoch_batches(corpus, epoch, np.random.default_rng(0))
    return [int(i) for _, batch in batches for i in batch["index"].numpy()]


def test_the_trainer_trains_an_epoch_on_its_share_of_the_stream(setup):
    make_trainer, corpus = setup
    n = len(corpus.train_src)
    trainer = make_trainer(epoch_examples=n // 3 + 1)
    epochs = [drawn(trainer, corpus, epoch) for epoch in (1, 2, 3)]
    assert [sorted(e) for e in epochs] == [sorted(stream_indices(n, epoch, n // 3 + 1, 7)) for epoch in (1, 2, 3)]
    first_pass = [i for e in epochs for i in e]
    assert set(first_pass) == set(range(n))
    assert sorted(drawn(make_trainer(), corpus, 1)) == list(range(n))  # without it: one pass


def test_under_a_curriculum_the_stream_runs_through_the_pairs_it_keeps(setup):
    make_trainer, corpus = setup
    kept = set(curriculum_indices(corpus.train_src, 1, 3))
    assert len(kept) < len(corpus.train_src)
    pairs = drawn(make_trainer(epoch_examples=len(kept) + 5, curriculum_epochs=3), corpus, 1)
    assert set(pairs) == kept and len(pairs) == len(kept) + 5


@given(st.lists(st.integers(1, 6), max_size=60), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_fixed_order_batches_are_full_batches_of_one_length_and_leave_out_only_each_lengths_remainder(
        lengths, batch_size, seed):
    batches = fixed_order_batches(lengths, batch_size, seed)
    assert all(len(b) == batch_size and len({lengths[i] for i in b}) == 1 for b in batches)
    taken = [i for b in batches for i in b]
    assert len(taken) == len(set(taken))  # no pair twice
    for length in set(lengths):
        pairs = lengths.count(length)
        assert sum(lengths[i] == length for i in taken) == pairs - pairs % batch_size
    assert batches == fixed_order_batches(lengths, batch_size, seed)  # made by --seed alone


def test_fixed_order_batches_are_shuffled_across_lengths():
    batches = fixed_order_batches([1, 2, 3] * 40, 2, seed=5)
    assert [b[0] % 3 for b in batches] != sorted(b[0] % 3 for b in batches)


def test_fixed_epochs_go_round_the_one_cycle_where_the_last_epoch_stopped():
    cycle = [[0], [1], [2], [3], [4]]
    assert [fixed_epoch(cycle, e, 4, 2) for e in (1, 2, 3)] == [[[0], [1]], [[2], [3]], [[4], [0]]]
    assert fixed_epoch(cycle, 3, 0, 2) == cycle  # without --epoch_examples: a pass, in the same order
    assert fixed_epoch([], 1, 4, 2) == []


def test_the_trainer_with_fixed_order_trains_each_epoch_on_the_next_batches_of_the_cycle(setup):
    make_trainer, corpus = setup
    trainer = make_trainer(batch_order="fixed", batch_size=2, epoch_examples=6)
    cycle = fixed_order_batches([len(s) for s in corpus.train_src], 2, 7)
    for epoch in (1, 2):
        batches = trainer.epoch_batches(corpus, epoch, np.random.default_rng(0))
        assert [[int(i) for i in batch["index"].numpy()] for _, batch in batches] == fixed_epoch(cycle, epoch, 6, 2)


@pytest.mark.parametrize("flag", [{"batch_tokens": 100}, {"curriculum_epochs": 2},
                                  {"task": "transduction", "fresh_data": True}])
def test_fixed_order_refuses_the_batching_flags_it_leaves_no_room_for(flag):
    given = {"batch_order": "fixed", **flag}
    with pytest.raises(UserError, match=f"--{list(flag)[-1]}.*: not with --batch_order=fixed"):
        check_applicable(given, Config.from_flat(given))


def test_fixed_order_without_a_full_batch_of_any_length_says_so_in_one_line(setup):
    make_trainer, corpus = setup
    trainer = make_trainer(batch_order="fixed", batch_size=len(corpus.train_src) + 1)
    with pytest.raises(UserError, match="--batch_order=fixed: no source length has --batch_size="):
        list(trainer.epoch_batches(corpus, 1, np.random.default_rng(0)))

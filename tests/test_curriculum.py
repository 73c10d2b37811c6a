"""--curriculum_epochs: the first epochs train on the shorter pairs, growing to all of them."""

import math

import numpy as np
from hypothesis import given, strategies as st

from rnnpb_nmt.data.packed import pack
from rnnpb_nmt.train.curriculum import curriculum_indices, length_limit



@given(st.lists(st.integers(1, 200), min_size=1, max_size=50), st.integers(1, 30))
def test_the_limit_grows_each_epoch_from_above_the_shortest_to_the_longest_at_the_last_epoch(lengths, epochs):
    limits = [length_limit(lengths, epoch, epochs) for epoch in range(1, epochs + 5)]
    assert limits == sorted(limits)
    assert limits[epochs - 1:] == [max(lengths)] * 5
    assert limits[0] >= min(lengths)
    assert limits[0] > min(lengths) or min(lengths) == max(lengths)
    assert length_limit(lengths, 1, 0) == max(lengths)  # no curriculum


def test_an_epoch_keeps_the_short_pairs_in_corpus_order():
    src = [[1] * n for n in (8, 64, 20, 9, 40, 36)]
    # 8 + (64 - 8) * 1 / 4 = 22: the pairs of 8, 20 and 9 symbols
    assert curriculum_indices(src, 1, 4).tolist() == [0, 2, 3]
    assert curriculum_indices(src, 2, 4).tolist() == [0, 2, 3, 5]  # up to 36
    assert curriculum_indices(src, 4, 4).tolist() == curriculum_indices(src, 1, 0).tolist() == list(range(6))
    assert curriculum_indices([], 1, 4).tolist() == []


@given(st.lists(st.integers(1, 80), max_size=60), st.integers(1, 8), st.integers(0, 6))
def test_the_indices_of_the_packed_lengths_are_those_of_a_loop_over_the_sentences(lengths, epoch, epochs):
    """The vectorised indices: those a loop over the sentences takes (the code before issue 91), for
    lists of sentences and packed ones, as int32 (4 bytes a pair of a corpus of millions); the
    epoch's permutation of them is the one of the int64 numbers of before."""
    src = [np.arange(n, dtype=np.int32) for n in lengths]
    expected = []
    if lengths:
        shortest, longest = min(len(s) for s in src), max(len(s) for s in src)
        limit = longest if epochs == 0 or epoch >= epochs else shortest + math.ceil((longest - shortest) * epoch / epochs)
        expected = [i for i, s in enumerate(src) if len(s) <= limit]
    for sentences in (src, pack(src)):
        got = curriculum_indices(sentences, epoch, epochs)
        assert got.dtype == np.int32 and got.tolist() == expected
        for seed in range(3):
            permuted = [np.random.default_rng([seed, epoch]).permutation(numbers)
                        for numbers in (got, got.astype(np.int64))]
            assert permuted[0].tolist() == permuted[1].tolist()


def test_the_trainer_draws_an_early_epoch_from_the_short_pairs_only(setup):  # noqa: F811
    make_trainer, corpus = setup
    lengths = sorted(len(s) for s in corpus.train_src)
    limit = length_limit(lengths, 1, 3)
    assert lengths[0] < limit < lengths[-1]  # the demo corpus has pairs on both sides of the limit

    def drawn(trainer, epoch):
        batches = trainer.epoch_batches(corpus, epoch, np.random.default_rng(0))
        return sorted(int(i) for _, batch in batches for i in batch["index"].numpy())

    short = [i for i, s in enumerate(corpus.train_src) if len(s) <= limit]
    assert drawn(make_trainer(curriculum_epochs=3), 1) == short
    assert drawn(make_trainer(curriculum_epochs=3), 3) == drawn(make_trainer(), 1) == list(range(len(corpus.train_src)))

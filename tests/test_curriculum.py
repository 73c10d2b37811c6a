"""--curriculum_epochs: the first epochs train on the shorter pairs, growing to all of them."""

import numpy as np
from hypothesis import given, strategies as st

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
    assert curriculum_indices(src, 1, 4) == [0, 2, 3]
    assert curriculum_indices(src, 2, 4) == [0, 2, 3, 5]  # up to 36
    assert curriculum_indices(src, 4, 4) == curriculum_indices(src, 1, 0) == list(range(6))


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

"""--batch_tokens (issue 91): batches of similar lengths of at most N padded tokens, every pair once
an epoch, the same batches for the same seed."""

import numpy as np
from hypothesis import given, strategies as st

from rnnpb_nmt.data.dataset import padded_lengths, token_batches


def padded(batch, lengths):
    return len(batch) * max(lengths[i] for i in batch)


@given(st.lists(st.integers(1, 80), min_size=1, max_size=300), st.integers(1, 400), st.integers(1, 4),
       st.integers(0, 2**32 - 1))
def test_token_batches_hold_every_sentence_once_within_the_budget(lengths, max_tokens, replicas, seed):
    order = np.random.default_rng(seed).permutation(len(lengths))
    batches = token_batches(lengths, order, max_tokens, replicas, np.random.default_rng(seed))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches == token_batches(lengths, order, max_tokens, replicas, np.random.default_rng(seed))
    joined = [b for b in batches if len(b) % replicas]  # the last few sentences, with several replicas
    assert len(joined) <= (len(lengths) % replicas > 0)
    for b in batches:
        if len(b) > replicas and b not in joined:
            assert padded(b, lengths) <= max_tokens
        if replicas == 1 and padded(b, lengths) > max_tokens:
            assert len(b) == 1  # one over-long sentence: a batch of its own
        if len(lengths) >= replicas == 2:  # tf.distribute's split leaves no replica without a sentence
            assert len(b) >= 2


def test_the_same_seed_makes_the_same_batches_and_another_others():
    lengths = [1 + (i * 7) % 23 for i in range(200)]

    def batches(seed):
        rng = np.random.default_rng(seed)
        return token_batches(lengths, rng.permutation(200), 60, 1, rng)
    assert batches(1) == batches(1) and batches(1) != batches(2)


def epoch(trainer, corpus, number):
    """The batches of epoch ``number``: (sentence numbers, padded tokens of its widest column)."""
    return [(batch["index"].numpy().tolist(), max(int(np.prod(batch[k].shape)) for k in ("src", "tgt")))
            for _, batch in trainer.epoch_batches(corpus, number, np.random.default_rng(0))]


def test_the_trainer_batches_by_tokens_every_pair_once_an_epoch(setup):
    make_trainer, corpus = setup
    n = len(corpus.train_src)
    trainer = make_trainer(batch_tokens=60)
    first = epoch(trainer, corpus, 1)
    assert sorted(i for index, _ in first for i in index) == list(range(n))
    assert all(tokens <= 60 for _, tokens in first) and max(len(index) for index, _ in first) > 2
    assert first == epoch(make_trainer(batch_tokens=60), corpus, 1)  # repeatable
    assert first != epoch(trainer, corpus, 2) and first != epoch(make_trainer(batch_tokens=60, seed=8), corpus, 1)
    step = trainer.train_step(next(iter(trainer.dataset("parallel", corpus.train_src, corpus.train_tgt))))
    assert np.isfinite(float(step["loss"]))


def test_a_sentence_longer_than_the_budget_is_a_batch_of_its_own(setup):
    make_trainer, corpus = setup
    lengths = padded_lengths(corpus.train_src, corpus.train_tgt)
    limit = int(lengths.max()) - 1
    trainer = make_trainer(batch_tokens=limit)
    batches = epoch(trainer, corpus, 1)
    over = [index for index, tokens in batches if tokens > limit]
    assert over and all(len(index) == 1 and lengths[index[0]] > limit for index in over)
    assert sorted(i for index, _ in batches for i in index) == list(range(len(lengths)))
    for kind, batch in trainer.epoch_batches(corpus, 1, np.random.default_rng(0)):
        if batch["index"].shape[0] == 1 and lengths[int(batch["index"][0])] > limit:
            assert np.isfinite(float(trainer.train_step(batch, kind)["loss"]))
            break

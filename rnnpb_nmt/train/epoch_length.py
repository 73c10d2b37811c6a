"""Epochs of N training pairs (``--epoch_examples``), cut from a stream through the corpus.

Why it was built: everything that happens "every epoch" (the dev measurement, early stopping, the
checkpoints) happens once a pass, and a pass can be far longer than the interval a paper measured
at. McCoy et al.'s question-formation code measured dev accuracy every 1000 batches of 5 (5000
pairs) and stopped after 3 measurements without improvement, no earlier than 150 000 pairs; with
a pass of the 100 000 generated pairs as the unit, a restart could stop no earlier than 200 000
pairs and only at whole passes (notes/question_formation.md). With ``--epoch_examples=5000`` and
``--min_epochs=30`` an epoch is their measurement interval.
"""

import numpy as np

# Apart from every other stream seeded by --seed (an epoch's batch order, its noise).
STREAM = 0x5EED


def stream_indices(n, epoch, size, seed):
    """The numbers (of ``n`` training pairs) epoch ``epoch`` (1-based) trains on when an epoch is
    ``size`` pairs: positions (epoch - 1) * size to epoch * size - 1 of a stream through the corpus
    pass after pass, pass k in the order of a permutation seeded by ``seed`` and k. So every pair is
    trained on once a pass, as with whole-pass epochs, and the epoch is a function of its number:
    a resumed run trains on what the uninterrupted one did. An epoch longer than a pass has a pair
    more than once."""
    if n == 0:
        return []
    taken, start, end = [], (epoch - 1) * size, epoch * size
    while start < end:
        stream_pass, offset = divmod(start, n)
        order = np.random.default_rng([seed, stream_pass, STREAM]).permutation(n)
        part = order[offset:offset + end - start]
        taken.extend(int(i) for i in part)
        start += len(part)
    return taken


# Apart from the stream above and every other stream seeded by --seed.
FIXED = 0xF1ED


def fixed_order_batches(lengths, batch_size, seed):
    """The batches of --batch_order=fixed, as McCoy et al.'s code made them once before training:
    the pairs of each source length (``lengths``, one a pair) in an order seeded by ``seed``, cut into
    batches of ``batch_size`` (lists of pair numbers), a length's last unfinished batch left out;
    then the batches in one shuffled order. Their epochs cycle through it (``fixed_epoch``)."""
    rng = np.random.default_rng([seed, FIXED])
    lengths = np.asarray(lengths)
    batches = []
    for length in np.unique(lengths):
        same = rng.permutation(np.flatnonzero(lengths == length))
        batches += [same[i:i + batch_size].tolist() for i in range(0, len(same) - batch_size + 1, batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def fixed_epoch(batches, epoch, size, batch_size):
    """The batches (of the cycle ``batches``) epoch ``epoch`` (1-based) trains on: one pass through
    them, or with an epoch of ``size`` pairs (--epoch_examples) the next size / batch_size of them,
    where the epoch before stopped, round and round in the same order."""
    if not batches or not size:
        return list(batches)
    count = max(1, size // batch_size)
    return [batches[i % len(batches)] for i in range((epoch - 1) * count, epoch * count)]

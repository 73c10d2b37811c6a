"""A length curriculum (``--curriculum_epochs``): the first epochs train on the shorter pairs only.

Why it was built: a Stack-LSTM reverses a sequence by pushing every source symbol and popping one
per target symbol, and it learns this from the top of the stack down: the first target symbols,
which need only the last pushes, come first, and each deeper one needs the strengths of every push
and pop above it near 0 or 1. On the transduction cells' sources of 8-64 symbols that took the
reversal cell its whole time budget (Grefenstette et al. trained "an unbounded number of steps"),
and short pairs first might let it sharpen its strengths where sequences are shallow. Kept as a
flag, off by default, so that the measurement can be repeated and other tasks tried; not the
papers' training. What it did: run_scripts/results/notes/transduction.md (the length curriculum).
"""

import math

import numpy as np

from rnnpb_nmt.data import packed


def length_limit(lengths, epoch, epochs):
    """The longest source that epoch ``epoch`` (1-based) of a curriculum of ``epochs`` trains on:
    the shortest of ``lengths`` (a sequence or an array) plus (longest - shortest) / ``epochs`` per
    epoch (rounded up), so that epoch ``epochs`` and every later one reach the longest; with
    ``epochs`` 0, the longest from the start."""
    shortest, longest = int(np.min(lengths)), int(np.max(lengths))
    if epochs == 0 or epoch >= epochs:
        return longest
    return shortest + math.ceil((longest - shortest) * epoch / epochs)


def curriculum_indices(src, epoch, epochs):
    """The numbers (in corpus order) of the training pairs epoch ``epoch`` trains on: those whose
    source (of ``src``, the encoded sources) is at most ``length_limit`` long. Numbers, not
    copies, so that a batch still names each pair by its place in the corpus (a bound model's
    per-sentence PBs are looked up by it), and the epoch's shuffle, seeded by the epoch, is the
    same whether or not training was interrupted. An int32 array, computed from the lengths at
    once (a packed corpus of millions of pairs has them as a vector)."""
    lengths = packed.lengths(src)
    if len(lengths) == 0:
        return np.zeros([0], np.int32)
    return np.flatnonzero(lengths <= length_limit(lengths, epoch, epochs)).astype(np.int32)

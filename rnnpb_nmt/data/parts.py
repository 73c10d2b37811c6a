"""A corpus file read in parts, in worker processes (issue 91, ``--prepare_workers``).

A file is cut into parts of whole lines (``line_parts``); each part's sentences become a ``Draft``
(tokenized once, each word a provisional id), written to a shard file of its own, in a worker
process or in this one; ``Drafted`` then merges the parts' word counts (in order of first
occurrence in the file, as one ``Draft`` of the whole file has them) and encodes the shards, one at
a time, into the corpus's arrays. So the ids and vocabularies are those of the file read in one
piece, whatever the number of workers, and memory holds one part's draft at a time beside the
encoded output. Parts are at most ``MAX_PART_BYTES`` of text, so that a worker's draft does not
grow with the corpus, and at least ``MIN_PART_BYTES``, so that small files take no process.
"""

import collections
import contextlib
import multiprocessing
import os
import tempfile

import numpy as np

from rnnpb_nmt.data.packed import COUNT_CHUNK, Draft, PackedSentences, VectorFile, encoding_table, write_vector

MAX_PART_BYTES = 64 << 20
MIN_PART_BYTES = 4 << 20
SCAN_BYTES = 1 << 20  # read at a time while counting lines

# Bytes ``start`` to ``stop`` (excluded) of a file, whole lines, the first of them line ``before`` + 1.
Part = collections.namedtuple("Part", "start stop before")


def workers(setting):
    """The worker processes of ``--prepare_workers`` (0: up to 4, as the machine has CPUs)."""
    return setting or min(4, os.cpu_count() or 1)


def line_parts(path, count):
    """``path`` cut into about ``count`` parts of whole lines of about equal bytes (fewer for a file
    of fewer lines); ``[None]`` (the whole file) for one part, or a file that is missing or empty,
    whose reading reports it."""
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    if count <= 1 or size == 0:
        return [None]
    cuts = [0]
    with open(path, "rb") as f:
        for k in range(1, count):
            f.seek(max(cuts[-1], size * k // count))
            f.readline()  # to the start of the next line
            if f.tell() >= size:
                break
            cuts.append(f.tell())
        befores = np.cumsum([0] + [_newlines(f, a, b) for a, b in zip(cuts, cuts[1:])]).tolist()
    return [Part(a, b, before) for a, b, before in zip(cuts, cuts[1:] + [size], befores)]


def _newlines(f, start, stop):
    f.seek(start)
    return sum(f.read(min(SCAN_BYTES, stop - k)).count(b"\n") for k in range(start, stop, SCAN_BYTES))


def _draft_part(job):
    """A worker's job: the ``Draft`` of one part (``read(path, side, part)``'s sentences), its ids
    and lengths written to the shard ``prefix``; returns its counts and sentences."""
    read, path, side, part, prefix = job
    draft = Draft(read(path, side, part))
    np.save(f"{prefix}.ids.npy", draft.ids)
    np.save(f"{prefix}.lengths.npy", np.diff(draft.offsets).astype(np.int32))
    return draft.counts(), len(draft)


class Drafter:
    """Reads files into ``Drafted``s: ``drafter(read, path, side)``. A context (its shards are
    temporary files, its workers a pool started when a file has more than one part and ended on
    leaving); ``count`` worker processes, 1 for reading in this process."""

    def __init__(self, count):
        self.count, self._pool, self._stack = count, None, contextlib.ExitStack()

    def __enter__(self):
        self.directory = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="rnnpb-prepare-"))
        self._shards = 0
        return self

    def __exit__(self, *failure):
        return self._stack.__exit__(*failure)

    def __call__(self, read, path, side):
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        wanted = max(-(-size // MAX_PART_BYTES), min(self.count, size // MIN_PART_BYTES))
        jobs = []
        for part in line_parts(path, wanted):
            self._shards += 1
            jobs.append((read, path, side, part, os.path.join(self.directory, str(self._shards))))
        parallel = self.count > 1 and len(jobs) > 1
        # In order: the first part with an error has the file's first error.
        return Drafted([job[-1] for job in jobs], list((self._workers().imap if parallel else map)(_draft_part, jobs)))

    def _workers(self):
        if self._pool is None:  # spawned: safe whatever threads TensorFlow runs in this process
            pool = multiprocessing.get_context("spawn").Pool(self.count)
            self._pool = self._stack.enter_context(pool)
        return self._pool


class Drafted:
    """A file read in parts (``Drafter``): ``len``, ``counts()`` and ``encode(vocab)`` as a ``Draft``
    of the whole file has them."""

    def __init__(self, shards, results):
        self.shards = shards
        self.part_counts = [counts for counts, _ in results]
        self.sentences = sum(n for _, n in results)

    def __len__(self):
        return self.sentences

    def counts(self):
        merged = {}  # words in order of first occurrence: part by part, in each in its order
        for counts in self.part_counts:
            for word, count in counts.items():
                merged[word] = merged.get(word, 0) + count
        return merged

    def encode(self, vocab, on_disk=False):
        """The ``PackedSentences`` of the file in ``vocab``'s ids, encoded a chunk of a shard at a time:
        in memory, or ``on_disk``, written to a temporary directory as it is encoded and read from
        there (the directory is removed when the sentences are no longer used)."""
        lengths = np.concatenate([np.load(f"{s}.lengths.npy") for s in self.shards])
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
        chunks = (table[part[k:k + COUNT_CHUNK]]
                  for table, part in ((encoding_table(counts, vocab), VectorFile(f"{shard}.ids.npy"))
                                      for shard, counts in zip(self.shards, self.part_counts))
                  for k in range(0, len(part), COUNT_CHUNK))
        if not on_disk:
            return PackedSentences(np.concatenate([np.zeros([0], np.int32), *chunks]), offsets)
        directory = tempfile.TemporaryDirectory(prefix="rnnpb-corpus-")
        prefix = os.path.join(directory.name, "sentences")
        write_vector(f"{prefix}.ids.npy", np.int32, int(offsets[-1]), chunks)
        write_vector(f"{prefix}.offsets.npy", np.int64, len(offsets), [offsets])
        return PackedSentences.load(prefix, owner=directory)

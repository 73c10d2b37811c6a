"""Encoded sentences packed into two arrays (issue 91): a corpus of millions of sentences in memory
that grows with its tokens only, or read from ``.npy`` files through a memory map.

``PackedSentences`` is the sequence of per-sentence id arrays (each ending in ``<end>``) that
``encode_all`` makes as a list: ``len``, ``s[i]`` (a view, no copy), iteration and contiguous
slices; ``lengths`` gives every sentence's length at once. Behind it are one flat int32 array of
the ids of every sentence, one after another, and an int64 array of where each starts (one more
entry: where the last ends).

``Draft`` is the first pass over a file: each token as a provisional id (its rank of first
occurrence in the file), so that the file is tokenized once; ``encode(vocab)`` then maps the
provisional ids to the vocabulary's, which ``counts()`` builds.
"""

import array

import numpy as np

from rnnpb_nmt.data.files import atomic_file
from rnnpb_nmt.data.vocabulary import END_ID, UNK_ID
from rnnpb_nmt.errors import UserError

COUNT_CHUNK = 1 << 20  # ids counted at a time: bounds the temporary arrays of counting


class PackedSentences:
    """Encoded sentences: ``ids`` (int32, all sentences one after another) and ``offsets`` (int64,
    where each sentence starts, and where the last ends)."""

    def __init__(self, ids, offsets):
        self.ids, self.offsets = ids, offsets

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise TypeError("PackedSentences: only contiguous slices")
            return PackedSentences(self.ids, self.offsets[start:max(start, stop) + 1])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"sentence {i} of {n}")
        i = i % n
        return self.ids[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def lengths(self):
        """Every sentence's length (``<end>`` included), int64."""
        return np.diff(self.offsets)

    def save(self, prefix):
        """Write ``<prefix>.ids.npy`` and ``<prefix>.offsets.npy``, each atomically."""
        for name, values in (("ids", self.ids), ("offsets", self.offsets)):
            with atomic_file(f"{prefix}.{name}.npy", binary=True) as f:
                np.save(f, values)

    @classmethod
    def load(cls, prefix):
        """The sentences ``save(prefix)`` wrote, memory-mapped (read-only): memory does not grow
        with the corpus. A file that is missing or not what ``save`` writes is a UserError."""
        arrays = []
        for name, dtype in (("ids", np.int32), ("offsets", np.int64)):
            path = f"{prefix}.{name}.npy"
            try:
                values = np.load(path, mmap_mode="r")
            except (OSError, ValueError) as e:
                raise UserError(f"{path}: corrupted ({e})") from None
            if values.dtype != dtype or values.ndim != 1:
                raise UserError(f"{path}: corrupted (not a vector of {np.dtype(dtype).name})")
            arrays.append(values)
        ids, offsets = arrays
        if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(ids):
            raise UserError(f"{prefix}.offsets.npy: corrupted (does not match {prefix}.ids.npy)")
        return cls(*arrays)


def lengths(sentences):
    """The lengths of encoded sentences (a ``PackedSentences`` or a list of arrays), int64."""
    if isinstance(sentences, PackedSentences):
        return sentences.lengths
    return np.array([len(s) for s in sentences], np.int64)


def pack(sentences):
    """A ``PackedSentences`` of encoded sentences (one already, or a list of id arrays)."""
    if isinstance(sentences, PackedSentences):
        return sentences
    offsets = np.concatenate([[0], np.cumsum(lengths(sentences))]).astype(np.int64)
    return PackedSentences(np.concatenate(list(sentences) or [np.zeros([0], np.int32)]).astype(np.int32), offsets)


class Draft:
    """A file's sentences (token lists, ``sentences``) read once: each token as its provisional id
    (the order of first occurrence in the file) and ``<end>`` as -1, growing in compact buffers."""

    def __init__(self, sentences):
        index, ids, offsets = {}, array.array("i"), array.array("q", [0])
        for tokens in sentences:
            ids.extend([index.setdefault(t, len(index)) for t in tokens])
            ids.append(-1)
            offsets.append(len(ids))
        self.words = list(index)  # by provisional id
        self.ids, self.offsets = np.frombuffer(ids, np.int32), np.frombuffer(offsets, np.int64)

    def __len__(self):
        return len(self.offsets) - 1

    def counts(self):
        """{word: occurrences}, words in order of first occurrence (what ``Vocabulary.from_counts``
        takes)."""
        counts = np.zeros(len(self.words), np.int64)
        for k in range(0, len(self.ids), COUNT_CHUNK):
            chunk = self.ids[k:k + COUNT_CHUNK]
            counts += np.bincount(chunk[chunk >= 0], minlength=len(self.words))
        return dict(zip(self.words, counts.tolist()))

    def encode(self, vocab):
        """The ``PackedSentences`` of these sentences in ``vocab``'s ids (unknown words ``<unk>``)."""
        # The table's last entry is <end>'s: the -1 that ends each sentence indexes it.
        table = np.array([vocab.stoi.get(w, UNK_ID) for w in self.words] + [END_ID], np.int32)
        return PackedSentences(table[self.ids], self.offsets)

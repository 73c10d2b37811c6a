"""Encoded sentences packed into two arrays (issue 91): a corpus of millions of sentences in memory
that grows with its tokens only, or read from ``.npy`` files as it is used.

``PackedSentences`` is the sequence of per-sentence id arrays (each ending in ``<end>``) that
``encode_all`` makes as a list: ``len``, ``s[i]``, iteration and contiguous slices; ``lengths``
gives every sentence's length at once, ``gather`` the ids of many sentences. Behind it are one flat
int32 vector of the ids of every sentence, one after another, and an int64 vector of where each
starts (one more entry: where the last ends): numpy arrays, or ``VectorFile``s, which read what is
asked of them with positioned reads, so that a corpus on disk takes no memory while training (a
memory map's pages, once read, would stay in the process's resident memory: ``ru_maxrss`` grew
with the corpus by them).

``Draft`` is the first pass over a file: each token as a provisional id (its rank of first
occurrence in the file), so that the file is tokenized once; ``encode(vocab)`` then maps the
provisional ids to the vocabulary's, which ``counts()`` builds.
"""

import array
import os
import weakref

import numpy as np

from rnnpb_nmt.data.files import atomic_file
from rnnpb_nmt.data.vocabulary import END_ID, UNK_ID
from rnnpb_nmt.errors import UserError

COUNT_CHUNK = 1 << 20  # ids (or sentences) taken at a time: bounds the temporary arrays of counting
COPY_BYTES = 1 << 24
HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


class VectorFile:
    """The vector of a ``.npy`` file, read by positioned reads (``os.pread``) as it is asked:
    ``len``, ``v[i]``, ``v[a:b]`` (a numpy array) and ``ranges``. The file is opened once, here, and
    read through that descriptor: reads share no file position, so that threads (``tf.data`` runs a
    batch's gather on several) and forked children may read at once, and the file stays readable
    when it is moved (``--start_over`` moves the old run aside while a run reads its prepared/)."""

    def __init__(self, path, owner=None):
        self.path, self.owner = path, owner  # owner: kept alive while this is (a temporary directory)
        with open(path, "rb") as f:
            header = HEADERS.get(np.lib.format.read_magic(f))
            if header is None:
                raise ValueError("not a .npy version np.save writes")
            shape, fortran, self.dtype = header(f)
            self.start = f.tell()  # of the data
        if len(shape) != 1 or fortran or self.dtype.hasobject:
            raise ValueError("not a vector")
        self.size, self.end = shape[0], self.start + shape[0] * self.dtype.itemsize
        if os.path.getsize(path) < self.end:
            raise ValueError("cut short")
        self._fd = os.open(path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._fd)

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self.size)
            if step != 1:
                raise TypeError("VectorFile: only contiguous slices")
            return self.ranges(np.array([start]), np.array([max(start, stop)]))
        if not -self.size <= i < self.size:
            raise IndexError(f"element {i} of {self.size}")
        return self.ranges(np.array([i % self.size]), np.array([i % self.size + 1]))[0]

    def ranges(self, starts, stops):
        """Elements ``starts[k]`` to ``stops[k]`` (excluded) for every k, one range after another."""
        fd, size = self._fd, self.dtype.itemsize
        chunks = [os.pread(fd, (b - a) * size, self.start + a * size) for a, b in zip(starts.tolist(), stops.tolist())]
        if sum(map(len, chunks)) != int(np.sum(stops - starts)) * size:
            raise UserError(f"{self.path}: corrupted (cut short while being read)")
        return np.frombuffer(b"".join(chunks), self.dtype)

    def copy_to(self, f):
        """Write the ``.npy`` file (its header and data) into the open file ``f``, a chunk at a time."""
        for at in range(0, self.end, COPY_BYTES):
            f.write(os.pread(self._fd, min(COPY_BYTES, self.end - at), at))


def ranges(values, starts, stops):
    """``values[starts[k]:stops[k]]`` for every k, one range after another: ``values`` a numpy array
    (one gather) or a ``VectorFile`` (a read a range)."""
    if isinstance(values, VectorFile):
        return values.ranges(starts, stops)
    sizes = stops - starts
    return values[np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(np.sum(sizes))]


class PackedSentences:
    """Encoded sentences: ``ids`` (int32, all sentences one after another) and ``offsets`` (int64,
    where each sentence starts, and where the last ends), numpy arrays or ``VectorFile``s."""

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
        start, stop = self.offsets[i % n:i % n + 2]
        return self.ids[start:stop]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def lengths(self):
        """Every sentence's length (``<end>`` included), int32; the offsets read a chunk at a time."""
        found = np.empty(len(self), np.int32)
        for k in range(0, len(self), COUNT_CHUNK):
            found[k:k + COUNT_CHUNK] = np.diff(self.offsets[k:k + COUNT_CHUNK + 1])
        return found

    def gather(self, index):
        """(the lengths of the sentences numbered ``index``, int64; their ids one after another)."""
        index = np.asarray(index, np.int64)
        bounds = ranges(self.offsets, index, index + 2).reshape(-1, 2)
        return bounds[:, 1] - bounds[:, 0], ranges(self.ids, bounds[:, 0], bounds[:, 1])

    def save(self, prefix):
        """Write ``<prefix>.ids.npy`` and ``<prefix>.offsets.npy``, each atomically (a ``VectorFile``'s
        file copied as it is, a chunk at a time)."""
        for name, values in (("ids", self.ids), ("offsets", self.offsets)):
            with atomic_file(f"{prefix}.{name}.npy", binary=True) as f:
                if isinstance(values, VectorFile):
                    values.copy_to(f)
                else:
                    np.save(f, values)

    @classmethod
    def load(cls, prefix, owner=None):
        """The sentences ``save(prefix)`` wrote, read from the files as they are used
        (``VectorFile``s, kept with ``owner``): memory does not grow with the corpus. A file that is
        missing or not what ``save`` writes is a UserError."""
        arrays = []
        for name, dtype in (("ids", np.int32), ("offsets", np.int64)):
            path = f"{prefix}.{name}.npy"
            try:
                values = VectorFile(path, owner)
            except (OSError, ValueError) as e:
                raise UserError(f"{path}: corrupted ({e})") from None
            if values.dtype != dtype:
                raise UserError(f"{path}: corrupted (not a vector of {np.dtype(dtype).name})")
            arrays.append(values)
        ids, offsets = arrays
        if len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(ids):
            raise UserError(f"{prefix}.offsets.npy: corrupted (does not match {prefix}.ids.npy)")
        return cls(*arrays)


def write_vector(path, dtype, size, chunks):
    """Write the ``.npy`` file ``np.save`` writes of a vector of ``size`` elements of ``dtype``, its
    elements given a chunk (an array) at a time, so that the vector is never in memory whole."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": (size,)})
        written = 0
        for chunk in chunks:
            f.write(np.asarray(chunk, dtype).tobytes())
            written += len(chunk)
    assert written == size, f"{path}: {written} of {size} elements"


def lengths(sentences):
    """The lengths of encoded sentences (a ``PackedSentences`` or a list of arrays), int32."""
    if isinstance(sentences, PackedSentences):
        return sentences.lengths
    return np.array([len(s) for s in sentences], np.int32)


def pack(sentences):
    """A ``PackedSentences`` of encoded sentences (one already, or a list of id arrays)."""
    if isinstance(sentences, PackedSentences):
        return sentences
    offsets = np.concatenate([[0], np.cumsum(lengths(sentences), dtype=np.int64)])
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
        return PackedSentences(encoding_table(self.words, vocab)[self.ids], self.offsets)


def encoding_table(words, vocab):
    """A draft's provisional ids (of ``words``, in their order) -> ``vocab``'s ids, as an array to
    index by them. Its last entry is ``<end>``'s: the -1 that ends each sentence indexes it."""
    return np.array([vocab.stoi.get(w, UNK_ID) for w in words] + [END_ID], np.int32)

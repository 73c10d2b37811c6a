"""Reading tokenized text files and turning them into padded ``tf.data`` batches.

A batch is a dict: ``index`` (B,) the sentence numbers in their file (the RNNPB looks up its PB
rows with them), ``src`` and ``tgt`` (B, T) word ids with ``<end>`` appended and ``<pad>`` (0)
after it. Models derive decoder inputs by shifting in ``<start>``.
"""

import os

import numpy as np
import tensorflow as tf

from rnnpb_nmt.data import packed
from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID
from rnnpb_nmt.errors import UserError


BUCKET_BOUNDARIES = [6, 8, 10, 12, 15, 20, 30, 50]


def read_lines(path, part=None):
    """The lines of a UTF-8 text file (LF or CRLF, optional BOM): (line number, text) pairs; of
    ``part`` of it only (a ``parts.Part``: whole lines, numbered as in the file), if given.

    Raises a UserError naming the file for a missing or empty file, and file and line for
    undecodable bytes. Lines are read and decoded one at a time as they are taken (memory does not
    grow with the file), so a caller that checks each line reports the file's first problem,
    whichever kind it is.
    """
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file")
    start, stop, before = part or (0, None, 0)
    number = before
    with open(path, "rb") as f:
        f.seek(start)
        for number, line in enumerate(_lines_before(f, stop), start=before + 1):  # lines end at b"\n" only
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if line.endswith(b"\n"):
                line = line[:-1]
            elif line in (b"", b"\r"):  # a last line of a BOM alone or a lone CR (a CRLF cut short) is no line
                number -= 1
                break
            try:
                yield number, line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise UserError(f"{path}:{number}: not valid UTF-8 (byte {e.start})") from None
    if number == 0:
        raise UserError(f"{path}: file is empty")


def _lines_before(f, stop):
    """The lines of the open file ``f`` from where it is to byte ``stop`` (a line's end; None: the end)."""
    left = float("inf") if stop is None else stop - f.tell()
    for line in f:
        if left <= 0:
            return
        yield line
        left -= len(line)


def read_sentences(path, tokenize=str.split):
    """Read one tokenized sentence per line (see ``read_lines``) as token lists, or as the lists
    ``tokenize(line)`` makes of raw lines (``rnnpb_nmt.data.text``).

    An empty line is a UserError naming file and line: an empty sentence in a corpus is almost
    always a broken file.
    """
    return list(iter_sentences(path, tokenize))


def iter_sentences(path, tokenize=str.split, part=None):
    """``read_sentences``'s token lists one at a time, as the file is read (``part`` of it: see
    ``read_lines``)."""
    for number, text in read_lines(path, part):
        tokens = tokenize(text)
        if not tokens:
            raise UserError(f"{path}:{number}: empty line")
        yield tokens


def read_parallel(path1, path2, read1=read_sentences, read2=read_sentences):
    """Read two line-aligned files (with ``read1(path1)`` and ``read2(path2)``); a different number
    of lines is an error naming both."""
    side1, side2 = read1(path1), read2(path2)
    check_aligned(path1, len(side1), path2, len(side2))
    return side1, side2


def check_aligned(path1, lines1, path2, lines2):
    """A UserError naming both files unless they have as many lines."""
    if lines1 != lines2:
        raise UserError(f"{path1} has {lines1} lines but {path2} has {lines2}: parallel files must be line-aligned")


def encode_all(vocab, sentences):
    """Sentences as id arrays with ``<end>`` appended (the form every batch carries)."""
    return [np.array(vocab.encode(s) + [END_ID], dtype=np.int32) for s in sentences]


def _examples(src, tgt, flat, sizes):
    """A dataset of batches: the ``index``, ``src`` (and ``tgt``) of the sentences numbered ``flat``,
    cut into batches of ``sizes`` sentences, each side padded with ``<pad>`` to its longest.

    Each batch is gathered from the sides' ids as it is taken (for a corpus prepared on disk, read
    from its files): TensorFlow holds no copy of a side, so memory does not grow with the corpus
    but by the epoch's sentence numbers (int32)."""
    sides = _sides(src, tgt)

    def gather(index):
        return [padded_rows(side, index) for side in sides.values()]

    def batch(index):
        rows = tf.numpy_function(gather, [index], [tf.int32] * len(sides))
        return {"index": index, **{k: tf.ensure_shape(r, [None, None]) for k, r in zip(sides, rows)}}
    ragged = tf.RaggedTensor.from_row_lengths(np.asarray(flat, np.int32), np.asarray(sizes, np.int64))
    return tf.data.Dataset.from_tensor_slices(ragged).map(batch).prefetch(tf.data.AUTOTUNE)


def _sides(src, tgt):
    """{"src": src (and "tgt": tgt)} packed (``packed.pack``)."""
    return {"src": packed.pack(src), **({"tgt": packed.pack(tgt)} if tgt is not None else {})}


def padded_rows(sentences, index):
    """The sentences (a ``PackedSentences``) numbered ``index`` as an int32 matrix, one a row, padded
    with ``<pad>`` to the longest of them (``PackedSentences.gather``: one gather in memory, a read
    a sentence from a file)."""
    lengths, ids = sentences.gather(index)
    inside = np.arange(lengths.max(initial=0)) < lengths[:, None]
    rows = np.full(inside.shape, PAD_ID, np.int32)
    rows[inside] = ids  # row by row, as the sentences follow each other in ids
    return rows


def make_dataset(src, tgt=None, batch_size=64, order=None, bucket=False, batches=None):
    """Padded batches of encoded sentences (see the module docstring for the batch layout).

    ``tgt`` may be None for monolingual or test data. Sentences are taken in file order, or in
    ``order`` (a permutation of the sentence numbers); either way each batch carries its
    sentences' numbers in the file. With ``bucket`` (training) batches are drawn from length
    buckets (``bucket_batches``); otherwise they are consecutive. ``batches`` (lists of sentence
    numbers, as ``token_batches`` makes) gives the batches themselves, in their order, instead.
    """
    if batches is not None:
        flat = np.concatenate(batches) if batches else np.zeros([0], np.int32)
        return _examples(src, tgt, flat, [len(b) for b in batches])
    order = np.arange(len(src), dtype=np.int32) if order is None else np.asarray(order, np.int32)
    if bucket:
        # Batches of similar lengths waste less time on padding; the order stays random.
        return _examples(src, tgt, *bucket_batches(padded_lengths(src, tgt), order, batch_size))
    sizes = [batch_size] * (len(order) // batch_size) + ([len(order) % batch_size] if len(order) % batch_size else [])
    return _examples(src, tgt, order, sizes)


def bucket_batches(lengths, order, batch_size):
    """The batches ``tf.data``'s ``bucket_by_sequence_length`` makes of the sentences of ``order``
    (keyed by ``lengths``, bucketed at ``BUCKET_BOUNDARIES``), as (their sentence numbers one batch
    after another, int32; the batches' sizes); computed at once for an epoch.

    Sentences go in ``order`` into the batch of their bucket; a batch is out when it has
    ``batch_size`` sentences, and at the end each bucket's unfinished batch, by bucket (what its
    ``group_by_window`` does: its groups are kept in a map ordered by key). The arrays are int32 and
    made a bucket at a time, a few bytes a sentence: millions of sentences are bucketed each epoch.
    """
    order = np.asarray(order, np.int32)
    in_order, keys = np.asarray(lengths)[order], np.zeros(len(order), np.int8)
    for boundary in BUCKET_BOUNDARIES:  # keys: searchsorted(BUCKET_BOUNDARIES, length, "right"), a byte each
        keys += in_order >= boundary
    del in_order
    places = [np.flatnonzero(keys == key).astype(np.int32) for key in range(len(BUCKET_BOUNDARIES) + 1)]
    del keys
    cuts = [len(p) - len(p) % batch_size for p in places]
    complete = np.concatenate([p[:cut] for p, cut in zip(places, cuts)]).reshape(-1, batch_size)
    # A batch comes out at its last sentence's place in order; the unfinished ones after them all.
    complete = complete[np.argsort(complete[:, -1])].ravel()
    unfinished = [p[cut:] for p, cut in zip(places, cuts) if cut < len(p)]
    sizes = [batch_size] * (len(complete) // batch_size) + [len(p) for p in unfinished]
    return order[np.concatenate([complete, *unfinished])], np.array(sizes, np.int64)


def padded_lengths(src, tgt=None):
    """Per sentence, the length its batch is padded to at least: the longer of its source and target
    (as encoded, ``<end>`` included)."""
    return packed.lengths(src) if tgt is None else np.maximum(packed.lengths(src), packed.lengths(tgt))


def token_batches(lengths, order, max_tokens, replicas, rng):
    """The batches of ``--batch_tokens``: lists of sentence numbers, each sentence of ``order`` (a
    permutation) in exactly one, in an order shuffled by ``rng``.

    Sentences are taken in ``order`` into the batch of their length bucket (``BUCKET_BOUNDARIES`` of
    ``lengths``); a batch is complete when the next sentence would take its padded size (sentences
    x longest length) beyond ``max_tokens``. A batch holds a multiple of ``replicas`` sentences (the
    replicas of a tf.distribute strategy each take an equal share of it), at least ``replicas``: so a
    sentence longer than ``max_tokens`` is a batch of its own (with ``replicas`` > 1, of ``replicas``
    sentences), the only kind of batch beyond ``max_tokens``. At the end, what is left over of each
    bucket's batch beyond a multiple of ``replicas`` goes, by length, into batches of ``replicas``
    sentences, and the last few (fewer than ``replicas``) join a batch (``_join_remainder``), which may
    take it beyond ``max_tokens``: with one replica there are none.
    """
    lengths = np.asarray(lengths).tolist()
    batches, unfinished = _bucket_batches(lengths, order, max_tokens, replicas)
    leftovers = []
    for group in unfinished:
        cut = len(group) - len(group) % replicas
        batches += [group[:cut]] if cut else []
        leftovers += group[cut:]
    leftovers.sort(key=lambda j: lengths[j])
    cut = len(leftovers) - len(leftovers) % replicas
    batches += [leftovers[k:k + replicas] for k in range(0, cut, replicas)]
    if cut < len(leftovers):
        _join_remainder(batches, leftovers[cut:], lengths, max_tokens, replicas)
    return [batches[k] for k in rng.permutation(len(batches))]


def _bucket_batches(lengths, order, max_tokens, replicas):
    """(the complete batches of ``token_batches``, in the order they were completed; the unfinished
    batch of each bucket)."""
    buckets = np.searchsorted(BUCKET_BOUNDARIES, lengths, side="right").tolist()
    groups, longest, batches = {}, {}, []  # per bucket: its batch so far and the longest length in it
    for i in np.asarray(order).tolist():
        key = buckets[i]
        group = groups.setdefault(key, [])
        if len(group) >= replicas and (len(group) + 1) * max(longest[key], lengths[i]) > max_tokens:
            cut = len(group) - len(group) % replicas
            batches.append(group[:cut])
            group = groups[key] = group[cut:]
            longest[key] = max((lengths[j] for j in group), default=0)
        group.append(i)
        longest[key] = max(longest.get(key, 0), lengths[i])
    return batches, list(groups.values())


def _join_remainder(batches, rest, lengths, max_tokens, replicas):
    """Add the last ``rest`` sentences (fewer than ``replicas``) to one of ``batches`` (a new batch
    when there is none): preferably one that tf.distribute's split (``ceil(size / replicas)``
    sentences to each replica but the last) still gives every replica a sentence, and within
    ``max_tokens``, the smallest such."""
    if not batches:
        batches.append(rest)
        return

    def merits(batch):
        padded = (len(batch) + len(rest)) * max(lengths[j] for j in batch + rest)
        return len(batch) // replicas + len(rest) >= replicas, padded <= max_tokens, -padded
    max(batches, key=merits).extend(rest)


def evaluation_batches(src, tgt=None, batch_size=256, max_padding=0.2, min_batch=32):
    """Batches for evaluation and translation, where sentences are independent of each other.

    Sentences go in order of source length, at most ``batch_size`` to a batch; once a batch has
    ``min_batch`` sentences it also ends where the next sentence would pad it by more than
    ``max_padding`` of its real tokens. Recognition makes hundreds of passes over each batch, so
    it pays for padding hundreds of times: the 256-sentence dev sets padded to their longest
    sentence were half padding. ``index`` says where each sentence came from. Returns a list.
    """
    sides = _sides(src, tgt)
    groups, group, tokens = [], [], 0
    sizes = packed.lengths(sides["src"])
    for i in np.argsort(sizes, kind="stable"):
        n = int(sizes[i])
        full = len(group) == batch_size
        wasteful = len(group) >= min_batch and (len(group) + 1) * n > (1 + max_padding) * (tokens + n)
        if group and (full or wasteful):
            groups.append(group)
            group, tokens = [], 0
        group.append(i)
        tokens += n
    groups += [group] if group else []
    return [{"index": tf.constant(g, tf.int32), **{k: tf.constant(padded_rows(side, g)) for k, side in sides.items()}}
            for g in groups]


def batch_spec():
    """The TensorSpec of a parallel batch, so that compiled steps trace once for all lengths."""
    return {name: tf.TensorSpec([None] if name == "index" else [None, None], tf.int32)
            for name in ("index", "src", "tgt")}

"""Reading tokenized text files and turning them into padded ``tf.data`` batches.

A batch is a dict: ``index`` (B,) the sentence numbers in their file (the RNNPB looks up its PB
rows with them), ``src`` and ``tgt`` (B, T) word ids with ``<end>`` appended and ``<pad>`` (0)
after it. Models derive decoder inputs by shifting in ``<start>``.
"""

import os

import numpy as np
import tensorflow as tf

from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID
from rnnpb_nmt.errors import UserError


BUCKET_BOUNDARIES = [6, 8, 10, 12, 15, 20, 30, 50]


def read_lines(path):
    """The lines of a UTF-8 text file (LF or CRLF, optional BOM): (line number, text) pairs.

    Raises a UserError naming the file for a missing or empty file, and file and line for
    undecodable bytes. Lines are decoded one at a time as they are taken, so a caller that
    checks each line reports the file's first problem, whichever kind it is.
    """
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file")
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = raw.split(b"\n")
    if lines and lines[-1] in (b"", b"\r"):
        lines.pop()
    if not lines:
        raise UserError(f"{path}: file is empty")
    for number, line in enumerate(lines, start=1):
        try:
            yield number, line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UserError(f"{path}:{number}: not valid UTF-8 (byte {e.start})") from None


def read_sentences(path, tokenize=str.split):
    """Read one tokenized sentence per line (see ``read_lines``) as token lists, or as the lists
    ``tokenize(line)`` makes of raw lines (``rnnpb_nmt.data.text``).

    An empty line is a UserError naming file and line: an empty sentence in a corpus is almost
    always a broken file.
    """
    sentences = []
    for number, text in read_lines(path):
        tokens = tokenize(text)
        if not tokens:
            raise UserError(f"{path}:{number}: empty line")
        sentences.append(tokens)
    return sentences


def read_parallel(path1, path2, read1=read_sentences, read2=read_sentences):
    """Read two line-aligned files (with ``read1(path1)`` and ``read2(path2)``); a different number
    of lines is an error naming both."""
    side1, side2 = read1(path1), read2(path2)
    if len(side1) != len(side2):
        raise UserError(
            f"{path1} has {len(side1)} lines but {path2} has {len(side2)}: "
            "parallel files must be line-aligned")
    return side1, side2


def encode_all(vocab, sentences):
    """Sentences as id arrays with ``<end>`` appended (the form every batch carries)."""
    return [np.array(vocab.encode(s) + [END_ID], dtype=np.int32) for s in sentences]


def _ragged(id_arrays):
    lengths = [len(a) for a in id_arrays]
    flat = np.concatenate(id_arrays) if id_arrays else np.zeros([0], np.int32)
    return tf.RaggedTensor.from_row_lengths(flat, lengths)


def make_dataset(src, tgt=None, batch_size=64, order=None, bucket=False):
    """Padded batches of encoded sentences (see the module docstring for the batch layout).

    ``tgt`` may be None for monolingual or test data. Sentences are taken in file order, or in
    ``order`` (a permutation of the sentence numbers); either way each batch carries its
    sentences' numbers in the file. With ``bucket`` (training) batches are drawn from length
    buckets; otherwise they are consecutive.
    """
    indices = np.arange(len(src), dtype=np.int32) if order is None else np.asarray(order, np.int32)
    src = [src[i] for i in indices]
    tgt = None if tgt is None else [tgt[i] for i in indices]
    columns = {"index": tf.constant(indices, tf.int32), "src": _ragged(src)}
    if tgt is not None:
        columns["tgt"] = _ragged(tgt)
    ds = tf.data.Dataset.from_tensor_slices(columns)
    # Slices of a ragged column are ragged; padded_batch wants dense ones.
    ds = ds.map(lambda ex: {k: v.to_tensor() if isinstance(v, tf.RaggedTensor) else v
                            for k, v in ex.items()})
    padded_shapes = {k: ([] if k == "index" else [None]) for k in columns}
    padding_values = {k: (np.int32(0) if k == "index" else np.int32(PAD_ID)) for k in columns}
    if bucket:
        # Batches of similar lengths waste less time on padding; the order stays random.
        ds = ds.bucket_by_sequence_length(
            lambda ex: tf.reduce_max([tf.shape(v)[0] for k, v in ex.items() if k != "index"]),
            BUCKET_BOUNDARIES, [batch_size] * (len(BUCKET_BOUNDARIES) + 1),
            padded_shapes=padded_shapes, padding_values=padding_values)
    else:
        ds = ds.padded_batch(batch_size, padded_shapes=padded_shapes, padding_values=padding_values)
    return ds.prefetch(tf.data.AUTOTUNE)


def evaluation_batches(src, tgt=None, batch_size=256, max_padding=0.2, min_batch=32):
    """Batches for evaluation and translation, where sentences are independent of each other.

    Sentences go in order of source length, at most ``batch_size`` to a batch; once a batch has
    ``min_batch`` sentences it also ends where the next sentence would pad it by more than
    ``max_padding`` of its real tokens. Recognition makes hundreds of passes over each batch, so
    it pays for padding hundreds of times: the 256-sentence dev sets padded to their longest
    sentence were half padding. ``index`` says where each sentence came from. Returns a list.
    """
    groups, group, tokens = [], [], 0
    for i in np.argsort([len(s) for s in src], kind="stable"):
        n = len(src[i])
        full = len(group) == batch_size
        wasteful = len(group) >= min_batch and (len(group) + 1) * n > (1 + max_padding) * (tokens + n)
        if group and (full or wasteful):
            groups.append(group)
            group, tokens = [], 0
        group.append(i)
        tokens += n
    groups += [group] if group else []
    return [next(iter(make_dataset(src, tgt, batch_size=len(g), order=g))) for g in groups]


def batch_spec():
    """The TensorSpec of a parallel batch, so that compiled steps trace once for all lengths."""
    return {name: tf.TensorSpec([None] if name == "index" else [None, None], tf.int32)
            for name in ("index", "src", "tgt")}

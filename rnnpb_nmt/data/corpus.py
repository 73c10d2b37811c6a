"""The training data of one run: encoded parallel, dev and monolingual sentences and vocabularies.

Files are read as they stream by, each once, in parts in worker processes (``--prepare_workers``,
``rnnpb_nmt.data.parts``), and the training and monolingual sentences kept packed
(``PackedSentences``), so that memory grows with a corpus's tokens, not with Python objects per
word (issue 91). Given a cache directory (a run's ``prepared/``), the encoded corpus is written
there once and read from its files from then on: a resumed run reads no text.
"""

import dataclasses
import functools
import hashlib
import json
import os

import numpy as np

from rnnpb_nmt.data.dataset import check_aligned, iter_sentences
from rnnpb_nmt.data.files import read_json_object, write_json, writing
from rnnpb_nmt.data.packed import PackedSentences, lengths, pack
from rnnpb_nmt.data.parts import Drafter, workers
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError

PREPARED_FORMAT = 1  # of the cache's files; a change makes older caches misses
KEY = "key.json"  # written last: a cache without it (or with another key) is not used; the vocabularies' hashes
SETS = ("train_set1", "train_set2", "dev_set1", "dev_set2", "mono_set1", "mono_set2")


@dataclasses.dataclass
class Corpus:
    vocab1: Vocabulary
    vocab2: Vocabulary
    train_src: list
    train_tgt: list
    dev_src: list
    dev_tgt: list
    mono1: list = None
    mono2: list = None

    def sizes(self):
        """Row counts the models size their PB tables by, and the symbols of each side's longest
        training sentence, which testing warns of longer inputs by (saved in hparams.json)."""
        longest = {f"longest{side}": int(lengths(sentences).max()) - 1 if len(sentences) else 0  # without <end>
                   for side, sentences in ((1, self.train_src), (2, self.train_tgt))}
        return {"num_train": len(self.train_src), "num_mono1": len(self.mono1 or []),
                "num_mono2": len(self.mono2 or []), **longest}


def load(files, config, vocabularies=None, read=None, prepared=None):
    """Read the files named by the --train/--dev/--mono flags; vocabularies come from train only
    (or are given, when a run resumes). ``read(path, side, part)`` gives a file's sentences (of
    ``part`` of it, a ``parts.Part``, or all for None) as symbol lists of side 1 or 2, one at a time
    (default: its whitespace-separated tokens); a worker process calls it, so it pickles.

    With --autoencode both sides are the same language and share one vocabulary. ``prepared`` (a
    ``Prepared``, or None) gives the corpus kept for these files and settings, read from its files, when
    there is one; otherwise the files are read, and ``prepared.save()`` keeps what was read.
    """
    loaded = prepared.read(vocabularies) if prepared else None
    if loaded is None:
        with Drafter(workers(config.data.prepare_workers)) as drafter:
            loaded = _read(files, config, vocabularies, functools.partial(drafter, read or _tokens))
        if prepared:
            prepared.unsaved = loaded
    if config.training.p_mono > 0 and loaded.mono1 is None and loaded.mono2 is None:
        raise UserError("--p_mono > 0 needs --mono_set1 and/or --mono_set2")
    return loaded


class Prepared:
    """A directory (a run's ``prepared/``) that keeps the encoded corpus of the files (their paths,
    sizes and modification times) for the next load with the same settings (--vocab1_max,
    --vocab2_max, --autoencode and ``fingerprint``, a JSON-able value of the caller's: what else
    changes the symbols). Written by ``save`` only, once the run is under way, so that a start that
    fails leaves nothing behind."""

    def __init__(self, directory, files, config, fingerprint=None):
        self.directory, self.key, self.unsaved = directory, _key(files, config, fingerprint), None

    def read(self, vocabularies=None):
        """The corpus kept for this key (read from its files as used), or None: none kept, another key, or
        vocabularies other than the ``vocabularies`` given, or a damaged file (the corpus is then
        prepared again from the text files: nothing here is anything but a copy of them)."""
        try:
            return _cached(self.directory, self.key, vocabularies)
        except UserError:
            return None

    def save(self):
        """Keep the corpus ``load`` read from the files (nothing when it came from here); its training
        and monolingual sentences are then the kept ones, read from their files, in place of those in memory."""
        if self.unsaved is None:
            return
        _save(self.unsaved, self.directory, self.key)
        kept = self.read()
        for name in ("train_src", "train_tgt", "mono1", "mono2"):
            setattr(self.unsaved, name, getattr(kept, name))
        self.unsaved = None


def _tokens(path, side, part=None):
    """A file's whitespace-separated tokens (``load``'s default ``read``)."""
    return iter_sentences(path, part=part)


def _read(files, config, vocabularies, draft):
    """The ``Corpus`` of the files, each read once (``draft(path, side)``, a ``parts.Drafted``): a
    side's vocabulary is built and its training sentences encoded as soon as its file is read. The
    training and monolingual sentences are encoded into temporary files and read from there (memory
    does not grow with them), the dev sentences kept in memory."""
    vocabs, train = list(vocabularies or (None, None)), {}
    for side in (1, 2):
        drafted = draft(files[f"train_set{side}"], side)
        if vocabs[side - 1] is None:
            vocabs[side - 1] = vocabs[0] if side == 2 and config.model.autoencode else \
                Vocabulary.from_counts(drafted.counts(), getattr(config.data, f"vocab{side}_max"))
        train[side] = drafted.encode(vocabs[side - 1], on_disk=True)
    check_aligned(files["train_set1"], len(train[1]), files["train_set2"], len(train[2]))
    dev = {side: draft(files[f"dev_set{side}"], side) for side in (1, 2)}
    check_aligned(files["dev_set1"], len(dev[1]), files["dev_set2"], len(dev[2]))
    mono = {side: draft(files[f"mono_set{side}"], side).encode(vocabs[side - 1], on_disk=True)
            for side in (1, 2) if files.get(f"mono_set{side}")}
    return Corpus(*vocabs, train[1], train[2], *(list(dev[side].encode(vocabs[side - 1])) for side in (1, 2)),
                  mono.get(1), mono.get(2))


def _key(files, config, fingerprint):
    """What a cached corpus was made from: every file's path, size and modification time, and the
    settings that change the ids."""
    stats = {name: [os.path.abspath(files[name]), *_stat(files[name])] for name in SETS if files.get(name)}
    key = {"format": PREPARED_FORMAT, "files": stats, "vocab1_max": config.data.vocab1_max,
           "vocab2_max": config.data.vocab2_max, "autoencode": config.model.autoencode, "text": fingerprint}
    return json.loads(json.dumps(key))  # as read back from key.json (lists for tuples, string keys)


def _stat(path):
    try:
        stat = os.stat(path)
    except OSError:
        return [None, None]  # reading it reports what is wrong
    return [stat.st_size, stat.st_mtime_ns]


def _cached(cache, key, vocabularies):
    """The corpus kept in ``cache`` for ``key`` (read from its files as used), or None: none kept, another key, or
    vocabularies other than the ``vocabularies`` given."""
    path = os.path.join(cache, KEY)
    if not os.path.isfile(path):
        return None
    kept = read_json_object(path)
    if kept.get("key") != key:
        return None
    vocabs = [Vocabulary.load(os.path.join(cache, f"vocab{side}.txt")) for side in (1, 2)]
    if kept.get("vocabularies") != _fingerprints(vocabs):
        raise UserError(f"{cache}: corrupted (the vocabularies are not those the corpus was encoded with)")
    if vocabularies and _fingerprints(vocabularies) != _fingerprints(vocabs):
        return None
    vocabs = list(vocabularies or vocabs)
    if key["autoencode"]:
        vocabs[1] = vocabs[0]  # one object, as a fresh load has it
    sets = {name: PackedSentences.load(os.path.join(cache, name)) for name in key["files"]}
    return Corpus(*vocabs, sets["train_set1"], sets["train_set2"],
                  *([np.array(s) for s in sets[f"dev_set{side}"]] for side in (1, 2)),  # small: copies in memory
                  sets.get("mono_set1"), sets.get("mono_set2"))


def _save(loaded, cache, key):
    """Write the corpus into ``cache`` for ``key``: the key last, the previous one removed first."""
    path = os.path.join(cache, KEY)
    if os.path.isfile(path):
        with writing(path):
            os.remove(path)
    for side, vocab in ((1, loaded.vocab1), (2, loaded.vocab2)):
        vocab.save(os.path.join(cache, f"vocab{side}.txt"))
    sets = dict(zip(SETS, (loaded.train_src, loaded.train_tgt, loaded.dev_src, loaded.dev_tgt, loaded.mono1, loaded.mono2)))
    for name in key["files"]:
        pack(sets[name]).save(os.path.join(cache, name))
    write_json(path, {"key": key, "vocabularies": _fingerprints((loaded.vocab1, loaded.vocab2))})


def _fingerprints(vocabularies):
    return [hashlib.sha256("\n".join(v.itos).encode("utf-8")).hexdigest() for v in vocabularies]

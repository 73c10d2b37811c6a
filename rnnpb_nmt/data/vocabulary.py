"""Word <-> id mapping with the four special symbols every model relies on."""

import collections
import os

from rnnpb_nmt.data.files import write_text
from rnnpb_nmt.errors import UserError

PAD, START, END, UNK = "<pad>", "<start>", "<end>", "<unk>"
SPECIALS = (PAD, START, END, UNK)
PAD_ID, START_ID, END_ID, UNK_ID = range(4)


class Vocabulary:
    """Most-frequent-first vocabulary; ``<pad>`` is id 0 so that padding is all zeros."""

    def __init__(self, words):
        self.itos = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences, max_size=None):
        """Count the words of tokenized sentences and keep the ``max_size`` most frequent.

        Ties are broken by first occurrence, so the same corpus always gives the same ids.
        ``max_size`` counts real words only (the four specials come on top).
        """
        # A Counter keeps its words in order of first occurrence.
        return cls.from_counts(collections.Counter(w for s in sentences for w in s), max_size)

    @classmethod
    def from_counts(cls, counts, max_size=None):
        """``build``'s vocabulary from word counts ({word: count}, words in order of first occurrence,
        as a Counter of the sentences' words has them): a corpus counted as it streams by."""
        words = sorted(counts, key=lambda w: -counts[w])  # stable: ties stay in order of first occurrence
        return cls(words[:max_size] if max_size is not None else words)

    def __len__(self):
        return len(self.itos)

    def encode(self, tokens):
        """Token list -> id list; unknown words become ``<unk>``."""
        return [self.stoi.get(t, UNK_ID) for t in tokens]

    def decode(self, ids):
        """Id list -> token list, stopping at ``<end>`` and dropping padding."""
        words = []
        for i in ids:
            i = int(i)
            if i == END_ID:
                break
            if i != PAD_ID:
                words.append(self.itos[i])
        return words

    def save(self, path):
        write_text(path, "\n".join(self.itos) + "\n")

    @classmethod
    def load(cls, path):
        if not os.path.isfile(path):
            raise UserError(f"{path}: vocabulary file missing")
        try:
            with open(path, encoding="utf-8") as f:
                words = f.read().split("\n")[:-1]
        except UnicodeDecodeError as e:
            raise UserError(f"{path}: corrupted (not valid UTF-8 at byte {e.start})") from None
        if tuple(words[:4]) != SPECIALS:
            raise UserError(f"{path}: not a vocabulary file (must start with {' '.join(SPECIALS)})")
        return cls(words[4:])

"""The training data of one run: encoded parallel, dev and monolingual sentences and vocabularies."""

import dataclasses

from rnnpb_nmt.data.dataset import encode_all, read_parallel, read_sentences
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError


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
        return {"num_train": len(self.train_src), "num_mono1": len(self.mono1 or []),
                "num_mono2": len(self.mono2 or []),
                **{f"longest{side}": max((len(ids) - 1 for ids in sentences), default=0)  # without <end>
                   for side, sentences in ((1, self.train_src), (2, self.train_tgt))}}


def load(files, config, vocabularies=None, read=None):
    """Read the files named by the --train/--dev/--mono flags; vocabularies come from train only
    (or are given, when a run resumes). ``read(path, side)`` gives a file's sentences as symbol
    lists of side 1 or 2 (default: its whitespace-separated tokens).

    With --autoencode both sides are the same language and share one vocabulary.
    """
    read = read or (lambda path, side: read_sentences(path))
    read1, read2 = (lambda path: read(path, 1)), (lambda path: read(path, 2))
    train1, train2 = read_parallel(files["train_set1"], files["train_set2"], read1, read2)
    dev1, dev2 = read_parallel(files["dev_set1"], files["dev_set2"], read1, read2)
    if vocabularies:
        vocab1, vocab2 = vocabularies
    else:
        vocab1 = Vocabulary.build(train1, config.data.vocab1_max)
        vocab2 = vocab1 if config.model.autoencode else Vocabulary.build(train2, config.data.vocab2_max)
    mono = {}
    for side in ("1", "2"):
        path = files.get(f"mono_set{side}")
        if path:
            mono[side] = encode_all(vocab1 if side == "1" else vocab2, read(path, int(side)))
    if config.training.p_mono > 0 and not mono:
        raise UserError("--p_mono > 0 needs --mono_set1 and/or --mono_set2")
    return Corpus(vocab1, vocab2, encode_all(vocab1, train1), encode_all(vocab2, train2),
                  encode_all(vocab1, dev1), encode_all(vocab2, dev2), mono.get("1"), mono.get("2"))

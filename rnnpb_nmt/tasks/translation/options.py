"""The translation task's options: it is the toolkit's default task (the thesis's), and declares how
its raw text becomes symbols (``rnnpb_nmt.data.text``)."""

import dataclasses

from rnnpb_nmt.data.text import SUBWORD, SUBWORD_TYPES, TOKENIZE
from rnnpb_nmt.options import option

DEFAULT_TASK = "translation"


@dataclasses.dataclass(frozen=True)
class DataOptions:
    # Every run before issue 43 read its files as tokenized text: the legacy value.
    tokenize: str = option(
        "pretokenized", "how text becomes words, at training, test and translation alike: pretokenized (the "
        "files are Moses-tokenized text, as the thesis's; raw input to --query/--translate is Moses-tokenized to "
        "match), moses (the files are raw text; the run Moses-tokenizes all of it and detokenizes its outputs) or "
        "none (split at whitespace, outputs joined with spaces)", choices=TOKENIZE, legacy="pretokenized",
        only=("task", ("translation",)))
    subword: str = option(
        "none", "none (words are symbols) or sentencepiece (a SentencePiece model per language, trained on the "
        "training files and saved with the run)", choices=SUBWORD, legacy="none", only=("task", ("translation",)))
    subword_vocab: int = option(8000, "--subword=sentencepiece: pieces per language (fewer on a small corpus)",
                                8, 1e6, legacy=8000, only=("subword", ("sentencepiece",)))
    subword_type: str = option("unigram", "--subword=sentencepiece: the unigram language model or BPE",
                               choices=SUBWORD_TYPES, legacy="unigram", only=("subword", ("sentencepiece",)))

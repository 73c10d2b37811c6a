"""How a translation run turns raw text into the symbols its model reads, and back (issue 43).

A run records its preparation (``--tokenize``, ``--subword``) in hparams.json and keeps its
SentencePiece models in the working directory, so that training, dev, test, ``--query``, translate
mode and the Python API prepare text in exactly the same way:

    raw line --tokenize--> words --subword--> symbols (what the vocabulary holds)
    symbols --unsubword--> words --detokenize--> raw line

``--tokenize``:
- ``pretokenized`` (the default, and what every run before issue 43 did): the files are tokenized
  text already (the thesis's data were Moses-tokenized and escaped), split at spaces; raw input
  to ``--query`` and translate mode is Moses-tokenized to match, and outputs Moses-detokenized;
- ``moses``: the files are raw text, Moses-tokenized here, every one of them, the same way;
- ``none``: text is split at whitespace everywhere and outputs joined with spaces (data that is
  symbols, or tokenized by another tool that the user applies to the input too).

``--subword=sentencepiece`` then cuts the words into SentencePiece pieces (unigram or BPE, trained
on the run's training files with ``--subword_vocab`` pieces, one model per language; one for both
sides of an ``--autoencode`` run, whose vocabularies are one). The normalisation is the identity,
so that pieces decode back to exactly the words they came from, characters unseen in training
included. SentencePiece trains on at most ``SUBWORD_SENTENCES`` (a million) sentences a side: of
a larger corpus, a sample fixed by a seed, read as the file streams by.
"""

import io
import os
import random
import re

from rnnpb_nmt.data.files import atomic_file
from rnnpb_nmt.errors import UserError

TOKENIZE = ("pretokenized", "moses", "none")
SUBWORD = ("none", "sentencepiece")
SUBWORD_TYPES = ("unigram", "bpe")
SUBWORD_MODELS = ("subword1.model", "subword2.model")  # in the working directory, one per side
# SentencePiece trains on at most this many sentences of a side, sampled (with this seed) from a
# larger corpus: a million lines are plenty for its statistics, and its memory grows with them
# (it keeps every sentence it is given).
SUBWORD_SENTENCES = 1_000_000
SUBWORD_SEED = 91

# A word that ends in punctuation glued to letters ("Tom." "there?") or starts with a quote: text
# that no tokenizer has seen. Moses-tokenized text has none but abbreviations ("Mr.") and its
# escapes ("&quot;", "&apos;s"), so the warning asks for more than a few percent of the sentences.
_GLUED = re.compile(r"^(?!&)(.*\w[.,!?;:\"]+|[\"(]\w.*)$")
UNTOKENIZED_SHARE = 0.2
UNTOKENIZED_SAMPLE = 100_000  # the first sentences of a training file that the warning looks at


class TextPipeline:
    """The preparation of one run: ``tokenize``, ``subword`` and its SentencePiece models (bytes of
    each side's model, or None), side 1 the source language, side 2 the target."""

    def __init__(self, tokenize="pretokenized", subword="none", models=(None, None)):
        self.tokenize_mode, self.subword = tokenize, subword
        self.models = tuple(models)
        self.home = None  # the working directory the models were read from, for messages
        self._processors = [None, None]
        self._moses = {}

    def __getstate__(self):
        """Pickled (into a worker process) without the tools made from it, which are made again there."""
        return dict(self.__dict__, _processors=[None, None], _moses={})

    @classmethod
    def of(cls, data, home=None):
        """The pipeline of a run's data configuration; its subword models read from ``home`` (the
        working directory), when the run has them and they were saved."""
        pipeline = cls(getattr(data, "tokenize", "pretokenized"), getattr(data, "subword", "none"))
        if pipeline.subword != "none" and home is not None:
            pipeline.models = tuple(_read_model(os.path.join(home, name)) for name in SUBWORD_MODELS)
            pipeline.home = home
        return pipeline

    # -- training the subword models ---------------------------------------------------------

    def train_subwords(self, side1, side2, vocab_size, kind, shared):
        """Train each side's SentencePiece model on its training sentences (iterables of word lists,
        each read once); ``shared`` (an --autoencode run) trains one model on side 1 for both."""
        if self.subword == "none":
            return
        first = _train_model(side1, vocab_size, kind)
        self.models = (first, first if shared else _train_model(side2, vocab_size, kind))
        self._processors = [None, None]

    def piece_counts(self):
        """{side: the pieces of its SentencePiece model} for each side with a model of its own (side 1
        alone when both share one); empty for a run without subwords."""
        if self.subword == "none":
            return {}
        sides = (1,) if self.models[0] is self.models[1] else (1, 2)
        return {side: self._processor(side).get_piece_size() for side in sides}

    def save(self, home):
        """Write the subword models into the working directory ``home`` (nothing for a run without)."""
        if self.subword == "none":
            return
        for name, model in zip(SUBWORD_MODELS, self.models):
            path = os.path.join(home, name)
            with atomic_file(path, binary=True) as f:
                f.write(model)

    # -- raw text -> symbols ------------------------------------------------------------------

    def words(self, line, language):
        """A raw line's words: Moses tokens for ``moses``, else its whitespace-separated tokens."""
        if self.tokenize_mode == "moses":
            return self._tokenizer(language).tokenize(line, escape=True)
        return line.split()

    def query_words(self, line, language):
        """The words of raw input to --query, translate mode and the API: as ``words``, except that
        a ``pretokenized`` run's input is Moses-tokenized like its training data were."""
        if self.tokenize_mode == "pretokenized":
            return self._tokenizer(language).tokenize(line, escape=True)
        return self.words(line, language)

    def symbols(self, words, side):
        """A sentence's words -> its symbols (SentencePiece pieces of ``side``'s model, or the words)."""
        if self.subword == "none" or not words:
            return list(words)
        return self._processor(side).encode(" ".join(words), out_type=str)

    # -- symbols -> raw text ------------------------------------------------------------------

    def unsubword(self, symbols, side):
        """Symbols -> words (the pieces decoded by ``side``'s model, or the symbols)."""
        if self.subword == "none" or not symbols:
            return list(symbols)
        return self._processor(side).decode_pieces(list(symbols)).split()

    def detokenize(self, words, language):
        """Words -> a raw line: Moses-detokenized, but for ``none``, whose words join with spaces."""
        if self.tokenize_mode == "none":
            return " ".join(words)
        return self._detokenizer(language).detokenize(list(words))

    def restore(self, symbols, side, language):
        """A model's output symbols -> a raw line."""
        return self.detokenize(self.unsubword(symbols, side), language)

    # -- helpers ------------------------------------------------------------------------------

    def _processor(self, side):
        if self._processors[side - 1] is None:
            import sentencepiece

            model, path = self.models[side - 1], os.path.join(self.home or "", SUBWORD_MODELS[side - 1])
            if model is None:
                raise UserError(f"--subword=sentencepiece: the run's subword model is missing ({path})")
            try:
                self._processors[side - 1] = sentencepiece.SentencePieceProcessor(model_proto=model)
            except RuntimeError:  # SentencePiece's C++ message says only that parsing failed
                raise UserError(f"{path}: corrupted (not a SentencePiece model)") from None
        return self._processors[side - 1]

    def _tokenizer(self, language):
        from sacremoses import MosesTokenizer  # at first use: its import takes most of a second

        return self._moses_tool("tok", language, MosesTokenizer)

    def _detokenizer(self, language):
        from sacremoses import MosesDetokenizer

        return self._moses_tool("detok", language, MosesDetokenizer)

    def _moses_tool(self, kind, language, make):
        # Made once per language: making one takes about a millisecond, as long as a line's tokenizing.
        if (kind, language) not in self._moses:
            self._moses[kind, language] = make(lang=language)
        return self._moses[kind, language]


def looks_untokenized(sentences):
    """Whether the share of sentences (token lists) with punctuation glued to a word is at least
    ``UNTOKENIZED_SHARE``: raw text given to a run that reads its files as tokenized."""
    count = glued = 0
    for words in sentences:
        count += 1
        glued += any(_GLUED.search(word) for word in words)
    return count > 0 and glued >= UNTOKENIZED_SHARE * count


def _train_model(sentences, vocab_size, kind):
    """The serialized SentencePiece model of ``kind`` trained on word lists (an iterable, read once).
    One thread and a seeded sample: the same sentences always give the same model.
    ``hard_vocab_limit`` off: a small corpus gives a smaller vocabulary instead of an error."""
    import sentencepiece

    model = io.BytesIO()
    lines = _sample((" ".join(words) for words in sentences), SUBWORD_SENTENCES, SUBWORD_SEED)
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size, model_type=kind,
            character_coverage=1.0, hard_vocab_limit=False, normalization_rule_name="identity",
            bos_id=-1, eos_id=-1, unk_id=0, num_threads=1, minloglevel=2)
    except RuntimeError as e:
        raise UserError(f"--subword=sentencepiece: cannot train on the training files ({str(e).splitlines()[0]})") from None
    return model.getvalue()


def _sample(lines, size, seed):
    """All of ``lines`` in order when there are at most ``size``, else a uniform sample of ``size`` of
    them (reservoir sampling, drawn by a generator seeded with ``seed``): memory bounded by ``size``
    lines however long the corpus. Not SentencePiece's own ``input_sentence_size``: its sample
    changes from run to run whatever seed it is given (SentencePiece 0.2)."""
    rng, sample = random.Random(seed), []
    for seen, line in enumerate(lines):
        if seen < size:
            sample.append(line)
        elif (place := rng.randrange(seen + 1)) < size:
            sample[place] = line
    return sample


def _read_model(path):
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()

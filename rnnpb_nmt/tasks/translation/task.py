"""Translation of sentence pairs, scored by BLEU: the thesis's task.

Files are text, one sentence per line, line-aligned across languages; a file's language is its
suffix (``train.en``). How the text becomes the model's symbols is the run's ``--tokenize`` and
``--subword`` (``rnnpb_nmt.data.text``): by default the files are tokenized text, as the thesis's.
BLEU is Moses multi-bleu on the words (the thesis's figures), with sacreBLEU on the detokenized
text beside it (its signature saved), and the same multi-bleu of the sentences of each
source-length bucket (issue 16: does a model fail on long sentences only?).
"""

import hashlib
import itertools
import os
import sys

from rnnpb_nmt.data import corpus
from rnnpb_nmt.data.dataset import iter_sentences
from rnnpb_nmt.data.text import UNTOKENIZED_SAMPLE, TextPipeline, looks_untokenized
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import bleu, sacrebleu_score
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.base import Task

# Source-length buckets (words of the tokenized source, both ends included; None: no upper end).
LENGTH_BUCKETS = ((1, 5), (6, 8), (9, None))
PREPARED = "prepared"  # in the working directory: the encoded training data, kept for a resumed run (issue 91)


def language_of(path):
    """The language code a file name ends with (train.en -> en), as Moses tools want it."""
    suffix = os.path.splitext(path)[1][1:]
    return suffix if suffix.isalpha() and 2 <= len(suffix) <= 3 else "en"


def bucket_name(low, high):
    return f"{low}-{high}" if high else f"{low}+"


def bleu_by_source_length(sources, hypotheses, references, buckets=LENGTH_BUCKETS):
    """{bucket: {"bleu", "sentences"}}: multi-bleu of the sentences whose tokenized source has a
    length in each bucket, as its own corpus (BLEU is not a mean of sentences, so the buckets'
    scores do not average to the whole's); an empty bucket's BLEU is None."""
    scores = {}
    for low, high in buckets:
        chosen = [i for i, s in enumerate(sources) if low <= len(s) and (high is None or len(s) <= high)]
        scores[bucket_name(low, high)] = {
            "bleu": bleu([hypotheses[i] for i in chosen], [references[i] for i in chosen]) if chosen else None,
            "sentences": len(chosen)}
    return scores


def _number(value):
    return "–" if value is None else f"{value:.2f}"


def reference_path(test_set, target_language):
    """The reference beside a test file: test.en -> test.de for an en->de model."""
    stem, suffix = os.path.splitext(test_set)
    return stem + "." + target_language if suffix else None


@register_task("translation")
class TranslationTask(Task):
    """Sentence pairs in two languages (``lang1`` -> ``lang2``), scored by BLEU."""

    required_files = ("train_set1", "train_set2", "dev_set1", "dev_set2")
    dev_metric = "bleu"

    def __init__(self, config=None, home=None):
        super().__init__(config, home)
        self.text = TextPipeline.of(config.data, home) if config else TextPipeline()
        self.prepared = None  # the run's prepared/ once load_corpus has read the data

    def derived(self, data_files, loaded):
        """The corpus's sizes and the languages the training files' names end with."""
        return dict(loaded.sizes(), lang1=language_of(data_files["train_set1"]),
                    lang2=language_of(data_files["train_set2"]))

    def load_corpus(self, data_files, config, vocabularies=None):
        """The training, dev and monolingual data named by the --*_set flags (``data_files``),
        prepared by the run's pipeline; a new run trains its subword models first (on the training
        files), a resumed one has them (``vocabularies`` given)."""
        languages = {1: language_of(data_files["train_set1"]), 2: language_of(data_files["train_set2"])}
        if vocabularies is None and self.text.subword != "none":
            # The words stream into SentencePiece, which keeps a bounded sample (text.SUBWORD_SENTENCES).
            words = [self._words(data_files[f"train_set{side}"], languages[side]) for side in (1, 2)]
            self.text.train_subwords(*words, config.data.subword_vocab, config.data.subword_type,
                                     shared=config.model.autoencode or languages[1] == languages[2])
            _note_fewer_pieces(config.data.subword_vocab, self.text.piece_counts(), languages)
        fingerprint = {"tokenize": self.text.tokenize_mode, "languages": languages, "subword": self.text.subword,
                       "models": [hashlib.sha256(m).hexdigest() if m else None for m in self.text.models]}
        self.prepared = corpus.Prepared(os.path.join(self.home, PREPARED), data_files, config, fingerprint) \
            if self.home else None
        loaded = corpus.load(data_files, config, vocabularies, read=Symbols(self.text, languages), prepared=self.prepared)
        read_now = self.prepared is None or self.prepared.unsaved is not None  # not kept in prepared/
        train1 = data_files["train_set1"]
        if read_now and self.text.tokenize_mode == "pretokenized" and \
                looks_untokenized(itertools.islice(self._words(train1, languages[1]), UNTOKENIZED_SAMPLE)):
            _warn_untokenized(train1)
        return loaded

    def save(self, home):
        """The subword models, if the run has them, and the corpus read, prepared for a resumed run."""
        self.text.save(home)
        if self.prepared:
            self.prepared.save()

    def read_test(self, test_set, reference, target_language):
        """(source sentences, reference sentences or None, the reference's path or None), as the
        run's symbols: the reference is ``reference`` or the test file's counterpart in the target
        language."""
        reference = reference or reference_path(test_set, target_language)
        target_side = self._side(target_language)
        source_side, source_language = 3 - target_side, self._language(3 - target_side)
        sources = self._read(test_set, source_side, source_language)
        if not (reference and os.path.isfile(reference)):
            return sources, None, reference
        references = self._read(reference, target_side, target_language)
        if len(references) != len(sources):
            raise UserError(f"{test_set} has {len(sources)} lines but its reference {reference} "
                            f"has {len(references)}")
        return sources, references, reference

    def score(self, sources, hypotheses, references, target_language):
        """{bleu, bleu_detokenized, sacrebleu_signature, bleu_by_source_length} of outputs (symbol
        lists) of ``sources``: multi-bleu on their words, sacreBLEU on the raw text they restore to."""
        side = self._side(target_language)
        hyp_words, ref_words = ([self.text.unsubword(s, side) for s in side_] for side_ in (hypotheses, references))
        hyps, refs = [" ".join(h) for h in hyp_words], [" ".join(r) for r in ref_words]
        detokenized, signature = sacrebleu_score([self.text.detokenize(h, target_language) for h in hyp_words],
                                                 [self.text.detokenize(r, target_language) for r in ref_words])
        source_words = [self.text.unsubword(s, 3 - side) for s in sources]
        return {"bleu": bleu(hyps, refs), "bleu_detokenized": detokenized, "sacrebleu_signature": signature,
                "bleu_by_source_length": bleu_by_source_length(source_words, hyps, refs)}

    def describe(self, scores):
        buckets = scores.get("bleu_by_source_length", {})
        by_length = "".join(f"; {name} source words: {_number(b['bleu'])} ({b['sentences']} sentences)"
                            for name, b in buckets.items())
        return (f"BLEU = {scores['bleu']:.2f} (multi-bleu on tokenized text; detokenized sacreBLEU "
                f"{scores['bleu_detokenized']:.2f}{by_length})")

    def output_lines(self, sources, hypotheses):
        """test_trans.txt's lines: the outputs' words for a run of tokenized files (as the thesis's),
        else the raw text the outputs restore to."""
        language = self.config.data.lang2 if self.config else "en"
        if self.text.tokenize_mode == "pretokenized":
            return [" ".join(self.text.unsubword(h, 2)) for h in hypotheses]
        return [self.text.restore(h, 2, language) for h in hypotheses]

    def tokenize(self, lines, language):
        """Raw sentences -> symbol lists, prepared like the training data (``TextPipeline.query_words``)."""
        side = self._side(language)
        return [self.text.symbols(self.text.query_words(line, language), side) for line in lines]

    def detokenize(self, outputs, language):
        """Symbol lists -> raw sentences."""
        side = self._side(language)
        return [self.text.restore(symbols, side, language) for symbols in outputs]

    def _read(self, path, side, language):
        return [self.text.symbols(w, side) for w in self._words(path, language)]

    def _words(self, path, language):
        """A file's sentences as the words of ``language``, one at a time as it is read."""
        return words_of(self.text, path, language)

    def _side(self, language):
        """Which side's subword model ``language`` is: 2 for the target language of a run between
        two languages, else 1 (a run within one language has one subword model)."""
        data = self.config.data if self.config else None
        return 2 if data and language == data.lang2 and data.lang1 != data.lang2 else 1

    def _language(self, side):
        data = self.config.data if self.config else None
        return (data.lang1 if side == 1 else data.lang2) if data else "en"


def words_of(text, path, language, part=None):
    """A file's sentences (of ``part`` of it: ``dataset.read_lines``) as the words of ``language``
    (``text``: a ``TextPipeline``), one at a time as it is read."""
    return iter_sentences(path, lambda line: text.words(line, language), part)


class Symbols:
    """``corpus.load``'s ``read``: a file's sentences as the run's symbols (``text``, a
    ``TextPipeline``; ``languages``: {side: language}), of a part of the file; an object, so that it
    pickles into the worker processes that read the parts."""

    def __init__(self, text, languages):
        self.text, self.languages = text, languages

    def __call__(self, path, side, part=None):
        for words in words_of(self.text, path, self.languages[side], part):
            yield self.text.symbols(words, side)


def _warn_untokenized(path):
    """Training files that look like raw text, read as tokenized (--tokenize=pretokenized): a warning."""
    print(f"warning: {path} looks untokenized (punctuation glued to words, e.g. 'Tom.'); it is read as "
          "tokenized text (--tokenize=pretokenized): give --tokenize=moses to tokenize it, and with it every "
          "test and query input", file=sys.stderr)


def _note_fewer_pieces(asked, counts, languages):
    """One line when a SentencePiece model (``counts``: pieces by side) has fewer pieces than
    --subword_vocab=``asked``: a small training text has no more (``hard_vocab_limit`` is off)."""
    fewer = [f"{count} for {languages[side]}" for side, count in counts.items() if count < asked]
    if fewer:
        print(f"note: --subword_vocab={asked}: the training text gives fewer SentencePiece pieces: "
              f"{', '.join(fewer)}", file=sys.stderr)

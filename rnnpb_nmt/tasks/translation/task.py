"""Translation of tokenized sentence pairs, scored by BLEU: the thesis's task.

Files are tokenized text, one sentence per line, line-aligned across languages; a file's
language is its suffix (``train.en``). BLEU is Moses multi-bleu on the tokenized text (the
thesis's figures), with the detokenized sacreBLEU score beside it, and the same BLEU of the
sentences of each source-length bucket (issue 16: does a model fail on long sentences only?).
"""

import os

from rnnpb_nmt.data import corpus
from rnnpb_nmt.data.dataset import read_sentences
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import bleu, detokenized_bleu
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.base import Task

# Source-length buckets (words of the tokenized source, both ends included; None: no upper end).
LENGTH_BUCKETS = ((1, 5), (6, 8), (9, None))


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

    def derived(self, data_files, loaded):
        """The corpus's sizes and the languages the training files' names end with."""
        return dict(loaded.sizes(), lang1=language_of(data_files["train_set1"]),
                    lang2=language_of(data_files["train_set2"]))

    def load_corpus(self, data_files, config, vocabularies=None):
        """The training, dev and monolingual data named by the --*_set flags (``data_files``)."""
        return corpus.load(data_files, config, vocabularies)

    def read_test(self, test_set, reference, target_language):
        """(source sentences, reference sentences or None, the reference's path or None): the
        reference is ``reference`` or the test file's counterpart in the target language."""
        reference = reference or reference_path(test_set, target_language)
        sources = read_sentences(test_set)
        if not (reference and os.path.isfile(reference)):
            return sources, None, reference
        references = read_sentences(reference)
        if len(references) != len(sources):
            raise UserError(f"{test_set} has {len(sources)} lines but its reference {reference} "
                            f"has {len(references)}")
        return sources, references, reference

    def score(self, sources, hypotheses, references, target_language):
        """{bleu, bleu_detokenized, sacrebleu_signature, bleu_by_source_length} of tokenized
        outputs (token lists) of ``sources`` (token lists)."""
        hyps, refs = [" ".join(h) for h in hypotheses], [" ".join(r) for r in references]
        detokenized, signature = detokenized_bleu(hyps, refs, target_language)
        return {"bleu": bleu(hyps, refs), "bleu_detokenized": detokenized, "sacrebleu_signature": signature,
                "bleu_by_source_length": bleu_by_source_length(sources, hyps, refs)}

    def describe(self, scores):
        buckets = scores.get("bleu_by_source_length", {})
        by_length = "".join(f"; {name} source words: {_number(b['bleu'])} ({b['sentences']} sentences)"
                            for name, b in buckets.items())
        return (f"BLEU = {scores['bleu']:.2f} (multi-bleu on tokenized text; detokenized sacreBLEU "
                f"{scores['bleu_detokenized']:.2f}{by_length})")

    def tokenize(self, lines, language):
        """Raw sentences -> token lists, Moses-tokenized (and escaped) like the training data."""
        from sacremoses import MosesTokenizer  # at first use: its import takes most of a second

        tokenizer = MosesTokenizer(lang=language)
        return [tokenizer.tokenize(line, escape=True) for line in lines]

    def detokenize(self, outputs, language):
        """Token lists -> raw sentences."""
        from sacremoses import MosesDetokenizer

        detokenizer = MosesDetokenizer(lang=language)
        return [detokenizer.detokenize(tokens) for tokens in outputs]

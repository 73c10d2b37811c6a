"""Morphological inflection (SIGMORPHON 2016 task 1, CELEX, Wiktionary), scored shared-task style.

A file has one ``LEMMA<TAB>FEATURES<TAB>FORM`` line per example (UTF-8); a ``*-covered`` test
file has the first two columns only. FEATURES is a comma-separated list of tags
(``pos=N,num=PL``). Both sides of a pair are in one file, so a run names its data with
``--train_set1`` and ``--dev_set1`` alone.

How the data reach a model, with the least change to the shared pipeline (``rnnpb_nmt.data.dataset``,
``rnnpb_nmt.data.corpus``, the Translator), which carries one ``src`` and one ``tgt`` id sequence:

- ``src`` is the lemma's characters followed by one symbol per feature (``[pos=N]``). A
  character is one Unicode code point, a feature symbol is bracketed, so the two never collide
  (nor with ``<pad>`` and the other specials), and a model tells them apart by the symbol alone
  (``is_feature_symbol``). No new batch field, so batching, bucketing, evaluation batches,
  the distributed step and checkpoints work unchanged. A model that ignores the distinction
  reads the features as part of the input, which is what a soft-attention baseline does.
- ``tgt`` is the oracle action sequence of the pair (``rnnpb_nmt.tasks.inflection.alignment``): the form's
  characters with ``<step>`` actions between them, read off a Levenshtein alignment of the pair or
  (``--aligner=corpus``) one by an aligner fit on the training pairs as the data load
  (``rnnpb_nmt.tasks.inflection.corpus_aligner``; ``--aligner=corpus_early``: the same, with its
  ties broken as the SIGMORPHON 2016 baseline's aligner breaks them); with
  ``--inflection_target=form`` the form's characters alone (a soft-attention model, which aligns
  by itself, learns to write only them).
  Outputs are scored, written and printed with the steps removed, so a model that writes plain
  forms is scored the same way.

Code points, not grapheme clusters, are the symbols: a Navajo vowel with a combining acute is two
symbols, and joining the symbols gives back the exact bytes read (no Unicode normalisation).
Scores: exact-match accuracy and mean Levenshtein distance to the gold form.
"""

import tensorflow as tf

from rnnpb_nmt.data.dataset import read_lines
from rnnpb_nmt.data.symbols import STEP, feature_symbol, is_feature_symbol
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import coarse_accuracy
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.base import Task, encode_corpus
from rnnpb_nmt.tasks.inflection.alignment import EARLY, LATE, align, alignment_actions, mean_levenshtein
from rnnpb_nmt.tasks.inflection.corpus_aligner import CorpusAligner
from rnnpb_nmt.tasks.transduction.task import refuse_unknown_symbols

FEATURE_SEPARATOR = ","


def source_symbols(lemma, features):
    """The source sequence of an example: its characters, then one symbol per feature."""
    return list(lemma) + [feature_symbol(tag) for tag in features]


def split_source(symbols):
    """(lemma, FEATURES column) of a source sequence: the inverse of ``source_symbols``."""
    features = [s[1:-1] for s in symbols if is_feature_symbol(s)]
    return "".join(s for s in symbols if not is_feature_symbol(s)), FEATURE_SEPARATOR.join(features)


def form_of(actions):
    """The form an output action sequence writes (its characters, steps removed)."""
    return "".join(a for a in actions if a != STEP)


def _sequences(examples, target):
    """(source symbols, target symbols) of examples; ``target``: (lemma, form) -> target symbols."""
    return ([source_symbols(lemma, features) for lemma, features, _ in examples],
            [target(lemma, form) for lemma, _, form in examples])


def parse_line(text, where, columns=(3,)):
    """(lemma, feature tags, form or None) of one line; ``where`` is ``FILE:LINE`` for errors.

    ``columns`` are the allowed column counts (2: a covered test file).
    """
    fields = text.rstrip("\r").split("\t")
    if len(fields) not in columns:
        layout = {(2,): "LEMMA<TAB>FEATURES", (3,): "LEMMA<TAB>FEATURES<TAB>FORM"}.get(
            columns, "LEMMA<TAB>FEATURES[<TAB>FORM]")
        raise UserError(f"{where}: {len(fields)} tab-separated column(s), expected "
                        f"{' or '.join(map(str, columns))} ({layout})")
    if any("\r" in field for field in fields):  # a vocabulary file could not hold it
        raise UserError(f"{where}: a carriage return inside the line")
    lemma, features = fields[0], fields[1].split(FEATURE_SEPARATOR)
    form = fields[2] if len(fields) == 3 else None
    if not lemma or form == "":
        raise UserError(f"{where}: empty {'lemma' if not lemma else 'form'}")
    if "" in features:
        raise UserError(f"{where}: empty feature tag in {fields[1]!r}")
    return lemma, features, form


def read_examples(path, columns=(3,)):
    """The examples of a file, each (lemma, feature tags, form or None); a file must not mix
    covered (2-column) and full lines."""
    examples = [parse_line(text, f"{path}:{number}", columns) for number, text in read_lines(path)]
    covered = [form is None for _, _, form in examples]
    if any(covered) and not all(covered):
        number = covered.index(not covered[0]) + 1
        raise UserError(f"{path}:{number}: {'no' if covered[number - 1] else 'a'} FORM column, unlike line 1 "
                        "(a file is either covered or not)")
    return examples


@register_task("inflection")
class InflectionTask(Task):
    """Lemma + features in, inflected form out; exact-match accuracy and mean edit distance."""

    required_files = ("train_set1", "dev_set1")
    dev_metric = "accuracy"  # the paper kept the epoch of best dev accuracy
    _unused_files = ("train_set2", "dev_set2", "mono_set1", "mono_set2")

    def load_corpus(self, data_files, config, vocabularies=None):
        """Training and dev examples as (source symbols, oracle actions), encoded; vocabularies
        from the training file (or given, when a run resumes), refused if ``--vocab*_max`` leaves
        a training symbol out."""
        for name in self._unused_files:
            if data_files.get(name):
                raise UserError(f"--{name}: the inflection task reads lemma, features and form from one "
                                "file (--train_set1, --dev_set1) and has no monolingual data")
        if config.training.p_mono > 0:
            raise UserError("--p_mono: the inflection task has no monolingual data")
        train, dev = (read_examples(data_files[name]) for name in ("train_set1", "dev_set1"))
        target = self._target(train, config.data)
        loaded = encode_corpus(_sequences(train, target), _sequences(dev, target), config, vocabularies)
        refuse_unknown_symbols(loaded, config, data_files["train_set1"], data_files["train_set1"])
        return loaded

    @staticmethod
    def _target(train, options):
        """The target symbols of a (lemma, form) pair, as ``--inflection_target``, ``--aligner`` and
        ``--end_of_word`` (``options``: the data options) say; a corpus aligner (``corpus``, ``corpus_early``) is fit
        on the ``train`` examples."""
        if options.inflection_target == "form":
            return lambda lemma, form: list(form)
        aligned = align
        if options.aligner != "levenshtein":
            insertions = EARLY if options.aligner == "corpus_early" else LATE
            aligned = CorpusAligner([(lemma, form) for lemma, _, form in train], insertions=insertions).align
        last = [STEP] if options.end_of_word else []  # onto the end-of-word position
        return lambda lemma, form: alignment_actions(aligned(lemma, form)) + last

    def read_test(self, test_set, reference, target_language):
        """(source sequences, gold forms as character lists or None, the file they came from).

        A covered file has no gold; ``reference`` (``--test_ref``), a full file of the same
        lemmas and features, gives it.
        """
        examples = read_examples(test_set, columns=(2, 3))
        sources = [source_symbols(lemma, features) for lemma, features, _ in examples]
        if reference:
            examples = self._matching_gold(reference, examples, test_set)
        elif examples[0][2] is None:
            return sources, None, None
        return sources, [list(form) for _, _, form in examples], reference or test_set

    @staticmethod
    def _matching_gold(reference, examples, test_set):
        """The examples of ``reference``, which must be those of ``test_set`` with forms."""
        gold = read_examples(reference)
        if len(gold) != len(examples):
            raise UserError(f"{test_set} has {len(examples)} lines but its reference {reference} has {len(gold)}")
        for number, (wanted, given) in enumerate(zip(gold, examples), start=1):
            if wanted[:2] != given[:2]:
                raise UserError(f"{reference}:{number}: not the lemma and features of {test_set}:{number}")
        return gold

    def score(self, sources, hypotheses, references, target_language):
        """{accuracy, mean_levenshtein} of output action sequences against gold forms: character
        lists (a test file's), or action sequences (the dev set as training reads it)."""
        predictions = [form_of(h) for h in hypotheses]
        gold = [form_of(r) for r in references]
        return {"accuracy": coarse_accuracy(predictions, gold),
                "mean_levenshtein": mean_levenshtein(predictions, gold)}

    def describe(self, scores):
        return f"accuracy {scores['accuracy']:.4f}, mean Levenshtein distance {scores['mean_levenshtein']:.4f}"

    def output_lines(self, sources, hypotheses):
        """``LEMMA<TAB>FEATURES<TAB>PREDICTION`` per test line, as the shared task's scorer reads."""
        return ["\t".join(split_source(s)) + "\t" + form_of(h) for s, h in zip(sources, hypotheses)]

    def tokenize(self, lines, language):
        """``--query`` lines ``LEMMA<TAB>FEATURES`` -> source sequences."""
        return [source_symbols(*parse_line(line, "--query", columns=(2,))[:2]) for line in lines]

    def detokenize(self, outputs, language):
        return [form_of(actions) for actions in outputs]

    # In a TensorFlow graph (``rnnpb-nmt export``, ``rnnpb_nmt.serving.export``): the same as ``tokenize``
    # and ``detokenize``, on a batch of strings and a ragged batch of symbols.

    def graph_tokenize(self, lines, language):
        """Lines (B,) -> their source symbols (B, None); a line ``parse_line`` refuses fails the graph's
        check, with one message for every way of being wrong."""
        lines = tf.strings.regex_replace(lines, "\r+$", "")  # rstrip("\r")
        fields = tf.strings.split(lines, "\t")
        lemma, features = tf.unstack(fields.to_tensor("", shape=[None, 2]), axis=1)
        tags = tf.strings.split(features, FEATURE_SEPARATOR)
        well_formed = (tf.equal(fields.row_lengths(), 2) & tf.not_equal(lemma, "")
                       & ~tf.strings.regex_full_match(lines, "(?s).*\r.*") & tf.reduce_all(tf.not_equal(tags, ""), axis=1))
        tf.debugging.Assert(tf.reduce_all(well_formed), ["a line is not LEMMA<TAB>FEATURES (a non-empty lemma, "
                                                         "comma-separated non-empty feature tags)"])
        features = tf.ragged.map_flat_values(lambda tag: "[" + tag + "]", tags)  # feature_symbol
        return tf.concat([tf.strings.unicode_split(lemma, "UTF-8"), features], axis=1)

    def graph_detokenize(self, symbols, language):
        """Output symbols (N, None) -> forms (N,): ``form_of`` of each row."""
        return tf.strings.reduce_join(tf.ragged.boolean_mask(symbols, tf.not_equal(symbols, STEP)), axis=1)

"""``rnnpb-nmt export --working_dir D --out E``: a trained run as a TensorFlow SavedModel (issue 44).

The SavedModel's ``serving_default`` signature takes a batch of raw strings (``text``, shape (B,)) and
returns each one's translations, best first by the rank the command line chooses by. Inside the graph:
the run's text preparation (whitespace splitting, SentencePiece through ``tensorflow_text``, a task's
own in-graph preparation), the vocabulary lookups, the model's recognition or encoding and the
search (``Translator._search_fn``, the compiled search the command line runs), and the restoring of
the output symbols to text. A model that also translates B->A (``reversible``) has a ``reverse``
signature too, the search of its reversed view (``Translator.reversed``). What has no in-graph
equivalent, Moses tokenization and detokenization, is left to the caller and recorded in
``assets.extra/export.json`` (``ExportedModel`` applies it; docs/usage.md).

Outputs, for B sentences and the export's beam size k: ``translations`` string (B, k); ``scores``
float (B, k), summed log-probabilities; ``hypotheses`` int32 (B,), how many of the k are translations
(the beam may find fewer; the rest are empty, score 0); ``token_scores`` float (B, k, T) and
``token_counts`` int32 (B, k), each translation's log-probabilities of its symbols and of the end.
A line without words has one empty translation of score 0, as for ``rnnpb_nmt.load``.
"""

import hashlib
import os
import shutil
import sys
import tempfile

import numpy as np
import tensorflow as tf

from rnnpb_nmt import api, flags, tf_stack
from rnnpb_nmt.data.files import write_json, writing
from rnnpb_nmt.data.vocabulary import END_ID, PAD_ID, UNK_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.search import NEG
from rnnpb_nmt.tasks.base import Task
from rnnpb_nmt.train import loop

INFO = os.path.join("assets.extra", "export.json")  # TensorFlow Serving ignores assets.extra
# What export.json holds (``export``), all of which loading an export reads.
INFO_KEYS = ("name", "version", "model", "beam_size", "test_batch_size", "tensorflow_text", "outside", "signatures")
SIGNATURES = {False: "serving_default", True: "reverse"}
MOSES = ("pretokenized", "moses")  # the --tokenize values whose Moses steps stay outside the graph

# Python's str.split() splits at every character ``str.isspace`` accepts (none above U+3000); RE2's \s
# is ASCII only.
_WHITESPACE = "[" + "".join(f"\\x{{{c:x}}}" for c in range(0x3001) if chr(c).isspace()) + "]+"


def split_words(lines):
    """``line.split()`` of each of ``lines`` (B,), in the graph: a ragged (B, None) of words."""
    return tf.strings.split(tf.strings.regex_replace(lines, _WHITESPACE, " "))


def join_words(words):
    """``" ".join(words)`` of each row of a ragged (N, None): (N,) strings."""
    return tf.strings.reduce_join(words, axis=-1, separator=" ")


class _WhitespaceText:
    """The default task's preparation (``Task.tokenize``/``detokenize``): symbols are the words."""

    def graph_tokenize(self, lines, language):
        return split_words(lines)

    def graph_detokenize(self, symbols, language):
        return join_words(symbols)


class _PipelineText(tf.Module):
    """A translation run's ``TextPipeline`` in the graph: its words split at whitespace (Moses, for a
    ``pretokenized`` or ``moses`` run, is the caller's), then its SentencePiece pieces; back, the pieces
    decoded and the words joined with spaces (Moses detokenization again the caller's)."""

    def __init__(self, pipeline, languages):
        super().__init__()
        self.languages = languages  # (lang1, lang2): which side's subword model a language uses
        self.pieces = None
        if pipeline.subword != "none":
            try:
                import tensorflow_text
            except ImportError:
                raise UserError("export: the run has --subword=sentencepiece, whose in-graph op is tensorflow-text's: "
                                "install tensorflow-text (requirements/*.txt pin it)") from None
            # Each its own name: unnamed, the two models' resources are one after a SavedModel is
            # loaded (both become the model restored first), and a language is cut and joined with
            # the other's pieces.
            with tf_stack.library_logs_hidden():  # SentencePiece's LOG(INFO) lines, one a model
                self.pieces = [tensorflow_text.SentencepieceTokenizer(model=model, out_type=tf.string,
                                                                      name=f"sentencepiece_{side}")
                               for side, model in enumerate(pipeline.models, 1)]

    def _model(self, language):
        """Side 2's model for the target language of a run between two languages, else side 1's
        (``TranslationTask._side``)."""
        lang1, lang2 = self.languages
        return self.pieces[1 if language == lang2 and lang1 != lang2 else 0]

    def graph_tokenize(self, lines, language):
        words = split_words(lines)
        if self.pieces is None:
            return words
        return self._model(language).tokenize(join_words(words))

    def graph_detokenize(self, symbols, language):
        if self.pieces is not None:
            symbols = split_words(self._model(language).detokenize(symbols))
        return join_words(symbols)


def text_preparation(task):
    """The in-graph text preparation of ``task``: its own (``graph_tokenize``/``graph_detokenize``,
    the equivalents of ``tokenize``/``detokenize``), a translation run's pipeline, or whitespace
    splitting for a task that keeps ``Task``'s; a task with other Python-only preparation is refused."""
    if hasattr(task, "graph_tokenize"):
        return task
    pipeline = getattr(task, "text", None)
    if pipeline is not None:
        return _PipelineText(pipeline, (task.config.data.lang1, task.config.data.lang2))
    if type(task).tokenize is Task.tokenize and type(task).detokenize is Task.detokenize:
        return _WhitespaceText()
    raise UserError(f"export: --task={task.config.data.task} prepares its text in Python only (no in-graph "
                    "equivalent of its tokenize/detokenize): it cannot be exported")


def outside_steps(task):
    """What the caller does outside the graph, as export.json records it: Moses tokenization of the
    input and detokenization of the output, for a translation run that has them (``TextPipeline``'s
    ``query_words`` and ``detokenize``), else nothing."""
    pipeline = getattr(task, "text", None)
    if pipeline is None or pipeline.tokenize_mode not in MOSES:
        return None
    return "moses"


def _vocabulary_table(vocab):
    """The word -> id lookup of ``vocab`` in the graph (``Vocabulary.encode``: unknown -> ``<unk>``)."""
    words = list(vocab.stoi)
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(words, tf.constant([vocab.stoi[w] for w in words], tf.int64)), UNK_ID)


def _through_end(ids):
    """Where ``ids`` (N, T) are not past their first ``<end>``."""
    return tf.equal(tf.cumsum(tf.cast(tf.equal(ids, END_ID), tf.int32), axis=1, exclusive=True), 0)


class TranslationModule(tf.Module):
    """What the SavedModel holds: ``model``, its vocabularies' lookups, the text preparation, and one
    translation function per direction."""

    def __init__(self, model, text, beam_size):
        super().__init__()
        self.model, self.text, self.beam_size = model, text, beam_size
        self._vocabularies = model.vocabularies  # A's and B's; a reversed view has the same two, swapped
        self.lookups = [_vocabulary_table(v) for v in self._vocabularies]
        self.words = [tf.constant(v.itos) for v in self._vocabularies]

    def signature(self, translator):
        """The concrete function of the signature of ``translator``'s direction: ``text`` (B,) -> the outputs."""
        fn = tf.function(lambda text: self.translate(translator, text),
                         input_signature=[tf.TensorSpec([None], tf.string, name="text")])
        return fn.get_concrete_function()

    def _side(self, vocab):
        """Which of the module's vocabularies (A's, B's) ``vocab`` is."""
        return next(i for i, v in enumerate(self._vocabularies) if v is vocab)

    def translate(self, translator, text):
        """Raw sentences (B,) -> the outputs of the module docstring, in the graph."""
        source_language, target_language = translator.model.languages
        source, target = (self._side(v) for v in translator.model.vocabularies)
        symbols = self.text.graph_tokenize(text, source_language)
        ids = tf.cast(tf.ragged.map_flat_values(self.lookups[source].lookup, symbols), tf.int32)
        ids = tf.concat([ids, tf.fill([ids.nrows(), 1], END_ID)], axis=1).to_tensor(PAD_ID)
        found, scores, token_scores, rank = translator._search_fn(self.beam_size)(ids)
        kept = scores > NEG / 2
        order = tf.argsort(tf.where(kept, rank, float("-inf")), axis=1, direction="DESCENDING", stable=True)
        found, scores, token_scores, kept = (tf.gather(t, order, batch_dims=1) for t in (found, scores, token_scores, kept))
        batch, k, steps = tf.unstack(tf.shape(found))
        flat = tf.reshape(found, [batch * k, steps])
        through_end, padding = _through_end(flat), tf.equal(flat, PAD_ID)
        # ``Vocabulary.decode``: the words before <end>, padding dropped; ``Hypothesis.token_scores``:
        # theirs and the end's (a <pad> the model chose mid-sentence is dropped, as decode drops it).
        words = tf.ragged.boolean_mask(tf.gather(self.words[target], flat),
                                       through_end & ~padding & tf.not_equal(flat, END_ID))
        texts = tf.reshape(self.text.graph_detokenize(words, target_language), [batch, k])
        per_token = tf.ragged.boolean_mask(tf.reshape(token_scores, [batch * k, steps]), through_end & ~padding)
        return _outputs(symbols.row_lengths() > 0, kept, texts, scores, per_token, batch, k)


def _outputs(has_words, kept, texts, scores, per_token, batch, k):
    """The signature's outputs (B sentences, k hypotheses): ``kept`` (B, k) says which hypotheses the
    beam filled; a line without words gets one empty translation of score 0 instead."""
    real = kept & has_words[:, None]
    dense = per_token.to_tensor(0.0)
    token_scores = tf.reshape(dense, [batch, k, tf.shape(dense)[1]])
    counts = tf.reshape(tf.cast(per_token.row_lengths(), tf.int32), [batch, k])
    return {"translations": tf.where(real, texts, ""), "scores": tf.where(real, scores, 0.0),
            "hypotheses": tf.where(has_words, tf.reduce_sum(tf.cast(kept, tf.int32), axis=1), 1),
            "token_scores": tf.where(real[:, :, None], token_scores, 0.0), "token_counts": tf.where(real, counts, 0)}


def version_of(trained):
    """The export's version: the checkpoint's epoch (or the averaged epochs) and a digest of its
    weights, so that two exports of the same weights have one version and new weights another."""
    model = trained.translator.model
    digest = hashlib.sha256()
    for variable in sorted(model.variables, key=lambda v: v.name):
        digest.update(variable.name.encode() + np.ascontiguousarray(variable.numpy()).tobytes())
    averaged = getattr(model, "averaged_epochs", ())
    stats = loop.load_stats(trained.working_dir)
    epochs = "+".join(map(str, averaged)) if averaged else str(stats.best_epoch if stats else 0)
    return f"epoch-{epochs}-{digest.hexdigest()[:12]}"


def refusal(trained):
    """Why the model of ``trained`` cannot be exported, or None: a model says so itself
    (``export_refusal``, e.g. recognition by hundreds of optimiser iterations per sentence)."""
    return getattr(trained.translator.model, "export_refusal", None)


def export(working_dir, out, **settings):
    """Write the SavedModel of the run in ``working_dir`` (translation ``settings`` as ``rnnpb_nmt.load``
    takes them) to ``out``, which must not exist or be empty: written beside it, then renamed, so
    that ``out`` is whole or absent. Returns the export's information (export.json)."""
    _check_out(out)
    trained = api.TrainedModel(working_dir, **settings)
    why = refusal(trained)
    if why:
        raise UserError(f"export: {why}")
    model, config = trained.translator.model, trained.config
    module = TranslationModule(model, text_preparation(trained.task), trained.translator._beam_size(None))
    translators = {SIGNATURES[False]: trained.translator}
    if model.reversible:
        translators[SIGNATURES[True]] = trained.backward
    info = {"name": os.path.basename(os.path.normpath(working_dir)), "version": version_of(trained),
            "model": config.model.model, "beam_size": module.beam_size, "test_batch_size": config.inference.test_batch_size,
            "tensorflow_text": bool(getattr(module.text, "pieces", None)), "outside": outside_steps(trained.task),
            "signatures": {name: _languages(t.model) for name, t in translators.items()}}
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(os.path.normpath(out))}.tmp-", dir=parent)
    try:
        with writing(out, (OSError, tf.errors.OpError)):  # a full disk: one line naming --out
            _save(module, tmp, {name: module.signature(t) for name, t in translators.items()})
            os.makedirs(os.path.join(tmp, os.path.dirname(INFO)))
            write_json(os.path.join(tmp, INFO), info)
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def _save(module, path, signatures):
    """``tf.saved_model.save``, without Keras's warnings about layers that were never built (a layer
    that only holds a variable, such as the refinement's step sizes, is saved whole all the same)."""
    logger = tf.get_logger()
    level = logger.level
    logger.setLevel("ERROR")
    try:
        tf.saved_model.save(module, path, signatures=signatures)
    finally:
        logger.setLevel(level)


def _languages(model):
    """{source, target}: the languages of the direction of ``model`` or a reversed view (Moses's ``lang``)."""
    return dict(zip(("source", "target"), model.languages))


def _check_out(out):
    """``--out`` must be a new or empty directory: an export never replaces anything."""
    if not out:
        raise UserError("--out: empty (give the directory to write the export to)")
    if os.path.exists(out) and not (os.path.isdir(out) and not os.listdir(out)):
        raise UserError(f"--out={out}: already exists and is not empty (an export never overwrites; give a new "
                        "directory)")


def build_parser():
    """``rnnpb-nmt export``'s flags: where from and to, and the translation settings of the
    command line (saved ones are the run's)."""
    parser = flags.Parser(prog=f"{flags.prog()} export", usage="%(prog)s --working_dir=DIR --out=DIR [flags]",
                          description="Write a trained run as a TensorFlow SavedModel that translates raw strings.",
                          example=f"{flags.prog()} export --working_dir=runs/bound --out=exported/bound")
    parser.add_argument("--working_dir", required=True, help="the trained run to export")
    parser.add_argument("--out", required=True, help="the SavedModel's directory (new, or empty)")
    parser.add_section("inference")
    return parser


def main(argv):
    """``rnnpb-nmt export``: 0 when written; a one-line error and 1 for a run that cannot be exported,
    an ``--out`` in use, or a missing or damaged working directory; argparse's 2 for bad flags."""
    args = build_parser().parse_args(argv)
    settings = flags.inference_settings(vars(args))
    try:
        info = export(args.working_dir, args.out, **settings)
    except (UserError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"exported {args.working_dir} to {args.out}: {info['name']} {info['version']}, signatures "
          f"{', '.join(info['signatures'])}, beam size {info['beam_size']}")
    return 0

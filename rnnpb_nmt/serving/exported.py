"""An exported model (``rnnpb-nmt export``) used from Python as a trained run is (``rnnpb_nmt.load``):

    from rnnpb_nmt.serving.exported import ExportedModel
    model = ExportedModel("exports/en-de")
    model.translate(["How are you?"])               # ['Wie geht es dir?'], as load("runs/en-de") translates
    model.name, model.version                       # 'en-de', 'epoch-12-3fa1c2d94e07'

Only TensorFlow runs the model: the SavedModel holds the text preparation, the vocabularies and the
search. What export.json says stays outside the graph (Moses tokenization and detokenization) is done
here with the same ``TextPipeline`` the run uses, so translations equal ``TrainedModel.translate``'s.
"""

import os
import re

import tensorflow as tf

from rnnpb_nmt import tf_stack
from rnnpb_nmt.data.files import read_json_object
from rnnpb_nmt.data.text import TextPipeline
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer.prediction import Translation
from rnnpb_nmt.serving.export import INFO, INFO_KEYS, SIGNATURES


class ExportedModel:
    """The SavedModel in ``path`` and the steps its export left outside the graph."""

    def __init__(self, path):
        self.path, info = path, _read_info(path)
        if info["tensorflow_text"]:
            import tensorflow_text  # noqa: F401  (registers the SentencePiece ops the graph holds)
        self.info, self.name, self.version = info, info["name"], info["version"]
        self.beam_size, self.reversible = info["beam_size"], SIGNATURES[True] in info["signatures"]
        try:
            with tf_stack.library_logs_hidden():  # SentencePiece logs each model it loads
                self._loaded = tf.saved_model.load(path)  # kept: its signatures use its resources
        except (OSError, ValueError, tf.errors.OpError) as e:
            raise UserError(f"{path}: not a loadable SavedModel ({str(e).strip().splitlines()[0]})") from None
        self._outside = info["outside"]

    def translate(self, lines, nbest=1, scores=False, reverse=False):
        """As ``rnnpb_nmt.api.TrainedModel.translate``: raw sentences -> one string each; with ``nbest`` > 1
        or ``scores``, per sentence its ``nbest`` best ``Translation``s, best first. ``reverse``: B -> A."""
        if isinstance(lines, str):
            raise UserError("translate: give a list of sentences, not one string")
        if reverse and not self.reversible:
            raise UserError(f"--reverse_translation: model {self.info['model']} translates one way only")
        if not 1 <= nbest <= self.beam_size:
            raise UserError(f"--nbest={nbest}: must be from 1 to --beam_size={self.beam_size} (the hypotheses the "
                            "search keeps)")
        lines, size, signature = list(lines), self.info["test_batch_size"], SIGNATURES[reverse]
        found = [t for start in range(0, len(lines), size) for t in self._batch(lines[start:start + size], signature)]
        found = [hypotheses[:nbest] for hypotheses in found]
        return found if nbest > 1 or scores else [hypotheses[0].text for hypotheses in found]

    def _batch(self, lines, signature):
        """Per line its ``Translation``s, best first, as the SavedModel's ``signature`` gives them."""
        languages = self.info["signatures"][signature]
        lines = [prepared(line, self._outside, languages["source"]) for line in lines]
        try:
            out = self._loaded.signatures[signature](text=tf.constant(lines, tf.string))
        except tf.errors.InvalidArgumentError as e:  # the graph's check of its input (a task's graph_tokenize)
            refused = re.search(r"assertion failed: \[(.*)\]\n", str(e))
            if not refused:
                raise
            raise UserError(f"translate: {refused.group(1)}") from None
        out = {k: v.numpy() for k, v in out.items()}
        return [[Translation(restored(out["translations"][i, j].decode("utf-8"), self._outside, languages["target"]),
                             float(out["scores"][i, j]),
                             [float(s) for s in out["token_scores"][i, j, :out["token_counts"][i, j]]])
                 for j in range(out["hypotheses"][i])] for i in range(len(lines))]


_MOSES = TextPipeline("moses")  # sacremoses, imported at first use


def prepared(line, outside, language):
    """A raw line as the graph takes it: Moses-tokenized when export.json's ``outside`` is ``moses``
    (``TextPipeline.query_words`` of the run), else as it is."""
    return " ".join(_MOSES.words(line, language)) if outside == "moses" else line


def restored(text, outside, language):
    """A translation the graph gave as raw text: Moses-detokenized when ``outside`` is ``moses``."""
    return _MOSES.detokenize(text.split(), language) if outside == "moses" and text else text


def _read_info(path):
    """export.json of an export directory; a directory that is not one is a one-line error."""
    info = os.path.join(path, INFO)
    if not os.path.isfile(info):
        raise UserError(f"{path}: not an rnnpb-nmt export (no {INFO}; write one with rnnpb-nmt export)")
    read = read_json_object(info)
    missing = [key for key in INFO_KEYS if key not in read]
    if missing:
        raise UserError(f"{info}: corrupted (no {', '.join(map(repr, missing))})")
    if not (isinstance(read["signatures"], dict) and SIGNATURES[False] in read["signatures"]):
        raise UserError(f"{info}: corrupted (its signatures lack {SIGNATURES[False]!r})")
    return read

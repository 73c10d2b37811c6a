"""Sequence transduction (Grefenstette et al. 2015 §4), scored by coarse and fine accuracy.

The data are line-aligned files of whitespace-separated symbols, ``NAME.src`` -> ``NAME.tgt``
(``data/generate_transduction.py`` writes the five synthetic tasks in this form), read and paired
like the translation task's files: the test set ``test.src`` has its reference in ``test.tgt``.
What differs from translation: symbols are not words, so there is no Moses tokenisation, and a
symbol the vocabulary lacks would make an exact output impossible, so it is an error; outputs are
scored by the paper's sequence accuracies instead of BLEU. With ``--fresh_data`` every epoch
trains on new pairs from the generator that wrote the training files (``synthetic.epoch_pairs``).
"""

import dataclasses
import os

from rnnpb_nmt.data.dataset import encode_all
from rnnpb_nmt.data.vocabulary import END, UNK_ID
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.metrics import coarse_accuracy, fine_accuracy
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.base import Task
from rnnpb_nmt.tasks.transduction import synthetic
from rnnpb_nmt.tasks.translation.task import TranslationTask


def refuse_unknown_symbols(loaded, config, source_file, target_file):
    """A UserError naming the --vocab*_max flag when the vocabularies of corpus ``loaded`` lack a
    symbol of its training data (read from ``source_file`` and ``target_file``)."""
    for side, sequences, path in (("1", loaded.train_src, source_file), ("2", loaded.train_tgt, target_file)):
        if any((ids == UNK_ID).any() for ids in sequences):
            flag = f"vocab{side}_max"
            raise UserError(f"--{flag}={getattr(config.data, flag)}: too small for the symbols of "
                            f"{path} (a transduction must be able to output each)")


def refuse_unseen_symbols(loaded, spec, paths):
    """A UserError when the generator of ``spec`` can draw a symbol that the vocabularies of
    ``loaded`` (built from the training files ``paths``, source and target) lack: a fresh pair with
    it could not be encoded, and the run would fail epochs later."""
    alphabets = synthetic.alphabet(spec["task"], spec["vocab_size"])
    for vocab, symbols, path in zip((loaded.vocab1, loaded.vocab2), alphabets, paths):
        missing = sorted(symbol for symbol in symbols if symbol not in vocab.stoi)
        if missing:
            raise UserError(f"--fresh_data: {path} never has {missing[0]} ({len(missing)} such symbols), which "
                            "its generator draws; write more training pairs")


@register_task("transduction")
class TransductionTask(TranslationTask):
    """Symbol sequences in, symbol sequences out; right only when exactly right."""

    dev_metric = "coarse_accuracy"

    def load_corpus(self, data_files, config, vocabularies=None):
        """The translation task's corpus, refused when the vocabularies (``--vocab1_max``,
        ``--vocab2_max``) leave a training symbol out."""
        loaded = super().load_corpus(data_files, config, vocabularies)
        refuse_unknown_symbols(loaded, config, data_files["train_set1"], data_files["train_set2"])
        if config.data.fresh_data:
            self.generator = synthetic.read_generator(os.path.dirname(os.path.abspath(data_files["train_set1"])))
            refuse_unseen_symbols(loaded, self.generator, (data_files["train_set1"], data_files["train_set2"]))
        return loaded

    def epoch_corpus(self, corpus, epoch):
        """``corpus`` with as many fresh training pairs as it has, under --fresh_data."""
        if not self.config.data.fresh_data:
            return corpus
        sources, targets = zip(*synthetic.epoch_pairs(self.generator, len(corpus.train_src), epoch))
        return dataclasses.replace(corpus, train_src=encode_all(corpus.vocab1, sources),
                                   train_tgt=encode_all(corpus.vocab2, targets))

    def score(self, sources, hypotheses, references, target_language):
        """{coarse_accuracy, fine_accuracy} (§4.3). Both sides get the EOS the paper counts: a
        translation ends at the ``<end>`` the model emitted, or at the length cap, which
        ``--max_trans_ratio`` > 1 puts beyond every target of these tasks, where the output is
        already wrong."""
        predictions = [list(h) + [END] for h in hypotheses]
        targets = [list(r) + [END] for r in references]
        return {"coarse_accuracy": coarse_accuracy(predictions, targets),
                "fine_accuracy": fine_accuracy(predictions, targets)}

    def describe(self, scores):
        return f"coarse accuracy {scores['coarse_accuracy']:.4f}, fine accuracy {scores['fine_accuracy']:.4f}"

    tokenize, detokenize = Task.tokenize, Task.detokenize  # symbols as they are: no Moses tokenisation

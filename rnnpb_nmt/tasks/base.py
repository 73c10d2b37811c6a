"""The contract between a task and the rest of the toolkit: what ``--task=NAME`` must provide.

The command line builds a task as ``cls(config, working_dir)`` and then calls only what ``Task``
names: ``--do_training`` checks ``required_files``, reads the data with ``load_corpus``, keeps
``derived`` in hparams.json and ``save``s what else the task derived; ``--early_stopping_metric=score``
takes ``score(...)[dev_metric]`` of the dev set; ``--do_testing`` and ``--analyze`` read a test set
with ``read_test``, and ``--do_testing`` writes ``output_lines`` and prints ``describe`` of
``score``; ``--query``, ``--translate`` and the Python API go through ``tokenize`` and
``detokenize``; an ensemble's vote counts outputs as the same when ``output_lines`` are.

Sequences are lists of symbols (str) throughout: a model sees their ids in the vocabularies the
corpus built. A subclass must set ``required_files`` and ``dev_metric`` and implement the three
abstract methods; the other methods have the defaults of whitespace-separated symbols.
"""

import abc

from rnnpb_nmt.data.corpus import Corpus
from rnnpb_nmt.data.dataset import encode_all
from rnnpb_nmt.data.vocabulary import Vocabulary


class Task(abc.ABC):
    """What a run's data are, how they are read and written, and how outputs are scored."""

    required_files: tuple  # the --*_set flags --do_training needs (each a one-line error if missing)
    dev_metric: str  # the key of ``score``'s result that --early_stopping_metric=score maximises

    def __init__(self, config=None, home=None):
        self.config = config  # the run's ``rnnpb_nmt.config.Config`` (None where a task needs none)
        self.home = home  # the run's working directory, where ``save`` keeps what it derived (or None)

    @abc.abstractmethod
    def load_corpus(self, data_files, config, vocabularies=None):
        """The training and dev data of the --*_set flags (``data_files``: flag -> path) as an
        encoded ``rnnpb_nmt.data.corpus.Corpus``. Vocabularies are built from the training data
        with --vocab1_max/--vocab2_max unless given (a resumed run's, which must be reused). A bad
        file or a flag the task cannot use is a UserError naming it."""

    def derived(self, data_files, loaded):
        """Settings that follow from the data and are saved in hparams.json: the corpus ``loaded``'s
        sizes (a model sizes its tables by them) and ``lang1``/``lang2``, the languages
        ``read_test``, ``score``, ``tokenize`` and ``detokenize`` are told (``und`` by default:
        undetermined, data that are no language)."""
        return dict(loaded.sizes(), lang1="und", lang2="und")

    def epoch_corpus(self, corpus, epoch):
        """The corpus that training epoch ``epoch`` (1-based) trains on: ``corpus``, the one
        ``load_corpus`` read, by default. A task that draws new training pairs every epoch returns
        ``corpus`` with them in its place, the same for the same epoch, so that a resumed run trains
        on what the uninterrupted one did; the dev set and vocabularies stay ``corpus``'s."""
        return corpus

    def save(self, home):
        """Write into the working directory ``home`` what the task derived from the training data
        beyond the vocabularies (the translation task's subword models); none by default."""
        return None

    @abc.abstractmethod
    def read_test(self, test_set, reference, target_language):
        """(source sequences, reference sequences or None, where the references came from or None)
        of a test file. ``reference`` is --test_ref, or None for the task to find its own; a test
        set without references is translated but not scored. Misaligned files are a UserError."""

    @abc.abstractmethod
    def score(self, sources, hypotheses, references, target_language):
        """{name: score} of output sequences against references (``dev_metric`` among the names,
        higher better); saved in testing_stats.json. ``references`` are either ``read_test``'s or
        the dev set's targets as ``load_corpus`` encoded them."""

    def describe(self, scores):
        """The line --do_testing prints about ``scores`` (``score``'s result, among other stats)."""
        return f"{self.dev_metric.replace('_', ' ')} {scores[self.dev_metric]:.4f}"

    def output_lines(self, sources, hypotheses):
        """The lines of --do_testing's test_trans.txt, one per test line: the outputs' symbols."""
        return [" ".join(h) for h in hypotheses]

    def tokenize(self, lines, language):
        """--query's raw input lines -> source sequences, as ``load_corpus`` reads the training data;
        a line without symbols gives an empty sequence (and an empty output line)."""
        return [line.split() for line in lines]

    def detokenize(self, outputs, language):
        """Output sequences -> the raw lines --query prints."""
        return [" ".join(tokens) for tokens in outputs]


def encode_corpus(train, dev, config, vocabularies=None):
    """The ``Corpus`` of ``train`` and ``dev``, each (source sequences, target sequences): for a task
    that reads its own files; vocabularies as ``Task.load_corpus`` says."""
    if vocabularies:
        vocab1, vocab2 = vocabularies
    else:
        vocab1, vocab2 = (Vocabulary.build(side, getattr(config.data, f"vocab{n}_max"))
                          for n, side in (("1", train[0]), ("2", train[1])))
    return Corpus(vocab1, vocab2, *(encode_all(vocab, side) for vocab, side in
                                    ((vocab1, train[0]), (vocab2, train[1]), (vocab1, dev[0]), (vocab2, dev[1]))))

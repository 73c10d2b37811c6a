"""English question formation (McCoy, Frank & Linzen 2018): scored by whole outputs, first words
and which auxiliary an output moved.

Training and dev data are the line-aligned ``NAME.src`` / ``NAME.tgt`` files of
``data/generate_questions.py``, read like the transduction task's (symbols, no tokenisation). A
test file is one of:

- ``NAME.src`` with its outputs in ``NAME.tgt`` beside it (or ``--test_ref``);
- the shared sets' ``INPUT<TAB>OUTPUT`` lines (``question.dev``);
- inputs only (``question.test-covered``, ``question.gen-covered``): predicted, not scored. Their
  gold outputs are withheld, as in the shared task, and an outside scorer reads the predictions;
  the grammar could derive them, but a test set scored here could be tuned on. Generalisation
  is measured on the generator's own ``gen`` set (``NAME.src`` + ``NAME.tgt``), a dev figure.

``test_trans.txt`` has one ``INPUT<TAB>PREDICTION`` line per test line, in input order: the form
the shared sets' outside scorer reads.
"""


from rnnpb_nmt.data.dataset import read_lines
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.question_formation import questions
from rnnpb_nmt.tasks.question_formation.grammar import Grammar
from rnnpb_nmt.tasks.transduction.task import TransductionTask


@register_task("question_formation")
class QuestionFormationTask(TransductionTask):
    """Declaratives and task words in, the sentence or its question out."""

    dev_metric = "full_sentence_accuracy"  # the authors' code stopped on it (docs/models/seq2seq.md, question formation)

    def __init__(self, config=None, home=None):
        super().__init__(config, home)
        self._grammar, self._parsed = None, {}  # parses by input: a covered file's are needed twice

    def derived(self, data_files, loaded):
        self.grammar()  # a run that could not be scored fails now, not after training
        return super().derived(data_files, loaded)

    def grammar(self):
        """The run's grammar (``--grammar``), read once."""
        if self._grammar is None:
            path = self.config.data.grammar if self.config else None
            if not path:
                raise UserError("--task=question_formation needs --grammar (the grammar of the sentences, question.gr)")
            self._grammar = Grammar.read(path)
        return self._grammar

    def read_test(self, test_set, reference, target_language):
        """(inputs, references or None, where the references come from): a file of inputs only
        has none, so it is predicted and not scored (the module's docstring says why)."""
        lines = [text.rstrip("\r") for _, text in read_lines(test_set)]
        for number, line in enumerate(lines, 1):
            if not line.split():
                raise UserError(f"{test_set}:{number}: empty line")
        tabbed = ["\t" in line for line in lines]
        if any(tabbed) and not all(tabbed):
            raise UserError(f"{test_set}:{tabbed.index(False) + 1}: no TAB, where other lines are INPUT<TAB>OUTPUT")
        if all(tabbed):
            return ([line.split("\t")[0].split() for line in lines], [line.split("\t")[1].split() for line in lines],
                    test_set)
        sources, references, path = super().read_test(test_set, reference, target_language)
        for number, source in enumerate(sources, 1):
            questions.split_input(source, f"{test_set}:{number}")  # each input ends with its task word
        return sources, references, path

    def _analyses(self, sources, where):
        grammar = self.grammar()
        for n, source in enumerate(sources, 1):
            if tuple(source) not in self._parsed:
                sentence = questions.split_input(source, f"{where}:{n}")[0]
                self._parsed[tuple(source)] = questions.Analysis(grammar, sentence, f"{where}:{n}")
        return [self._parsed[tuple(source)] for source in sources]

    def output_lines(self, sources, hypotheses):
        return [f"{' '.join(s)}\t{' '.join(h)}" for s, h in zip(sources, hypotheses)]

    def score(self, sources, hypotheses, references, target_language):
        """Full-sentence and first-word accuracy, overall and per task word; for the ``quest``
        inputs whose main auxiliary is not the first (the generalization set's), the share of
        each category of McCoy et al. (``questions.CATEGORIES``) and "other"."""
        scores = accuracies(hypotheses, references)
        for task in (questions.DECL, questions.QUEST):
            rows = [i for i, s in enumerate(sources) if s[-1] == task]
            if rows:
                scores[task] = accuracies([hypotheses[i] for i in rows], [references[i] for i in rows])
        hierarchical = []
        for source, analysis, hypothesis in zip(sources, self._analyses(sources, "test input"), hypotheses):
            if source[-1] == questions.QUEST and analysis.main != analysis.first:
                hierarchical.append(questions.category(source[:-1], analysis, hypothesis))
        if hierarchical:
            names = [name for name, _, _ in questions.CATEGORIES] + ["other"]
            scores["categories"] = {name: hierarchical.count(name) / len(hierarchical) for name in names}
            scores["categorised"] = len(hierarchical)
        return scores

    def describe(self, scores):
        text = (f"full-sentence accuracy {scores['full_sentence_accuracy']:.4f}, "
                f"first-word accuracy {scores['first_word_accuracy']:.4f}")
        if "categories" in scores:
            moved = scores["categories"]
            text += (f"; of {scores['categorised']} questions whose main auxiliary is not the first: "
                     f"move main {moved['delete_main_prepose_main']:.4f}, "
                     f"move first {moved['delete_first_prepose_first']:.4f}")
        return text


def accuracies(hypotheses, references):
    """{sentences, full_sentence_accuracy, first_word_accuracy} of outputs against references."""
    n = len(references)
    return {"sentences": n,
            "full_sentence_accuracy": sum(list(h) == list(r) for h, r in zip(hypotheses, references)) / n,
            "first_word_accuracy": sum(bool(h) and h[0] == r[0] for h, r in zip(hypotheses, references)) / n}

"""The task contract (``rnnpb_nmt.tasks.base.Task``): every registered task keeps it, and a new
task of a few lines, registered, is read, scored, trained and tested through it alone."""

import inspect
import json

import pytest

from rnnpb_nmt import cli, registry
from rnnpb_nmt.config import Config
from rnnpb_nmt.data.dataset import read_sentences
from rnnpb_nmt.registry import register_task
from rnnpb_nmt.tasks.base import Task, encode_corpus
from rnnpb_nmt.tasks.inflection.task import source_symbols

from helpers import TINY_GRAMMAR, signal_handlers_kept, write_lines


class UppercaseTask(Task):
    """Letters in, the same letters in capitals out (one space-separated sequence per line)."""

    required_files = ("train_set1", "dev_set1")  # the targets follow from the sources
    dev_metric = "accuracy"

    def load_corpus(self, data_files, config, vocabularies=None):
        train, dev = (self.read_test(data_files[flag], None, None)[:2] for flag in self.required_files)
        return encode_corpus(train, dev, config, vocabularies)

    def read_test(self, test_set, reference, target_language):
        sources = read_sentences(test_set)
        return sources, [[letter.upper() for letter in s] for s in sources], test_set

    def score(self, sources, hypotheses, references, target_language):
        return {"accuracy": sum(h == r for h, r in zip(hypotheses, references)) / len(references)}


@pytest.fixture
def uppercase(monkeypatch, tmp_path):
    """``--task=uppercase`` registered for one test (later tests see the real tasks only), and its
    training and dev files."""
    monkeypatch.setattr(registry, "_TASKS", dict(registry.tasks()))
    register_task("uppercase")(UppercaseTask)
    (tmp_path / "train").write_text("a b\nb c a\nc c\n")
    (tmp_path / "dev").write_text("c a\n")
    return {"train_set1": str(tmp_path / "train"), "dev_set1": str(tmp_path / "dev")}


def test_every_registered_task_is_a_task_that_keeps_the_contract():
    for name, cls in registry.tasks().items():
        assert issubclass(cls, Task) and not inspect.isabstract(cls), name
        assert cls.required_files and all(flag.startswith(("train_", "dev_")) for flag in cls.required_files), name
        assert isinstance(cls(Config()), Task), name


def no_settings(folder):
    return {}


def a_grammar(folder):
    return {"grammar": str(write_lines(folder / "tiny.gr", TINY_GRAMMAR.splitlines()))}


# Per registered task: the settings its score needs (files in ``folder``), and a test sequence it
# scores: (source, reference, a wrong output). A new task adds its own.
SCORED = {
    "translation": (no_settings, "the dog sees the cat .".split(), "der Hund sieht die Katze .".split(),
                    "die Katze sieht den Hund .".split()),
    "transduction": (no_settings, list("abc"), list("cba"), list("abc")),
    "inflection": (no_settings, source_symbols("gehen", ["tense=PST"]), list("ging"), list("gehte")),
    "question_formation": (a_grammar, "the newt does sleep . quest".split(), "does the newt sleep ?".split(),
                           "the newt does sleep ?".split()),
}


@pytest.mark.parametrize("name", sorted(registry.tasks()))
def test_every_registered_tasks_dev_metric_is_a_score_it_gives_that_the_right_output_raises(name, tmp_path):
    """What --early_stopping_metric=score maximises: ``score(...)[dev_metric]``."""
    assert name in SCORED, f"--task={name}: give SCORED an example it scores"
    settings, source, reference, wrong = SCORED[name]
    task = registry.tasks()[name](Config().replace(task=name, **settings(tmp_path)))
    right, wrong = (task.score([source], [output], [reference], "de") for output in (reference, wrong))
    assert task.dev_metric in right and right[task.dev_metric] > wrong[task.dev_metric], (right, wrong)


def test_a_task_without_a_score_cannot_be_built():
    class Unscored(UppercaseTask):
        score = Task.score

    with pytest.raises(TypeError, match="score"):
        Unscored()


def test_a_new_task_reads_and_scores_through_the_contract(uppercase):
    task = registry.tasks()["uppercase"](Config())
    loaded = task.load_corpus(uppercase, Config())
    assert [loaded.vocab2.decode(ids) for ids in loaded.train_tgt] == [["A", "B"], ["B", "C", "A"], ["C", "C"]]
    assert task.derived(uppercase, loaded) == dict(num_train=3, num_mono1=0, num_mono2=0, longest1=3, longest2=3,
                                                   lang1="und", lang2="und")
    sources, references, _ = task.read_test(uppercase["dev_set1"], None, "und")
    assert task.describe(task.score(sources, [["C", "A"]], references, "und")) == "accuracy 1.0000"
    assert task.describe(task.score(sources, [["C"]], references, "und")) == "accuracy 0.0000"
    assert task.output_lines(sources, [["C", "A"]]) == ["C A"]
    assert task.tokenize(["c a", ""], "und") == [["c", "a"], []]


@pytest.mark.slow  # trains a model
def test_a_new_task_trains_and_tests_through_the_command_line(uppercase, tmp_path):
    run = tmp_path / "run"
    flags = [f"--{flag}={path}" for flag, path in uppercase.items()]
    with signal_handlers_kept():  # main installs the command line's handlers; they are not this test process's
        assert cli.main(registry.models(), registry.tasks(), [
            "--do_training", "--do_testing", "--task=uppercase", "--model=encdec", *flags,
            f"--test_set={uppercase['dev_set1']}", f"--working_dir={run}", "--embedding_size=8", "--units=8",
            "--num_layers=1", "--batch_size=2", "--max_epochs=1"]) == 0
    assert json.loads((run / "hparams.json").read_text())["task"] == "uppercase"
    assert set(json.loads((run / "testing_stats.json").read_text())) >= {"accuracy", "reference"}
    assert len((run / "test_trans.txt").read_text().splitlines()) == 1

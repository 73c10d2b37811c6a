"""--do_testing with and without a usable reference."""

import json
import shutil

import pytest

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import prediction

from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.tasks.translation.task import TranslationTask

from helpers import untrained_working_dir


def test_a_test_set_without_reference_is_translated_but_not_scored(demo_data, tmp_path):
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", beam_size=2)
    shutil.copy(demo_data / "test.en", tmp_path / "alone.en")  # no alone.de beside it
    logged = []
    stats = prediction.test(Translator(model), TranslationTask(), str(tmp_path / "alone.en"), str(tmp_path),
                            log=logged.append)
    assert "bleu" not in stats and json.loads((tmp_path / "testing_stats.json").read_text()) == stats
    assert any("no reference found" in line and "alone.de" in line for line in logged)
    assert len((tmp_path / "test_trans.txt").read_text().split("\n")) == stats["sentences"] + 1


def test_a_reference_of_another_length_is_an_error(demo_data, tmp_path):
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", beam_size=2)
    (tmp_path / "short.de").write_text("Der Hund .\n")
    with pytest.raises(UserError, match="test.en has .* lines but its reference .*short.de has 1"):
        prediction.test(Translator(model), TranslationTask(), str(demo_data / "test.en"), str(tmp_path),
                        str(tmp_path / "short.de"))


class _Silent(Translator):
    """A translator whose every second translation is empty (a model that gives up on them)."""

    def translate(self, sentences, **options):
        return [[] if i % 2 else ["x"] for i in range(len(sentences))]


def test_empty_translations_are_counted_and_warned_of(demo_data, tmp_path):
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", beam_size=2)
    logged = []
    stats = prediction.test(_Silent(model), TranslationTask(), str(demo_data / "test.en"), str(tmp_path), log=logged.append)
    assert stats["empty_translations"] == stats["sentences"] // 2
    assert f"warning: {stats['sentences'] // 2} of {stats['sentences']} translations are empty" in logged


def test_an_ensemble_of_members_that_prepare_text_otherwise_is_refused():
    from rnnpb_nmt.cli import _check_same_preparation
    from rnnpb_nmt.config import Config

    tasks = [TranslationTask(Config().replace(tokenize=kind)) for kind in ("pretokenized", "pretokenized", "moses")]
    _check_same_preparation(["a", "b"], tasks[:2])
    with pytest.raises(UserError, match=r"^--ensemble: c prepares its text otherwise than a \(--tokenize, --subword"):
        _check_same_preparation(["a", "b", "c"], tasks)


class _Echo(Translator):
    """A translator that writes its inputs back, and ``first`` symbols for the first of them."""

    def __init__(self, model, first):
        super().__init__(model)
        self.first = first

    def translate(self, sentences, **options):
        return [["x"] * self.first] + [list(s) for s in sentences[1:]]


def test_inputs_longer_than_any_training_sentence_are_warned_of_in_one_line(demo_data, tmp_path, capsys):
    lines = [" ".join(["the"] * n) for n in (12, 3, 9, 11)]
    (tmp_path / "long.en").write_text("".join(line + "\n" for line in lines))
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", longest1=8, max_trans_ratio=1.5)
    prediction.test(_Echo(model, 4), TranslationTask(), str(tmp_path / "long.en"), str(tmp_path), log=lambda _: None)
    assert capsys.readouterr().err == (
        f"warning: {tmp_path}/long.en:1: 12 tokens, longer than any training sentence (8); translated into 4 "
        f"(--max_trans_ratio=1.5 allows 18); also {tmp_path}/long.en:3, {tmp_path}/long.en:4\n")
    prediction.test(_Echo(model, 18), TranslationTask(), str(tmp_path / "long.en"), str(tmp_path), log=lambda _: None)
    assert "translated into 18 (cut at the length cap --max_trans_ratio=1.5)" in capsys.readouterr().err
    old_run = untrained_working_dir(tmp_path, demo_data, model="encdec")  # longest1 0: from before it was kept
    prediction.test(_Echo(old_run, 4), TranslationTask(), str(tmp_path / "long.en"), str(tmp_path), log=lambda _: None)
    assert capsys.readouterr().err == ""

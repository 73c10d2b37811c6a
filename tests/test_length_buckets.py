"""BLEU by source-length bucket (issue 16): the translation task scores each bucket as its own corpus."""

import json

import pytest

from rnnpb_nmt.infer import prediction
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.metrics import bleu
from rnnpb_nmt.tasks.translation.task import TranslationTask, bleu_by_source_length

from helpers import untrained_working_dir

REFERENCE = "der kleine hund sieht die große katze".split()


def test_a_perfect_bucket_scores_100_a_wrong_one_0_and_an_empty_one_none():
    sources = [["a"] * 4, ["a"] * 5, ["a"] * 7, ["a"] * 8]
    references = [REFERENCE, REFERENCE[:5], REFERENCE, REFERENCE[1:]]
    hypotheses = [REFERENCE, REFERENCE[:5], "x y z u v w".split(), "p q r s t".split()]
    scores = bleu_by_source_length(sources, [" ".join(h) for h in hypotheses], [" ".join(r) for r in references])
    assert scores == {"1-5": {"bleu": pytest.approx(100.0), "sentences": 2},
                      "6-8": {"bleu": 0.0, "sentences": 2}, "9+": {"bleu": None, "sentences": 0}}


def test_a_bucket_holding_every_sentence_has_the_corpus_bleu():
    sources = [["a"] * 9, ["a"] * 12, ["a"] * 30]
    references = [REFERENCE, REFERENCE[::-1], REFERENCE[2:]]
    hypotheses = [REFERENCE[:-1], REFERENCE, REFERENCE[1:]]
    hyps, refs = [" ".join(h) for h in hypotheses], [" ".join(r) for r in references]
    scores = TranslationTask().score(sources, hypotheses, references, "de")
    assert 0 < scores["bleu"] < 100
    assert scores["bleu_by_source_length"]["9+"] == {"bleu": pytest.approx(bleu(hyps, refs)), "sentences": 3}
    assert "9+ source words: " + f"{scores['bleu']:.2f} (3 sentences)" in TranslationTask().describe(scores)


def test_do_testing_records_the_buckets_of_every_test_sentence(demo_data, tmp_path):
    model = untrained_working_dir(tmp_path, demo_data, model="encdec", beam_size=2)
    logged = []
    stats = prediction.test(Translator(model), TranslationTask(), str(demo_data / "test.en"), str(tmp_path),
                            log=logged.append)
    buckets = json.loads((tmp_path / "testing_stats.json").read_text())["bleu_by_source_length"]
    assert list(buckets) == ["1-5", "6-8", "9+"]
    assert sum(b["sentences"] for b in buckets.values()) == stats["sentences"]
    assert any("1-5 source words" in line for line in logged)

"""Early stopping's options: --min_epochs, --early_stopping_ties."""

import pytest

from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.train import loop as training


@pytest.fixture
def flat_dev(monkeypatch):
    """A dev perplexity that never changes: epoch 1 improves on nothing, every later epoch ties it."""
    monkeypatch.setattr(Translator, "dev_perplexity", lambda self, src, tgt, **_: 5.0)


def run(make_trainer, corpus, working_dir, **changes):
    """A short-epoch run of the tiny model; (its statistics, whether it counts as finished, its log)."""
    trainer = make_trainer(epoch_examples=32, max_epochs=10, **changes)
    lines = []
    stats = training.train(trainer, corpus, str(working_dir), log=lines.append)
    return stats, training.is_finished(stats, trainer.model.config), lines


def test_early_stopping_waits_for_min_epochs(setup, tmp_path, flat_dev):
    """Patience 1 stops after epoch 2, or after --min_epochs; either way the run is finished (not resumed)."""
    make_trainer, corpus = setup
    stopped = {}
    for minimum in (0, 4):
        stats, finished, _ = run(make_trainer, corpus, tmp_path / f"min{minimum}", early_stopping_steps=1,
                                 min_epochs=minimum)
        assert finished
        stopped[minimum] = len(stats.epochs)
    assert stopped == {0: 2, 4: 4}


@pytest.mark.parametrize("ties, best", [("first", 1), ("last", 3)])
def test_a_tie_counts_as_no_improvement_and_is_the_best_epoch_only_with_ties_last(setup, tmp_path, flat_dev,
                                                                                 ties, best):
    make_trainer, corpus = setup
    stats, _, lines = run(make_trainer, corpus, tmp_path, early_stopping_steps=2, early_stopping_ties=ties)
    assert len(stats.epochs) == 3 and stats.waited == 2  # patience ran out either way
    assert stats.best_epoch == best
    assert [line.endswith("(best)") for line in lines if line.startswith("epoch ")] == [e <= best for e in (1, 2, 3)]


def test_the_kept_best_epochs_follow_the_tie_rule():
    records = [{"epoch": e, "dev_perplexity": p} for e, p in enumerate([5.0, 4.0, 4.0, 6.0, 4.0], start=1)]
    assert training.best_epochs(records, 2, "perplexity") == [2, 3]
    assert training.best_epochs(records, 2, "perplexity", ties="last") == [5, 3]
    assert training.kept_epochs(records, 1, "perplexity", ties="last") == [5]


def test_before_a_best_epoch_nothing_ties_not_even_an_infinite_measure():
    """The first measured epoch is compared with a stand-in (an infinite perplexity, a score of minus
    infinity); an epoch that overflows to that value neither improves on it nor ties it."""
    empty = {"best_epoch": None, "epochs": []}
    for metric, worst in (("perplexity", float("inf")), ("score", float("-inf"))):
        row = {"dev_perplexity": worst, "dev_score": worst}
        assert not training.improves(row, empty, metric) and not training.ties(row, empty, metric)
    best = {"best_epoch": 1, "epochs": [{"dev_perplexity": 4.0, "dev_score": 30.0}]}
    assert training.ties({"dev_perplexity": 4.0}, best, "perplexity") and training.ties({"dev_score": 30.0}, best, "score")
    assert not training.ties({"dev_perplexity": 4.5}, best, "perplexity")

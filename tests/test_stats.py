"""Typed run statistics (``rnnpb_nmt.run_stats``): training_stats.json reads and writes as before,
an epoch averages its steps' numbers, and a damaged file is a one-line error naming it."""

import json
import math

import pytest

from rnnpb_nmt.data.files import write_json
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.run_stats import STATS, EpochRecord, EpochTotals, RunStatistics, StepResult, TrainedEpoch, load_stats
from rnnpb_nmt.train import loop as training

from helpers import ROOT, tiny_config

OLD_RUNS = {name: ROOT / "tests" / "fixtures" / f"workdir_{name}_v1" for name in ("encdec", "rnnpb")}


@pytest.mark.parametrize("name", sorted(OLD_RUNS))
def test_an_old_runs_statistics_write_back_byte_for_byte(name, tmp_path):
    stats = load_stats(OLD_RUNS[name])
    write_json(tmp_path / STATS, stats.to_json())
    assert (tmp_path / STATS).read_bytes() == (OLD_RUNS[name] / STATS).read_bytes()
    assert (len(stats.epochs), stats.best_epoch, stats.waited, stats.state_checkpoint) == (2, 2, 0, "ckpt-2")
    assert stats.best_dev_perplexity == stats.epochs[1].dev_perplexity == stats["epochs"][1]["dev_perplexity"]
    assert list(stats) == ["epochs", "best_epoch", "best_dev_perplexity", "waited", "total_seconds", "state_checkpoint"]


@pytest.mark.parametrize("name", sorted(OLD_RUNS))
def test_a_record_made_of_an_epochs_parts_is_the_row_an_old_run_wrote(name):
    row = json.loads((OLD_RUNS[name] / STATS).read_text())["epochs"][0]
    trained = TrainedEpoch(row["train_perplexity"], row["train_seconds"],
                           {key[len("mean_"):]: value for key, value in row.items() if key.startswith("mean_")})
    record = EpochRecord.of(1, trained, row["seconds"], dev_perplexity=row["dev_perplexity"],
                            model_scalars={key: value for key, value in row.items() if "/" in key})
    assert list(record.to_json().items()) == list(row.items())


def test_a_records_measures_go_where_the_file_keeps_them():
    record = EpochRecord.of(3, TrainedEpoch(5.0, 2.0, {"loss": 1.5}), 4.0, dev_perplexity=6.0, dev_score=0.5,
                            model_scalars={"learning_rate/weights": 0.1}, dev_bleu=12.0)
    assert list(record) == ["epoch", "train_perplexity", "dev_perplexity", "dev_score", "train_seconds", "seconds",
                            "mean_loss", "learning_rate/weights", "monitor/dev_bleu"]
    assert (record.dev_perplexity, record.dev_score, record.dev_bleu) == (6.0, 0.5, 12.0)
    unmeasured = EpochRecord.of(4, TrainedEpoch(5.0, 2.0, {}), 3.0)
    assert list(unmeasured) == ["epoch", "train_perplexity", "train_seconds", "seconds"]
    assert (unmeasured.dev_perplexity, unmeasured.dev_score, unmeasured.dev_bleu) == (None, None, None)


def test_an_epoch_averages_each_number_over_the_steps_that_have_it_and_perplexity_apart():
    """A monolingual step has no translation perplexity and no prediction_b; the training
    perplexity is the model's ``perplexity`` term's mean, never a ``mean_perplexity``."""
    totals = EpochTotals()
    for outputs in ({"prediction_a": 1.0, "perplexity_mono1": 3.0, "grad_norm_weights": 2.0, "loss": 1.0},
                    {"prediction_a": 3.0, "prediction_b": 4.0, "perplexity": 10.0, "grad_norm_weights": 4.0, "loss": 7.0},
                    {"prediction_a": 5.0, "prediction_b": 6.0, "perplexity": 20.0, "grad_norm_weights": 6.0, "loss": 11.0}):
        totals.add(StepResult.from_outputs(outputs))
    epoch = totals.epoch(seconds=9.0)
    assert totals.steps == 3 and epoch.perplexity == 15.0 and epoch.seconds == 9.0
    assert dict(epoch.means) == {"prediction_a": 3.0, "perplexity_mono1": 3.0, "grad_norm_weights": 4.0, "loss": 19 / 3,
                                 "prediction_b": 5.0}
    assert list(epoch.means) == ["prediction_a", "perplexity_mono1", "grad_norm_weights", "loss", "prediction_b"]
    assert math.isnan(EpochTotals().epoch(seconds=0.0).perplexity)


@pytest.mark.parametrize("outputs, finite", [
    ({"perplexity": 2.0, "grad_norm_weights": 1.0, "loss": 0.5}, True),
    ({"perplexity": math.nan, "grad_norm_weights": 1.0, "loss": 0.5}, False),
    ({"perplexity": 2.0, "grad_norm_weights": math.inf, "loss": 0.5}, False),
    ({"grad_norm_weights": 1.0, "loss": -math.inf}, False),
])
def test_a_step_is_finite_only_when_every_number_is(outputs, finite):
    assert StepResult.from_outputs(outputs).finite is finite


def test_the_statistics_after_an_epoch_keep_the_best_and_count_the_others():
    def record(epoch, dev):
        return EpochRecord.of(epoch, TrainedEpoch(9.0, 1.0, {}), 2.0, dev_perplexity=dev)

    stats = RunStatistics().after_epoch(record(1, 8.0), improved=True).saved_as("ckpt-1")
    stats = stats.after_epoch(record(2, 8.5), improved=False)
    assert (stats.best_epoch, stats.best_dev_perplexity, stats.waited, stats.total_seconds) == (1, 8.0, 1, 4.0)
    assert "state_checkpoint" not in stats.to_json()  # epoch 2's state is not saved yet
    assert stats.saved_as("ckpt-2").to_json() == {
        "epochs": [record(1, 8.0).to_json(), record(2, 8.5).to_json()], "best_epoch": 1, "best_dev_perplexity": 8.0,
        "waited": 1, "total_seconds": 4.0, "state_checkpoint": "ckpt-2"}
    assert not training.improves(record(3, 8.0), stats, "perplexity") and training.improves(record(3, 7.9), stats, "perplexity")


def test_a_run_is_finished_once_it_waited_long_enough_or_reached_max_epochs(tmp_path):
    config = tiny_config(max_epochs=3, early_stopping_steps=2)
    row = EpochRecord.of(1, TrainedEpoch(9.0, 1.0, {}), 2.0, dev_perplexity=8.0)
    assert load_stats(tmp_path) is None and not training.is_finished(None, config)
    assert not training.is_finished(RunStatistics(epochs=(row,) * 2, best_epoch=1, waited=1), config)
    assert training.is_finished(RunStatistics(epochs=(row,) * 2, best_epoch=None, waited=2), config)
    assert training.is_finished(RunStatistics(epochs=(row,) * 3, best_epoch=3, waited=0), config)


VALID = {"epochs": [{"epoch": 1, "seconds": 2.0}], "best_epoch": 1, "best_dev_perplexity": 3.0, "waited": 0,
         "total_seconds": 2.0}


@pytest.mark.parametrize("text, reason", [
    ("{not json", "Expecting property name enclosed in double quotes"),
    (b"\xff\xfe", "'utf-8' codec can't decode"),
    ('{"epochs": []}', "not the statistics of a training run"),
    ("[]", "not a JSON object"),
    (json.dumps(dict(VALID, epochs={"1": {}})), "not the statistics of a training run"),
    (json.dumps(dict(VALID, waited="0")), "not the statistics of a training run"),
    (json.dumps(dict(VALID, total_seconds=None)), "not the statistics of a training run"),
    (json.dumps(dict(VALID, state_checkpoint=3)), "not the statistics of a training run"),
    (json.dumps(dict(VALID, epochs=[[1, 2]])), "a row of its epochs is not an object of numbers"),
    (json.dumps(dict(VALID, epochs=[{"epoch": "1"}])), "a row of its epochs is not an object of numbers"),
    (json.dumps(dict(VALID, best_epoch=2)), "best_epoch 2 is not one of its 1 epochs"),
])
def test_damaged_statistics_are_a_one_line_error_naming_the_file(tmp_path, text, reason):
    path = tmp_path / STATS
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(UserError) as error:
        load_stats(tmp_path)
    message = str(error.value)
    assert message.startswith(f"{path}: corrupted (") and reason in message and "\n" not in message


def test_statistics_without_a_state_checkpoint_load_and_write_back_without_one(tmp_path):
    """``state_checkpoint`` is optional: without one a run has no state to resume (``train``
    starts it over, as it always did)."""
    (tmp_path / STATS).write_text(json.dumps(VALID))
    stats = load_stats(tmp_path)
    assert stats.state_checkpoint is None and stats.to_json() == VALID

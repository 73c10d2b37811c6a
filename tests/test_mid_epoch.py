"""Positions inside an epoch (--save_every_steps, ``rnnpb_nmt.train.mid_epoch``): saved and resumed
whole, the noise generator and the epoch's running sums included; a stale, damaged or unwritable
one never costs the last good position. Runs stopped inside an epoch and resumed through the
command line: ``tests/test_resume_models.py``."""

import json
import math

import numpy as np
import pytest
import tensorflow as tf

from rnnpb_nmt.errors import UserError
from rnnpb_nmt.run_stats import EpochTotals, StepResult
from rnnpb_nmt.train.mid_epoch import MID_EPOCH, POSITION, UNDISTRIBUTED, MidEpoch

from helpers import cli_in_process, reversal_files


def stand_in():
    """A model's stand-in (one variable) and a generator, as the Trainer's."""
    model = tf.Module()
    model.w = tf.Variable(tf.zeros([3]))
    return model, tf.random.Generator.from_seed(7)


def totals_of(*steps):
    totals = EpochTotals()
    for loss, perplexity, binding in steps:
        others = {} if binding is None else {"binding": binding}
        totals.add(StepResult(loss, perplexity, others))
    return totals


STEPS = [(0.1, 3.7, 0.25), (0.3, None, None), (0.7, 1.1, 0.5)]  # the second a monolingual batch


def test_running_sums_go_on_from_their_json_as_if_never_saved():
    """An epoch's means from totals saved after two steps (through JSON text, as position.json)
    and added to are those of the same steps added at once, exactly."""
    whole = totals_of(*STEPS)
    resumed = EpochTotals.from_json(json.loads(json.dumps(totals_of(*STEPS[:2]).to_json())))
    resumed.add(StepResult(*STEPS[2][:2], {"binding": STEPS[2][2]}))
    assert resumed.steps == 3 and resumed.epoch(1.0) == whole.epoch(1.0)
    assert whole.epoch(1.0).means["binding"] == 0.375 and math.isclose(whole.epoch(1.0).perplexity, 2.4)
    for damaged in ({}, {"steps": -1, "perplexity": [0, 0], "means": {}}, {"steps": 1, "perplexity": [0, 2], "means": {}},
                    {"steps": 1, "perplexity": [0, 0], "means": {"loss": "x"}}, []):
        with pytest.raises(ValueError):
            EpochTotals.from_json(damaged)


def test_a_position_resumes_its_state_and_generator_and_is_deleted_once_the_epoch_is_saved(tmp_path):
    model, rng = stand_in()
    midway = MidEpoch(str(tmp_path), model, (), rng)
    model.w.assign([1.0, 2.0, 3.0])
    midway.save(2, totals_of(*STEPS[:2]), 12.5)
    midway.save(2, totals_of(*STEPS), 20.0)
    expected_draws = rng.normal([4]).numpy()
    assert sorted(p.name for p in (tmp_path / MID_EPOCH).iterdir()) == [
        "epoch-2-step-3.data-00000-of-00001", "epoch-2-step-3.index", POSITION]  # step 2's files pruned

    model, rng = stand_in()  # a new process
    again = MidEpoch(str(tmp_path), model, (), rng)
    assert again.resume(3) is None and again.saved is None  # stale: epoch 2 was saved whole
    assert not model.w.numpy().any()
    position = again.resume(2)
    assert position.where() == "step 3 of epoch 2" and position.seconds == 20.0 and again.saved == position
    np.testing.assert_array_equal(model.w.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(rng.normal([4]).numpy(), expected_draws)
    assert position.epoch_totals().epoch(0).means == totals_of(*STEPS).epoch(0).means
    again.discard()
    assert not (tmp_path / MID_EPOCH).exists() and again.saved is None and again.resume(2) is None


def test_a_failed_save_keeps_the_last_position_and_a_damaged_one_is_a_one_line_error(tmp_path):
    model, rng = stand_in()
    midway = MidEpoch(str(tmp_path), model, (), rng)
    midway.save(1, totals_of(*STEPS[:1]), 1.0)
    (tmp_path / MID_EPOCH / "epoch-1-step-3.index").mkdir()  # a directory in the way of the next save
    with pytest.raises(UserError, match=r"epoch-1-step-3: cannot write"):
        midway.save(1, totals_of(*STEPS), 2.0)
    model, rng = stand_in()
    assert MidEpoch(str(tmp_path), model, (), rng).resume(1).where() == "step 1 of epoch 1"

    (tmp_path / MID_EPOCH / POSITION).write_text('{"epoch": 1}')
    with pytest.raises(UserError) as raised:
        midway.resume(1)
    assert str(raised.value) == f"{tmp_path / MID_EPOCH / POSITION}: corrupted (not a position within an epoch)"


def test_distribute_refuses_the_flag_before_anything_is_written(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    status, _, err = cli_in_process(["--do_training", *reversal_files(data), f"--working_dir={tmp_path / 'run'}",
                                     "--distribute=mirrored", "--save_every_steps=5"], capsys)
    assert status == 1 and err == (f"error: --save_every_steps: not with --distribute=mirrored ({UNDISTRIBUTED})\n")
    assert not (tmp_path / "run").exists()

"""Typed configuration: the flat hparams.json form, the flags its metadata makes, and older runs."""

import argparse

import pytest

from nmtcore import cli, config as config_lib
from nmtcore.config import Config
from nmtcore.errors import UserError

from helpers import models


def test_flat_form_round_trips_and_keeps_every_saved_field():
    config = Config().replace(units=64, recog_clip=8.0, train_set1="a.en", num_train=12, monitor_every=3)
    flat = config.to_flat()
    assert flat["units"] == 64 and flat["recog_clip"] == 8.0 and flat["num_train"] == 12
    assert "monitor_every" not in flat  # a run-time option, not a hyperparameter of the run
    again = Config.from_saved(flat, "hparams.json")
    assert again == config.replace(monitor_every=0)


def test_every_flag_field_is_a_command_line_flag_and_nothing_else_is():
    parser = cli.build_parser(models())
    flags = {a.dest for a in parser._actions if isinstance(a, argparse.Action)}
    for section in config_lib.SECTIONS.values():
        for field in config_lib.fields(section):
            assert (field.name in flags) == field.metadata["flag"], field.name
    given = vars(parser.parse_args(["--working_dir=x", "--units=64", "--bind_hard", "--recog_clip=2"]))
    assert given["units"] == 64 and given["bind_hard"] is True and given["recog_clip"] == 2.0
    assert given["embedding_size"] is None  # not given: a resumed or tested run keeps its saved value


def test_an_old_hparams_file_takes_the_values_its_run_used():
    flat = Config().to_flat()
    for added_later in ("dev_every", "double_shared_updates", "recog_clip", "task", "memory_width", "pop_bias"):
        del flat[added_later]
    old = Config.from_saved(flat, "hparams.json")
    assert (old.training.dev_every, old.training.double_shared_updates, old.inference.recog_clip,
            old.data.task, old.model.memory_width, old.model.pop_bias) == (1, False, None, "translation", 256, -1.0)
    del flat["units"]  # never optional
    with pytest.raises(UserError, match=r"hparams.json: corrupted \(no 'units'\)"):
        Config.from_saved(flat, "hparams.json")


def test_configurations_are_frozen_and_autoencode_implies_hard_binding():
    config = Config()
    with pytest.raises(AttributeError):
        config.model.units = 3
    assert Config().replace(autoencode=True).model.bind_hard
    with pytest.raises(KeyError):
        config.replace(no_such_field=1)


@pytest.mark.parametrize("values, message", [
    ({"dropout": 1.0}, "--dropout=1.0: must be below 1"),
    ({"learning_rate": 0.0}, "--learning_rate=0.0: must be > 0 and <= 10"),
    ({"seed": 2**32}, "--seed=4294967296: must be >= 0"),
    ({"monitor_every": -1}, "--monitor_every=-1: must be >= 0"),
    ({"attention_positions": 0}, "--attention_positions=0: must be >= 1"),
])
def test_ranges_come_from_the_field_metadata(values, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        config_lib.check_ranges(values)
    config_lib.check_ranges({"dropout": 0.5, "recog_clip": None, "seed": 0})

"""Typed configuration: the flat hparams.json form, the flags its metadata makes, and older runs."""

import argparse

import pytest

from rnnpb_nmt import cli
from rnnpb_nmt import config as config_lib
from rnnpb_nmt.config import Config
from rnnpb_nmt.errors import UserError

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
    for added_later in ("dev_every", "double_shared_updates", "recog_clip", "task", "memory_width", "pop_bias",
                        "deque_biases", "deque_off_bias", "skip_connections"):
        del flat[added_later]
    old = Config.from_saved(flat, "hparams.json")
    assert (old.training.dev_every, old.training.double_shared_updates, old.inference.recog_clip,
            old.data.task, old.model.memory_width, old.model.pop_bias, old.model.deque_biases,
            old.model.deque_off_bias, old.model.skip_connections) == (1, False, None, "translation", 256, -1.0,
                                                                      "same", -3.0, "none")
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


def _other_value(field):
    """A value of ``field`` other than its default."""
    default, choices = field.default, field.metadata["choices"]
    if choices:
        return next(c for c in choices if c != default)
    if default is None:  # only --grammar, a file name
        return "other.gr"
    return not default if isinstance(default, bool) else default + 1


ONLY = [f for section in config_lib.SECTIONS.values() for f in config_lib.fields(section) if f.metadata["only"]]


@pytest.mark.parametrize("field", ONLY, ids=lambda f: f.name)
def test_a_flag_only_some_runs_read_is_refused_by_the_others_unless_it_has_its_default(field):
    chain, value = config_lib.requirements(field.name), _other_value(field)
    reading = Config().replace(**{key: values[0] for key, values in chain})  # every condition met
    config_lib.check_applicable({field.name: value}, reading)
    for key, values in chain:  # one condition broken at a time
        gate = config_lib.field_named(key)
        unmet = reading.replace(**{key: next(v for v in (gate.default, *(gate.metadata["choices"] or ()), *models())
                                             if v not in values)})
        assert not config_lib.applies(field.name, unmet)
        with pytest.raises(UserError, match=rf"^--{field.name}\b.*: only for .*--{key}=.*it would be ignored$"):
            config_lib.check_applicable({field.name: value}, unmet)
        config_lib.check_applicable({field.name: field.default}, unmet)  # the default: as if not given


@pytest.mark.parametrize("flat, message", [
    ({"model": "rnnpbnmt", "attention": "content"},
     "--attention=content: only for --model=encdec (this run: --model=rnnpbnmt); it would be ignored"),
    ({"model": "encdec", "refine_steps": 2}, "--refine_steps=2: only for --model=rnnpbnmt --amortize=encoder|learned "
                                             "(this run: --model=encdec --amortize=none)"),
    ({"model": "encdec", "num_PB": 7}, "--num_PB=7: only for --model=rnnpbnmt (this run: --model=encdec)"),
    ({"model": "transformer", "max_recog_epochs": 3}, "--max_recog_epochs=3: only for --model=rnnpbnmt"),
    ({"model": "encdec", "attention": "content", "attention_positions": 10},
     "--attention_positions=10: only for --model=encdec --attention=location (this run: --model=encdec "
     "--attention=content)"),
    ({"model": "deep_lstm", "memory_width": 128}, "--memory_width=128: only for --model=stack_lstm|queue_lstm|deque_lstm"),
    ({"model": "encdec", "feature_size": 20}, "--feature_size=20: only for --model=hard_attention"),
    ({"model": "stack_lstm", "skip_connections": "inputs"}, "--skip_connections=inputs: only for --model=deep_lstm"),
    ({"model": "rnnpbnmt", "amortize": "encoder", "pb_learning_rate": 0.1},
     "--pb_learning_rate=0.1: only for --model=rnnpbnmt --amortize=none (this run: --model=rnnpbnmt "
     "--amortize=encoder)"),
    ({"model": "rnnpbnmt", "amortize": "learned", "encoder_binding": 1.0},
     "--encoder_binding=1.0: only for --model=rnnpbnmt --amortize=encoder (this run: --model=rnnpbnmt "
     "--amortize=learned)"),
    ({"model": "rnnpbnmt", "both_directions": True}, "--both_directions: only for --model=rnnpbnmt --amortize="),
    ({"task": "inflection", "grammar": "question.gr"}, "--grammar=question.gr: only for --task=question_formation"),
    ({"model": "queue_lstm", "dropout": 0.2}, "--dropout=0.2: only for --model=rnnpbnmt|encdec|deep_lstm|hard_attention"),
    ({"model": "stack_lstm", "num_layers": 1}, "--num_layers=1: only for --model=rnnpbnmt|encdec|deep_lstm|"),
    ({"model": "deep_lstm", "reverse_source": True}, "--reverse_source: only for --model=encdec"),
    ({"model": "encdec", "attention_style": "luong"},
     "--attention_style=luong: only for --model=encdec --attention=location|content (this run: --model=encdec "
     "--attention=none)"),
    ({"model": "hard_attention", "bidirectional": True}, "--bidirectional: only for --model=encdec"),
    ({"task": "translation", "inflection_target": "form"}, "--inflection_target=form: only for --task=inflection"),
])
def test_flags_a_run_would_ignore_are_named_with_what_reads_them(flat, message):
    with pytest.raises(UserError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        config_lib.check_applicable(flat, Config.from_flat(flat))


def test_the_thesis_and_experiment_flags_are_read_by_their_runs():
    """What the thesis's listings and the project's experiment scripts give stays accepted."""
    for flat in ({"model": "rnnpbnmt", "autoencode": True, "bind_hard": True, "num_PB": 128, "num_layers": 2,
                  "dropout": 0.4},
                 {"model": "encdec", "reverse_source": True},  # the thesis's seq-to-seq: no PB flags
                 {"model": "rnnpbnmt", "num_PB": 1024, "binding_strength": 1.0, "bind_hard": True, "p_reset": 0.1,
                  "pb_learning_rate": 0.01, "max_recog_epochs": 100, "dropout": 0.4},
                 {"model": "rnnpbnmt", "amortize": "encoder", "refine_steps": 2, "refine_step_size": 0.3,
                  "encoder_binding": 1.0, "both_directions": True, "self_loss": 0.0},
                 {"model": "rnnpbnmt", "amortize": "learned", "refine_steps": 2, "refine_gradient": "full"},
                 {"model": "rnnpbnmt", "amortize": "learned", "both_directions": True, "self_loss": 0.0,
                  "pb_binding": "soft", "pb_binding_strength": 1.0, "seed": 3, "dev_every": 1},
                 {"model": "rnnpbnmt", "amortize": "encoder", "refine_steps": 0, "proposal_layers": 2},
                 {"model": "encdec", "task": "question_formation", "grammar": "q.gr", "cell": "gru",
                  "attention": "location", "attention_positions": 10},
                 {"model": "queue_lstm", "task": "transduction", "memory_width": 128, "pop_bias": -3.0},
                 {"model": "deque_lstm", "task": "transduction", "memory_width": 128, "deque_biases": "per_end",
                  "deque_off_bias": -6.0},
                 {"model": "deep_lstm", "task": "transduction", "num_layers": 8, "skip_connections": "inputs"},
                 {"model": "hard_attention", "task": "inflection", "feature_size": 100},
                 {"model": "encdec", "task": "inflection", "bidirectional": True, "attention": "content",
                  "attention_style": "luong", "inflection_target": "form"},
                 {"model": "rnnpbnmt", "cell": "lstm", "attention": "none", "memory_width": 256}):  # the defaults
        config_lib.check_applicable(flat, Config.from_flat(flat))

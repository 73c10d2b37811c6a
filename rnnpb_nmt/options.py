"""Declaring a configuration field: its default, help text, valid range and who reads it.

The core's fields live in ``rnnpb_nmt.config``; a model family's or a task's own fields in its
``options`` module (``rnnpb_nmt/models/<family>/options.py``, ``rnnpb_nmt/tasks/<task>/options.py``).
Both declare them with ``option``; this module imports nothing of the package, so that a family's
options load before the configuration that composes them.

An options module may hold, each optional:

- ``ModelOptions``, ``TrainingOptions``, ``InferenceOptions``, ``DataOptions``: frozen dataclasses of
  ``option`` fields, which ``rnnpb_nmt.config`` adds to that section of every run's configuration (the
  flags and hparams.json keys stay flat: one name per field, whatever declares it);
- ``READS``: ``{model name: (core field, ...)}``, the core fields whose ``only=("model",
  Readers(field))`` a model of the family reads (``--num_layers``, ``--dropout``): other models refuse them;
- ``ORDER``: the family's place in --help and in messages (the thesis's model first);
- ``DEFAULT_MODEL`` / ``DEFAULT_TASK``: declared by exactly one family and one task.
"""

import dataclasses

NO_LEGACY = object()


def option(default, help, low=None, high=None, low_open=False, high_open=False, choices=None,
           legacy=NO_LEGACY, flag=True, saved=True, only=None):
    """A configuration field.

    ``low``/``high`` bound a number (``*_open``: the bound itself is invalid); ``legacy`` is the
    value a working directory written before the field existed used (without one, such a
    directory's hparams.json is corrupted); ``flag=False`` for values derived from the data,
    ``saved=False`` for run-time options that hparams.json does not keep. ``only=(field, values)``:
    the field matters only to runs whose ``field`` is one of ``values`` (and that field's own
    ``only``, if any, holds); given to another run, a value other than the default would be silently
    ignored, so it is refused (``rnnpb_nmt.config.check_applicable``).
    """
    return dataclasses.field(default=default, metadata=dict(
        help=help, low=low, high=high, low_open=low_open, high_open=high_open, choices=choices,
        legacy=legacy, flag=flag, saved=saved, only=only))

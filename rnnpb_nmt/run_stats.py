"""A training run's statistics, typed: a step's numbers, an epoch's training, an epoch's row of
``training_stats.json`` and the whole file, and the file read from a working directory.

``training_stats.json`` is read by more than the training loop (``--analyze``, export, the run
scripts, results records), so its keys and their order are the format: ``EpochRecord`` and
``RunStatistics`` write exactly the JSON earlier versions wrote, and read as Mappings by those keys
too. It is below both training and inference (docs/extending.md, "Layers"): ``--analyze`` reads it
without importing the training loop.
"""

import collections
import dataclasses
import math
import os
from collections.abc import Mapping
from types import MappingProxyType

from rnnpb_nmt.data.files import read_json_object
from rnnpb_nmt.errors import UserError

STATS = "training_stats.json"

# The term of a model's ``sentence_losses`` that is its batch's translation perplexity: averaged
# into the epoch's ``train_perplexity``, not into a ``mean_<term>`` like the model's other terms.
PERPLEXITY_TERM = "perplexity"


@dataclasses.dataclass(frozen=True)
class StepResult:
    """One training step's numbers (``Trainer.train_step``'s outputs), as Python floats."""

    loss: float
    perplexity: float | None  # None for a batch without a translation (a monolingual one)
    others: Mapping[str, float]  # the model's other terms and ``grad_norm_<group>``, in the step's order

    @classmethod
    def from_outputs(cls, outputs):
        values = {name: float(value) for name, value in outputs.items()}
        return cls(values.pop("loss"), values.pop(PERPLEXITY_TERM, None), MappingProxyType(values))

    def averaged(self):
        """The numbers an epoch averages by name (its ``mean_<name>``), in the step's order."""
        return {**self.others, "loss": self.loss}

    @property
    def finite(self):
        perplexity = () if self.perplexity is None else (self.perplexity,)
        return all(map(math.isfinite, [*self.averaged().values(), *perplexity]))


@dataclasses.dataclass(frozen=True)
class TrainedEpoch:
    """An epoch's training: its mean perplexity (NaN when no batch had one), its seconds, and each
    other number of its steps averaged over the steps that have it (a monolingual batch has no
    binding), by name in the order the steps first gave them."""

    perplexity: float
    seconds: float
    means: Mapping[str, float]


class _Mean:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def add(self, value):
        self.total, self.count = self.total + value, self.count + 1

    def value(self):
        return self.total / self.count if self.count else math.nan


class EpochTotals:
    """An epoch's step results summed as they come: the steps themselves are not kept."""

    def __init__(self):
        self.steps = 0
        self._perplexity, self._means = _Mean(), collections.defaultdict(_Mean)

    def add(self, step):
        self.steps += 1
        if step.perplexity is not None:
            self._perplexity.add(step.perplexity)
        for name, value in step.averaged().items():
            self._means[name].add(value)

    def epoch(self, seconds):
        return TrainedEpoch(self._perplexity.value(), seconds,
                            MappingProxyType({name: mean.value() for name, mean in self._means.items()}))

    def mean(self, name):
        """The mean so far of the steps' number ``name`` (``loss``: every step's)."""
        return self._means[name].value()

    def to_json(self):
        """The sums as they stand, to go on from (``from_json``) with the same floats: a saved
        mid-epoch position's, so that a resumed epoch's means are the uninterrupted epoch's."""
        return {"steps": self.steps, "perplexity": [self._perplexity.total, self._perplexity.count],
                "means": {name: [mean.total, mean.count] for name, mean in self._means.items()}}

    @classmethod
    def from_json(cls, obj):
        """The totals ``to_json`` wrote; ValueError if ``obj`` is not such an object."""
        totals = cls()
        try:
            totals.steps = obj["steps"]
            sums = [(totals._perplexity, obj["perplexity"]), *((totals._means[name], pair)
                                                                  for name, pair in obj["means"].items())]
            if not _is_whole(totals.steps) or totals.steps < 0:
                raise ValueError
            for mean, (total, count) in sums:
                if not (_is_number(total) and _is_whole(count) and 0 <= count <= totals.steps):
                    raise ValueError
                mean.total, mean.count = float(total), count
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError("not an epoch's running totals") from None
        return totals


@dataclasses.dataclass(frozen=True)
class EpochRecord(Mapping):
    """One epoch's row of ``training_stats.json``, kept as the file's keys in its order: ``epoch``,
    ``train_perplexity``, ``dev_perplexity`` and ``dev_score`` (on epochs that measured them),
    ``train_seconds``, ``seconds`` (training and dev measurement), ``mean_<name>`` of the steps'
    numbers, the model's ``summary_scalars`` and ``monitor/dev_bleu`` (with --monitor_every).

    The row stays as read, so a file round-trips whole; a damaged row (missing keys) fails where
    it is used, as it always did (``tests/test_training.py``: such a run still stops on its state).
    """

    row: Mapping[str, float]

    @classmethod
    def of(cls, epoch, trained, seconds, dev_perplexity=None, dev_score=None, model_scalars=(), dev_bleu=None):
        """The row of epoch ``epoch`` (``trained``: its TrainedEpoch); a None measure was not measured."""
        row = {"epoch": epoch, "train_perplexity": trained.perplexity}
        row.update(_measured(dev_perplexity=dev_perplexity, dev_score=dev_score))
        row.update(train_seconds=trained.seconds, seconds=seconds)
        row.update({f"mean_{name}": value for name, value in trained.means.items()})
        row.update(model_scalars)
        row.update(_measured(**{"monitor/dev_bleu": dev_bleu}))
        return cls(MappingProxyType(row))

    @classmethod
    def from_json(cls, obj):
        if not isinstance(obj, dict) or not all(_is_number(v) for v in obj.values()):
            raise ValueError("a row of its epochs is not an object of numbers")
        return cls(MappingProxyType(dict(obj)))

    def to_json(self):
        return dict(self.row)

    def __getitem__(self, key):
        return self.row[key]

    def __iter__(self):
        return iter(self.row)

    def __len__(self):
        return len(self.row)

    epoch = property(lambda self: self.row["epoch"])
    train_perplexity = property(lambda self: self.row["train_perplexity"])
    seconds = property(lambda self: self.row["seconds"])
    dev_perplexity = property(lambda self: self.row.get("dev_perplexity"), doc="None on an epoch not measured")
    dev_score = property(lambda self: self.row.get("dev_score"), doc="None without --early_stopping_metric=score")
    dev_bleu = property(lambda self: self.row.get("monitor/dev_bleu"), doc="None on an epoch not monitored")


def _measured(**measures):
    return {key: value for key, value in measures.items() if value is not None}


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


@dataclasses.dataclass(frozen=True)
class RunStatistics(Mapping):
    """``training_stats.json``: the rows of the finished epochs, the best dev epoch and its dev
    perplexity (None before a measured epoch), the epochs since the dev measure last improved
    (``waited``, which early stopping counts; the best epoch's unless --early_stopping_ties=last),
    the seconds of all epochs, the ``state/`` checkpoint of the last epoch's whole training state
    (None until an epoch is saved: ``training.save_epoch`` writes it), and the factor by which
    --learning_rate_decay has multiplied the learning rates of the epochs to come.

    The fields are the file's keys, in its order; the last two are left out at their defaults
    (None, 1), as the files of earlier versions have them.
    """

    epochs: tuple[EpochRecord, ...] = ()
    best_epoch: int | None = None
    best_dev_perplexity: float | None = None
    waited: int = 0
    total_seconds: float = 0.0
    state_checkpoint: str | None = None
    learning_rate_scale: float = 1.0

    def after_epoch(self, record, improved, tied=False):
        """The statistics once the epoch of ``record`` is added (its state not saved yet);
        ``improved``: its dev measure beat the best epoch's; ``tied``: it equalled it and becomes the
        best epoch all the same (--early_stopping_ties=last), still an epoch without improvement."""
        waited = dict(waited=0 if improved else self.waited + 1)
        best = dict(best_epoch=record.epoch, best_dev_perplexity=record.dev_perplexity) if improved or tied else {}
        return dataclasses.replace(self, epochs=(*self.epochs, record), total_seconds=self.total_seconds + record.seconds,
                                   state_checkpoint=None, **waited, **best)

    def saved_as(self, state_checkpoint):
        return dataclasses.replace(self, state_checkpoint=state_checkpoint)

    @classmethod
    def from_json(cls, obj):
        """The statistics of a parsed file; ValueError if it is not a run's statistics."""
        if not isinstance(obj, dict) or not _REQUIRED <= obj.keys() or \
                not all(_FORMAT[key](value) for key, value in obj.items() if key in _FORMAT):
            raise ValueError("not the statistics of a training run")
        epochs = tuple(map(EpochRecord.from_json, obj["epochs"]))
        if obj["best_epoch"] is not None and not 1 <= obj["best_epoch"] <= len(epochs):
            raise ValueError(f"best_epoch {obj['best_epoch']} is not one of its {len(epochs)} epochs")
        return cls(epochs, obj["best_epoch"], obj["best_dev_perplexity"], obj["waited"], obj["total_seconds"],
                   obj.get("state_checkpoint"), obj.get("learning_rate_scale", 1.0))

    def to_json(self):
        return dict(self._by_key(), epochs=[record.to_json() for record in self.epochs])

    def _by_key(self):
        """The fields by the file's keys (the epochs as records); no state_checkpoint before one is
        saved, no learning_rate_scale before a decay."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.state_checkpoint is None:
            del fields["state_checkpoint"]
        if self.learning_rate_scale == 1:
            del fields["learning_rate_scale"]
        return fields

    def __getitem__(self, key):
        return self._by_key()[key]

    def __iter__(self):
        return iter(self._by_key())

    def __len__(self):
        return len(self._by_key())


# What each key of training_stats.json holds; every one but state_checkpoint (written with the
# first saved epoch's state) is required.
_FORMAT = {"epochs": lambda v: isinstance(v, list),
           "best_epoch": lambda v: v is None or _is_whole(v),
           "best_dev_perplexity": lambda v: v is None or _is_number(v),
           "waited": lambda v: _is_whole(v) and v >= 0,
           "total_seconds": _is_number,
           "state_checkpoint": lambda v: v is None or isinstance(v, str),
           "learning_rate_scale": lambda v: _is_number(v) and 0 < v <= 1}
_REQUIRED = _FORMAT.keys() - {"state_checkpoint", "learning_rate_scale"}


def load_stats(working_dir):
    """training_stats.json of a working directory (RunStatistics), or None before the first epoch ended."""
    path = os.path.join(working_dir, STATS)
    if not os.path.isfile(path):
        return None
    try:
        return RunStatistics.from_json(read_json_object(path))
    except ValueError as e:  # JSON that is not a run's statistics
        raise UserError(f"{path}: corrupted ({e})") from None

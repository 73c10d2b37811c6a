"""Positions inside an epoch (--save_every_steps): a run stopped between two epochs' saves resumes
from the last step saved rather than from the start of the epoch, into the uninterrupted run.

``<working_dir>/mid_epoch/`` holds the whole training state after step K of epoch E (the model,
the optimisers, and the Trainer's noise generator, which a finished epoch's ``state/`` need not
keep: each epoch restarts it) as ``epoch-E-step-K``, and ``position.json`` naming it, with the
epoch's running sums of the statistics and its seconds so far. The checkpoint is written first and
the JSON, atomically, after: a save that fails or is killed leaves the previous position whole. The
epoch's batches are a function of --seed and the epoch, so the resumed epoch makes them again, in
the same order, and skips the first K. Once the epoch is saved whole (``training_stats.json``), its
positions are deleted; one of an earlier epoch (a kill between the two) is stale and ignored.
"""

import dataclasses
import os
import shutil

import tensorflow as tf

from rnnpb_nmt.data.files import read_json_object, write_json, writing
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.run_stats import EpochTotals
from rnnpb_nmt.train.checkpoints import SAVE_ERRORS, read, remove_entries, training_state

MID_EPOCH = "mid_epoch"
POSITION = "position.json"
# Positions are saved and resumed on one device only: on two replicas (MirroredStrategy) a run resumed
# inside an epoch failed at its first step (a collective gather of the replicas' gradients fed
# mismatched shapes) or hung, though a restored state and generator, and skipped batches, each train
# on there when tried alone; the cause is not found. An epoch's own checkpoint resumes there.
UNDISTRIBUTED = "positions inside an epoch are saved and resumed on one device only; under --distribute a run " \
                "resumes after its last finished epoch"


@dataclasses.dataclass(frozen=True)
class Position:
    """Where an epoch was saved: after ``totals.steps`` of its steps, ``seconds`` into its training,
    its state in the checkpoint ``checkpoint`` (within ``mid_epoch/``)."""

    epoch: int
    totals: dict  # EpochTotals.to_json()
    seconds: float
    checkpoint: str

    @property
    def steps(self):
        return self.totals["steps"]

    def where(self):
        return f"step {self.steps} of epoch {self.epoch}"

    def epoch_totals(self):
        """The epoch's running sums at this position (a new EpochTotals to go on adding to)."""
        return EpochTotals.from_json(self.totals)

    def to_json(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, obj):
        """The position ``to_json`` wrote; ValueError if ``obj`` is not one."""
        if set(obj) != {f.name for f in dataclasses.fields(cls)} or not isinstance(obj["epoch"], int) or \
                obj["epoch"] < 1 or not isinstance(obj["seconds"], (int, float)) or \
                not isinstance(obj["checkpoint"], str) or os.path.basename(obj["checkpoint"]) != obj["checkpoint"]:
            raise ValueError("not a position within an epoch")
        EpochTotals.from_json(obj["totals"])
        return cls(**obj)


class MidEpoch:
    """The positions saved inside the epochs of the run in ``working_dir``, whose training state is
    ``model``, ``optimizers`` (in order) and the Trainer's generator ``rng``. ``saved``: the position
    saved or resumed last in the epoch being trained (None at its start)."""

    def __init__(self, working_dir, model, optimizers, rng):
        self.folder = os.path.join(working_dir, MID_EPOCH)
        self._state = training_state(model, optimizers, rng=rng)
        self.saved = None

    def resume(self, epoch):
        """Restore the state saved inside ``epoch`` (the first not saved whole) and return its
        Position, or None if none was saved, or only one of an earlier epoch (stale)."""
        path = os.path.join(self.folder, POSITION)
        if not os.path.isfile(path):
            return None
        try:
            position = Position.from_json(read_json_object(path))
        except ValueError as e:
            raise UserError(f"{path}: corrupted ({e})") from None
        if position.epoch != epoch:
            return None
        if tf.distribute.has_strategy():
            raise UserError(f"{path}: a position inside epoch {epoch} (--save_every_steps), which --distribute "
                            "cannot resume: run the same command without --distribute")
        read(self._state, os.path.join(self.folder, position.checkpoint), "resume")
        self.saved = position
        return position

    def save(self, epoch, totals, seconds):
        """Save the training state after the ``totals.steps`` steps of ``epoch`` (an EpochTotals,
        trained for ``seconds``), then the position naming it; then delete older positions' files."""
        name = f"epoch-{epoch}-step-{totals.steps}"
        path = os.path.join(self.folder, name)
        with writing(path, SAVE_ERRORS):
            self._state.write(path)
        position = Position(epoch, totals.to_json(), seconds, name)
        write_json(os.path.join(self.folder, POSITION), position.to_json())
        self.saved = position
        remove_entries(self.folder, lambda entry: entry != POSITION and not entry.startswith(f"{name}."))

    def discard(self):
        """Delete every position: the epoch they were in is saved whole."""
        self.saved = None
        if os.path.isdir(self.folder):
            with writing(self.folder):
                shutil.rmtree(self.folder)

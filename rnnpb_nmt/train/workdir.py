"""A working directory: what it holds, and how a run is saved to and loaded from it (``WorkingDir``).

    hparams.json         every model hyperparameter and the data it was trained on
    vocab1.txt vocab2.txt  source and target vocabularies, one word per line, id = line number
    best/                TensorFlow checkpoint of the best dev epoch's weights (and PB tables)
    state/               the last epoch's full training state (with optimiser slots), for resuming
    epochs/              with --keep_checkpoints: some finished epochs' weights, for --average_checkpoints
    mid_epoch/           with --save_every_steps: the state and position after a step inside an epoch
    training_stats.json  per-epoch train/dev perplexity, loss terms and seconds, early-stopping state
    logs/                TensorBoard event files of training
    test_trans.txt testing_stats.json   written by --do_testing
    analysis/            written by --analyze
    .lock                held by the training process (rnnpb_nmt/train/lock.py)

``best/``, ``state/`` and ``epochs/`` are ``RunCheckpoints``'s, ``training_stats.json`` the training loop's
(``rnnpb_nmt.train.loop``); the rest is named here. ``WorkingDir`` reads and writes these files;
whether --do_training starts, resumes or refuses a run on what they hold is decided in
``rnnpb_nmt.train.resume``. The module's functions are the ones the tests and run scripts call on a path.
"""

import contextlib
import dataclasses
import os
import sys

from rnnpb_nmt import registry, run_stats
from rnnpb_nmt.config import Config, check_applicable, field_named
from rnnpb_nmt.data.files import read_json_object, write_json
from rnnpb_nmt.data.vocabulary import Vocabulary
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import lock, loop
from rnnpb_nmt.train.checkpoints import EPOCHS, RunCheckpoints
from rnnpb_nmt.train.mid_epoch import MID_EPOCH


@dataclasses.dataclass(frozen=True)
class Found:
    """What a run left in a working directory, read at once under its lock (``WorkingDir.locked``):
    ``files``, hparams.json and the RUN_FILES there; ``config``, hparams.json's (None when there is
    none, or it was not asked for); ``stats``, training_stats.json's (None before a first epoch)."""

    files: tuple
    config: Config = None
    stats: run_stats.RunStatistics = None


class WorkingDir:
    """One run's directory (``--working_dir``): its files, its lock, its saved configuration and
    vocabularies, its statistics and its checkpoints."""

    HPARAMS = "hparams.json"
    VOCABULARIES = ("vocab1.txt", "vocab2.txt")
    # What training writes beside hparams.json: a directory holding any of them without hparams.json
    # is neither a run to resume nor an empty place for a new one (a new run would overwrite them).
    RUN_FILES = (*VOCABULARIES, run_stats.STATS, "best", "state", EPOCHS, MID_EPOCH)

    def __init__(self, path):
        self.path = path

    def __str__(self):
        return self.path

    def file(self, name):
        return os.path.join(self.path, name)

    def is_trained(self):
        """Whether a run was set up here (hparams.json written), finished or not."""
        return os.path.isfile(self.file(self.HPARAMS))

    def run_files(self):
        """What of a run is here: hparams.json (as ``is_trained`` sees it) and the RUN_FILES."""
        trained = [self.HPARAMS] if self.is_trained() else []
        return trained + [name for name in self.RUN_FILES if os.path.exists(self.file(name))]

    def for_worker(self, strategy):
        """Where this process keeps its training run: this directory on the chief or a single process,
        ``<working_dir>.worker-N`` on worker N of a multi-worker run. TensorFlow requires every worker
        to save the checkpoints; they hold the same numbers, but two writers of one file corrupt it."""
        resolver = getattr(strategy, "cluster_resolver", None)
        if resolver is None or resolver.task_type in (None, "chief"):
            return self
        if resolver.task_type == "worker" and resolver.task_id == 0 and "chief" not in resolver.cluster_spec().as_dict():
            return self
        return WorkingDir(f"{os.path.normpath(self.path)}.{resolver.task_type}-{resolver.task_id}")

    def found(self, models=None):
        """What of a run is here (``Found``); with ``models`` (the known --model names) its saved
        configuration and statistics too."""
        files = tuple(self.run_files())
        if models is None or self.HPARAMS not in files:
            return Found(files)
        return Found(files, self.load_config(models), self.stats())

    @contextlib.contextmanager
    def locked(self, models=None):
        """Hold the directory's lock inside the ``with`` (``lock.exclusive``: it makes the directory if
        need be, and removes it again if the start fails), which gets what of a run is here, read under
        the lock (``found``, given ``models``)."""
        with lock.exclusive(self.path):
            yield self.found(models)

    @contextlib.contextmanager
    def set_aside(self):
        """Rename the directory (its held lock goes along) to ``<working_dir>.previous-N`` (the first free
        N), and hold the lock of a new one in its place inside the ``with``, which gets the old run's
        new name: --start_over never deletes a run, it moves it out of the way."""
        base = os.path.normpath(self.path)
        n = 1
        while os.path.exists(f"{base}.previous-{n}"):
            n += 1
        os.rename(base, f"{base}.previous-{n}")
        with lock.exclusive(self.path):
            yield f"{base}.previous-{n}"

    def save_setup(self, config, vocab1, vocab2):
        """Write what is needed to rebuild the model: hyperparameters and vocabularies."""
        os.makedirs(self.path, exist_ok=True)
        for vocab, name in zip((vocab1, vocab2), self.VOCABULARIES):
            vocab.save(self.file(name))
        write_json(self.file(self.HPARAMS), config.to_flat())

    def load_config(self, models):
        """The ``Config`` of hparams.json (one from before a hyperparameter existed gets the value it
        was trained with); ``models`` are the known --model names."""
        path = self.file(self.HPARAMS)
        if not os.path.isdir(self.path):
            raise UserError(f"--working_dir={self.path}: no such directory")
        if not os.path.isfile(path):
            raise UserError(f"{path} missing: --working_dir holds no trained model (train with --do_training)")
        params = read_json_object(path)
        if "model" not in params:
            raise UserError(f"{path}: corrupted (no model type)")
        if params["model"] not in models:
            raise UserError(f"{path}: corrupted (unknown model {params['model']!r})")
        config = Config.from_saved(params, path)
        if config.data.task not in registry.tasks():
            raise UserError(f"{path}: corrupted (unknown task {config.data.task!r})")
        return config

    def load_vocabularies(self):
        return tuple(Vocabulary.load(self.file(name)) for name in self.VOCABULARIES)

    def stats(self):
        """The run's statistics (``training_stats.json``), or None before its first epoch."""
        return run_stats.load_stats(self.path)

    def checkpoints(self, model, optimizers=()):
        return RunCheckpoints(self.path, model, optimizers)

    def load_model(self, models, overrides=None):
        """Rebuild the model with its best weights, or with --average_checkpoints the mean of some
        kept epochs' (``model.averaged_epochs`` names them, empty for best/'s; a line on stderr too,
        where it cannot mix with --query's translations).

        ``models`` maps --model names to classes; ``overrides`` replaces inference-time settings
        (beam size, recognition iterations, ...) given on the command line; one the model does not
        read (``--refine_steps`` without ``--amortize``) is refused.
        """
        config = self.load_config(models).replace(**(overrides or {}))
        check_applicable(overrides or {}, config)
        model = models[config.model.model](config, *self.load_vocabularies())
        model.averaged_epochs = self._restore(self.checkpoints(model), config)
        if model.averaged_epochs:
            print(f"{self.path}: the mean of the weights of epochs {', '.join(map(str, model.averaged_epochs))}",
                  file=sys.stderr)
        return model

    def _restore(self, checkpoints, config):
        """Restore best/'s weights, or the mean of those of the epochs ``averaged_epochs`` chooses;
        returns the epochs averaged, as a tuple (empty for best/'s). --average_of without
        --average_checkpoints is refused: it would be ignored."""
        inference = config.inference
        if inference.average_checkpoints:
            return tuple(checkpoints.restore_average(lambda: self.averaged_epochs(config)))
        if inference.average_of != field_named("average_of").default:
            raise UserError(f"--average_of={inference.average_of}: only with --average_checkpoints=N (N > 0); "
                            "it would be ignored")
        checkpoints.restore_best()
        return ()

    def averaged_epochs(self, config):
        """The epochs --average_checkpoints=N of ``config`` averages, by training_stats.json: the last N
        finished, or (--average_of=best) the N best by the dev measure that chose best/. A UserError when
        ``epochs/`` does not keep them all: the run was trained without --keep_checkpoints, or with a
        smaller one, or has fewer such epochs."""
        n, of, training = config.inference.average_checkpoints, config.inference.average_of, config.training
        flag = f"--average_checkpoints={n}" + (f" --average_of={of}" if of == "best" else "")
        if not training.keep_checkpoints:
            raise UserError(f"{flag}: {self.path} was trained without --keep_checkpoints (no {EPOCHS}/ to average; "
                            f"train with --keep_checkpoints={n})")
        stats = self.stats()
        records = stats.epochs if stats else ()
        chosen = loop.last_epochs(records, n) if of == "last" else \
            loop.best_epochs(records, n, training.early_stopping_metric, training.early_stopping_ties)
        held = min(len(chosen), training.keep_checkpoints)
        if held < n:
            noun = "epoch" if held == 1 else "epochs"
            kept = f"the last {held} {noun}" if of == "last" else f"the {held} best {noun}"
            why = f"train with --keep_checkpoints={n}" if training.keep_checkpoints < n else \
                f"the run has {held} {'finished' if of == 'last' else 'dev-measured'} {noun}"
            raise UserError(f"{flag}: {self.file(EPOCHS)} holds {kept} ({why})")
        return chosen


def is_trained(working_dir):
    return WorkingDir(working_dir).is_trained()


def save_setup(working_dir, config, vocab1, vocab2):
    WorkingDir(working_dir).save_setup(config, vocab1, vocab2)


def load_config(working_dir, models):
    return WorkingDir(working_dir).load_config(models)


def load_model(working_dir, models, overrides=None):
    return WorkingDir(working_dir).load_model(models, overrides)


def load_ensemble(working_dirs, models, overrides=None):
    """The models of an ensemble's members (``--ensemble``), each as ``load_model`` gives it.

    Refused in one line naming the directory: one without a trained model, one named twice (it
    would vote twice), members trained on different tasks (their outputs are not comparable).
    Models and vocabularies may differ: each member reads and writes with its own.
    """
    members, seen = [WorkingDir(path) for path in working_dirs], set()
    for member in members:
        if not member.is_trained():
            raise UserError(f"--ensemble: {member} holds no trained model (no {WorkingDir.HPARAMS})")
        if os.path.realpath(member.path) in seen:
            raise UserError(f"--ensemble: {member} is named twice (each member votes once)")
        seen.add(os.path.realpath(member.path))
    first, task = members[0], members[0].load_config(models).data.task
    for member in members[1:]:
        other = member.load_config(models).data.task
        if other != task:
            raise UserError(f"--ensemble: {member} was trained on --task={other}, {first} on --task={task}")
    return [member.load_model(models, overrides) for member in members]

"""--do_training: a new run, the unfinished run of --working_dir resumed, or that run set aside
(--start_over); which of them, and with which configuration, is decided here, from the files
``WorkingDir`` reads (it reads and writes them; it decides nothing).

A run resumes by the command that started it, or by ``--do_training --working_dir=DIR`` alone (its
saved settings fill in every flag not given); the flags given must be the saved ones, but for a
larger --max_epochs and the run-time options hparams.json does not keep. A finished run is not
trained further, and nothing of an existing run is changed by a command that is refused.
"""

import contextlib
import os
import shlex

import tensorflow as tf

from rnnpb_nmt import config as config_lib
from rnnpb_nmt.config import Config
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.train import interrupts, loop
from rnnpb_nmt.train.step import Trainer
from rnnpb_nmt.train.workdir import WorkingDir


def train(request):
    """Train a new model into the --working_dir of ``request`` (a ``flags.RunRequest``: the command's
    flags given, its registries and training options), or resume its unfinished run of the same
    configuration."""
    strategy = _strategy(request.distribute)  # first: a multi-worker strategy must precede other TF work
    run = WorkingDir(request.working_dir).for_worker(strategy)
    # Locked before anything is read, written or moved; what a run left there is read at once (a
    # run --start_over sets aside, not even its hparams.json); a directory that --start_over renames
    # away takes its held lock along, and the new one is locked too before it is written.
    with contextlib.ExitStack() as locks:
        found = locks.enter_context(run.locked(None if request.start_over else request.models))
        given, config, resuming = decide(request, found, run.path)
        task = request.tasks[config.data.task](config, run.path)
        corpus = task.load_corpus(given, config, run.load_vocabularies() if resuming else None)
        config = config.replace(**task.derived(given, corpus))
        if request.start_over and found.files:  # only once the new data has loaded: a typo moves nothing
            print(f"--start_over: the previous run is now {locks.enter_context(run.set_aside())}")
        tf.keras.utils.set_random_seed(config.training.seed)  # initialisation (epochs seed their own draws)
        with strategy.scope():
            model = request.models[config.model.model](config, corpus.vocab1, corpus.vocab2)
            trainer = Trainer(model)
        task.save(run.path)  # before hparams.json, which marks a run that can resume
        run.save_setup(config, corpus.vocab1, corpus.vocab2)
        if not resuming:
            print(f"training {config.model.model} on {config.data.num_train} sentence pairs into {run.path}")
        with interrupts.safe_points(), strategy.scope():
            loop.train(trainer, corpus, run.path, task)
    if not given.get("do_testing"):
        print(next_step(run.path, config.data.train_set1))


def decide(request, found, working_dir):
    """(flags, configuration, resuming) of training into ``working_dir``, from the ``request`` and what
    a run left there (``found``, a ``workdir.Found`` read under its lock): a new run (nothing there,
    or --start_over: it is set aside), or the unfinished run there resumed with its saved
    configuration (``resumed_config``); else a UserError, and nothing changed.

    The flags given are completed by the saved settings of a run to continue when none of the
    training files its task requires is given (``with_saved_settings``): ``--do_training
    --working_dir=DIR`` continues DIR's run without every flag typed again."""
    given = with_saved_settings(request.given, found.config, request.tasks)
    config = Config.from_flat(given)
    for name in request.tasks[config.data.task].required_files:
        if not given.get(name):
            raise UserError(f"--do_training needs --{name}")
    if config.model.model not in request.models:
        raise UserError(f"--model={config.model.model}: unknown (choose from {', '.join(request.models)})")
    if request.start_over or not found.files:
        config_lib.check_applicable(given, config)
        return given, config, False
    if WorkingDir.HPARAMS not in found.files:
        raise UserError(f"--working_dir={working_dir} holds {', '.join(found.files)} but no hparams.json: not a "
                        "run to resume; choose a new directory, or add --start_over to move it aside "
                        "(nothing was changed)")
    return given, resumed_config(found, working_dir, config, given), True


def next_step(working_dir, train_set):
    """The line that ends a training: where the model is and the command that tests it, on the test
    file beside ``train_set`` (``train.en`` -> ``test.en``) if there is one."""
    folder, name = os.path.split(train_set)
    guess = os.path.join(folder, name.replace("train", "test", 1))
    test_set = shlex.quote(guess) if guess != train_set and os.path.isfile(guess) else "FILE"
    return (f"the model is in {working_dir}; test it with: rnnpb-nmt --do_testing "
            f"--working_dir={shlex.quote(working_dir)} --test_set={test_set}")


def with_saved_settings(given, saved, tasks):
    """The flags ``given``, completed by the ``saved`` configuration of a run (None: none) when none of
    the training files its task requires is given."""
    task = tasks.get(saved.data.task) if saved else None
    if task is None or any(given.get(name) for name in task.required_files):
        return given
    flags = set(config_lib.names(flag=True))
    return {**{k: v for k, v in saved.to_flat().items() if k in flags and v is not None}, **given}


def resumed_config(found, working_dir, config, given):
    """The configuration an unfinished run resumes with: the saved one, with the --max_epochs of
    ``config`` and the run-time options among the flags ``given``; a UserError if it does not
    continue that run (``check_resumable``)."""
    return check_resumable(found, working_dir, config, given).replace(
        max_epochs=config.training.max_epochs, **_unsaved(given))


def check_resumable(found, working_dir, config, given):
    """The saved configuration of an unfinished run (``found`` in ``working_dir``) that ``config`` (of
    the flags ``given``) continues; else a UserError.

    Only --max_epochs may differ, to let a run that reached it go on longer, and --preset, a name for
    flags' values (the values are compared). The translation and
    recognition flags count too: the dev perplexity, and so early stopping, depends on them. A
    field the run does not read (``config.applies``) does not count, and may be given as saved: a
    run trained before such flags were refused (a model given another family's flag) resumes by the
    command that started it, and by that command without the flag.
    """
    saved = found.config
    if loop.is_finished(found.stats, saved.replace(max_epochs=config.training.max_epochs)):
        raise UserError(f"--working_dir={working_dir} already holds a trained model; "
                        "choose a new directory, or add --start_over (nothing was changed)")
    derived = set(config_lib.names(flag=False))
    was, now = saved.to_flat(), config.to_flat()
    config_lib.check_applicable({k: v for k, v in given.items() if k not in was or was[k] != v}, config)
    # --preset names values, which are compared themselves: a run resumes by its flags or its preset.
    differ = [f"--{k} (was {was[k]!r}, now {now[k]!r})" for k in was
              if k not in derived and k not in ("max_epochs", "preset") and was[k] != now[k]
              and config_lib.applies(k, saved)]
    if differ:
        raise UserError(f"--working_dir={working_dir} holds an unfinished run of another configuration: "
                        f"{', '.join(differ)}; use those flags to resume it, a new directory, or --start_over")
    return saved


def _unsaved(given):
    """The run-time options among the flags given (not kept in hparams.json)."""
    return {name: given[name] for name in config_lib.names(saved=False) if name in given}


def _strategy(name):
    """The tf.distribute strategy of --distribute."""
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multiworker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()

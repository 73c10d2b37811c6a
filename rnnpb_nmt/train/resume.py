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
    given, config = _requested(request)
    strategy = _strategy(request.distribute)  # first: a multi-worker strategy must precede other TF work
    run = WorkingDir(request.working_dir).for_worker(strategy)
    task = request.tasks[config.data.task](config, run.path)
    # Locked before anything is read (what with_saved_settings peeked at is checked again), written
    # or moved; a directory that --start_over renames away takes its held lock along, and the new
    # one is locked too before it is written.
    with contextlib.ExitStack() as locks:
        held = locks.enter_context(run.locked())
        config, resuming, start_over = _decide(request, run, held, config, given)
        corpus = task.load_corpus(given, config, run.load_vocabularies() if resuming else None)
        config = config.replace(**task.derived(given, corpus))
        if start_over:  # only once the new run's data has loaded, so a typo does not move the old run
            print(f"--start_over: the previous run is now {run.set_aside()}")
            locks.enter_context(run.locked())
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


def _requested(request):
    """The flags given, completed by the saved settings of a run to continue (``with_saved_settings``;
    not with --start_over), and their configuration, once its task has the training files it
    requires and its model is known."""
    given = request.given if request.start_over else with_saved_settings(request)
    config = Config.from_flat(given)
    for name in request.tasks[config.data.task].required_files:
        if not given.get(name):
            raise UserError(f"--do_training needs --{name}")
    if config.model.model not in request.models:
        raise UserError(f"--model={config.model.model}: unknown (choose from {', '.join(request.models)})")
    return given, config


def _decide(request, run, held, config, given):
    """(configuration, resuming, start_over) of training into ``run`` (locked), where ``held`` are the
    files of a run (``WorkingDir.run_files``): a new run (none there, or --start_over: they are set
    aside), or the unfinished run there resumed with its saved configuration; else a UserError, and
    nothing changed."""
    start_over = request.start_over and bool(held)
    if start_over or not held:
        config_lib.check_applicable(given, config)
        return config, False, start_over
    if WorkingDir.HPARAMS not in held:
        raise UserError(f"--working_dir={run} holds {', '.join(held)} but no hparams.json: not a run "
                        "to resume; choose a new directory, or add --start_over to move it aside "
                        "(nothing was changed)")
    return resumed_config(run, request.models, config, given), True, False


def next_step(working_dir, train_set):
    """The line that ends a training: where the model is and the command that tests it, on the test
    file beside ``train_set`` (``train.en`` -> ``test.en``) if there is one."""
    folder, name = os.path.split(train_set)
    guess = os.path.join(folder, name.replace("train", "test", 1))
    test_set = shlex.quote(guess) if guess != train_set and os.path.isfile(guess) else "FILE"
    return (f"the model is in {working_dir}; test it with: rnnpb-nmt --do_testing "
            f"--working_dir={shlex.quote(working_dir)} --test_set={test_set}")


def with_saved_settings(request):
    """The flags given, completed by the saved settings of the run in --working_dir when it holds one
    and none of the training files its task requires is given: ``--do_training --working_dir=DIR``
    continues DIR's run without every flag typed again. Read before the lock is taken: under it,
    ``resumed_config`` checks the flags against hparams.json again, whoever changed it meanwhile."""
    given, saved = request.given, WorkingDir(request.working_dir).saved_config(request.models)
    task = request.tasks.get(saved.data.task) if saved else None
    if task is None or any(given.get(name) for name in task.required_files):
        return given
    flags = set(config_lib.names(flag=True))
    return {**{k: v for k, v in saved.to_flat().items() if k in flags and v is not None}, **given}


def resumed_config(run, models, config, given):
    """The configuration an unfinished run resumes with: the saved one, with the --max_epochs of
    ``config`` and the run-time options among the flags ``given``; a UserError if it does not
    continue that run (``check_resumable``)."""
    return check_resumable(run.path, models, config, given).replace(
        max_epochs=config.training.max_epochs, **_unsaved(given))


def check_resumable(working_dir, models, config, given):
    """The saved configuration of an unfinished run in ``working_dir`` that ``config`` (of the flags
    ``given``) continues; else a UserError.

    Only --max_epochs may differ, to let a run that reached it go on longer, and --preset, a name for
    flags' values (the values are compared). The translation and
    recognition flags count too: the dev perplexity, and so early stopping, depends on them. A
    field the run does not read (``config.applies``) does not count, and may be given as saved: a
    run trained before such flags were refused (a model given another family's flag) resumes by the
    command that started it, and by that command without the flag.
    """
    run = WorkingDir(working_dir)
    saved = run.load_config(models)
    if loop.is_finished(run.stats(), saved.replace(max_epochs=config.training.max_epochs)):
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

"""The command line of the thesis (SPEC section 7): --do_training, --do_testing, --query.

Flags keep the thesis's names so that its run scripts work unchanged. Unknown flags and invalid
values are errors; a UserError or OSError anywhere becomes one line on stderr and exit status 1.
"""

import argparse
import contextlib
import os
import sys

import tensorflow as tf

from nmtcore import analysis, config as config_lib, files, interrupts, lock, parallel, prediction, training, workdir
from nmtcore.config import Config, DataConfig
from nmtcore.errors import UserError
from nmtcore.trainer import Trainer
from nmtcore.translator import Translator
from nmtcore.voting import VotingTranslator

MODEL_ALIASES = {"rnnpbmt": "rnnpbnmt", "rnnpbmmt": "rnnpbnmt"}  # spellings in the thesis listings
GROUPS = {"data": "data", "model": "model (saved in hparams.json)", "training": "training (saved in hparams.json)",
          "inference": "translation and recognition (saved; may be changed at test time)"}


def _add_flags(group, section, choices=None):
    """One flag per field of a config section, from its metadata; every default is None, which
    means "not given" (a resumed or tested run takes the saved value)."""
    for field in config_lib.fields(section):
        m = field.metadata
        if not m["flag"]:
            continue
        kind = config_lib.flag_type(field)
        if kind is bool:
            group.add_argument(f"--{field.name}", action="store_true", default=None, help=m["help"])
        else:
            group.add_argument(f"--{field.name}", type=kind, default=None, help=m["help"],
                               choices=(choices or {}).get(field.name, m["choices"]))


def build_parser(model_names, task_names=("translation",)):
    p = argparse.ArgumentParser(prog="nmt.py", allow_abbrev=False,
                                description="Bound-RNNPB and seq-to-seq neural machine translation.")
    mode = p.add_argument_group("what to do")
    mode.add_argument("--do_training", action="store_true", help="train a model into --working_dir")
    mode.add_argument("--do_testing", action="store_true", help="translate --test_set and score BLEU")
    mode.add_argument("--query", help="translate this raw sentence ('-': one sentence per stdin line)")
    mode.add_argument("--analyze", action="store_true",
                      help="write the thesis's figures and PB diagnostics to <working_dir>/analysis "
                           "(on --test_set, default: the dev set)")
    mode.add_argument("--working_dir", required=True, help="where the model and its statistics live "
                                                           "(with --ensemble: where the vote's test files go)")
    mode.add_argument("--ensemble", help="--do_testing by the majority vote of these trained working directories "
                                         "(comma-separated; a tie goes to the first listed)")
    mode.add_argument("--start_over", action="store_true",
                      help="--do_training into a --working_dir that holds a run: move that run to "
                           "<working_dir>.previous-N and train anew (without it, the run is resumed or refused)")
    mode.add_argument("--device", choices=["cpu", "gpu", "auto"], default="auto",
                      help="cpu hides every GPU (the thesis tested on cpu); gpu refuses to run without one")
    mode.add_argument("--distribute", choices=["none", "mirrored", "multiworker"], default="none",
                      help="train with tf.distribute (multiworker reads TF_CONFIG)")
    mode.add_argument("--reverse_translation", action="store_true",
                      help="translate B->A with a bound RNNPB (the model is symmetric)")
    choices = {"model": sorted(set(model_names) | set(MODEL_ALIASES)), "task": sorted(task_names)}
    for name, section in config_lib.SECTIONS.items():
        group = p.add_argument_group(GROUPS[name])
        _add_flags(group, section, choices)
        if name == "data":
            group.add_argument("--test_set", help="tokenized text to translate and score (--do_testing)")
            group.add_argument("--test_ref", help="reference of --test_set (default: its counterpart, "
                                                  "test.en -> test.de)")
    return p


def main(models, tasks, argv=None):
    """Entry point; ``models`` maps --model names to NMTModel subclasses, ``tasks`` task names
    to task classes (``nmtcore.tasks``)."""
    args = build_parser(models, tasks).parse_args(argv)
    if not (args.do_training or args.do_testing or args.analyze or args.query is not None):
        print("error: nothing to do: give --do_training, --do_testing, --analyze and/or --query", file=sys.stderr)
        return 2
    interrupts.stop_at_once()
    try:
        run(models, tasks, args)
    except (UserError, OSError) as e:  # OSError: an unreadable file, a full disk, a file as --working_dir
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted" + (": run the same command again to resume from the last finished epoch"
                               if args.do_training else ""), file=sys.stderr)
        return 130
    return 0


def run(models, tasks, args):
    if args.device == "cpu":
        tf.config.set_visible_devices([], "GPU")
    if args.device == "gpu" and not tf.config.list_physical_devices("GPU"):
        raise UserError("--device=gpu: TensorFlow sees no GPU")
    parallel.use_cores_for_batches()
    given = {k: v for k, v in vars(args).items() if v is not None}
    if "model" in given:
        given["model"] = MODEL_ALIASES.get(given["model"], given["model"])
    config_lib.check_ranges(given)
    if args.do_testing and not args.test_set:
        raise UserError("--do_testing needs --test_set")
    if args.ensemble is not None and (args.do_training or args.analyze or args.query is not None
                                      or not args.do_testing):
        raise UserError("--ensemble: only with --do_testing (not with --do_training, --analyze or --query)")
    for flag in ("test_set", "test_ref"):  # before training, not hours into it
        if given.get(flag) and not os.path.isfile(given[flag]):
            raise UserError(f"--{flag}={given[flag]}: no such file")
    outputs = (prediction.OUTPUTS if args.do_testing else ()) + (analysis.OUTPUTS if args.analyze else ())
    for name in outputs:  # before training or translating, not hours into it
        files.check_writable(os.path.join(args.working_dir, name))
    if args.do_training:
        train_command(models, tasks, given, args)
    if args.do_testing or args.analyze or args.query is not None:
        overrides = {f.name: given[f.name] for f in config_lib.fields(config_lib.InferenceConfig) if f.name in given}
        translator, task, members = load_translator(models, tasks, args, overrides)
        if args.do_testing:
            prediction.test(translator, task, args.test_set, args.working_dir, args.test_ref, args.reverse_translation,
                            members=members)
        if args.analyze:
            analysis.analyze(translator, task, args.working_dir, args.test_set, args.test_ref)
        if args.query is not None:
            prediction.query(translator, task, args.query, args.reverse_translation)


def load_translator(models, tasks, args, overrides):
    """(translator, task, the ensemble's working directories or None): the model of --working_dir,
    or with --ensemble the majority vote of its members (``nmtcore.voting``)."""
    if args.ensemble is None:
        model = workdir.load_model(args.working_dir, models, overrides)
        return Translator(model), tasks[model.config.data.task](model.config), None
    members = ensemble_members(args.ensemble)
    loaded = workdir.load_ensemble(members, models, overrides)
    task = tasks[loaded[0].config.data.task](loaded[0].config)
    os.makedirs(args.working_dir, exist_ok=True)  # it holds the vote's test files, and no model
    return VotingTranslator([Translator(model) for model in loaded], task), task, members


def ensemble_members(value):
    """The working directories of ``--ensemble=DIR1,DIR2,...``, in order (which breaks ties)."""
    members = value.split(",")
    if "" in members:
        raise UserError(f"--ensemble={value}: an empty directory name (give DIR1,DIR2,...)")
    return members


def _strategy(name):
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multiworker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()


def _unsaved(given):
    """The run-time options among the flags given (not kept in hparams.json)."""
    return {f.name: given[f.name] for section in config_lib.SECTIONS.values() for f in config_lib.fields(section)
            if not f.metadata["saved"] and f.name in given}


def train_command(models, tasks, given, args):
    """Train a new model, or resume the unfinished run of the same configuration in --working_dir."""
    config = Config.from_flat(given)
    task = tasks[config.data.task](config)
    for name in task.required_files:
        if not given.get(name):
            raise UserError(f"--do_training needs --{name}")
    if config.model.model not in models:
        raise UserError(f"--model={config.model.model}: unknown (choose from {', '.join(models)})")
    strategy = _strategy(args.distribute)  # first: a multi-worker strategy must precede other TF work
    working_dir = workdir.for_worker(args.working_dir, strategy)
    # Locked before anything is read, written or moved; a directory that --start_over renames away
    # takes its held lock along, and the new one is locked too before it is written.
    with contextlib.ExitStack() as locks:
        locks.enter_context(lock.exclusive(working_dir))
        start_over = args.start_over and workdir.is_trained(working_dir)
        resuming = workdir.is_trained(working_dir) and not start_over
        if resuming:
            config = check_resumable(working_dir, models, config, given).replace(
                max_epochs=config.training.max_epochs, **_unsaved(given))
        else:
            config_lib.check_applicable(given, config)
        corpus = task.load_corpus(given, config, workdir.load_vocabularies(working_dir) if resuming else None)
        config = config.replace(**task.derived(given, corpus))
        if start_over:  # only once the new run's data has loaded, so a typo does not move the old run
            print(f"--start_over: the previous run is now {workdir.set_aside(working_dir)}")
            locks.enter_context(lock.exclusive(working_dir))
        tf.keras.utils.set_random_seed(config.training.seed)  # initialisation (epochs seed their own draws)
        with strategy.scope():
            model = models[config.model.model](config, corpus.vocab1, corpus.vocab2)
            trainer = Trainer(model)
        workdir.save_setup(working_dir, config, corpus.vocab1, corpus.vocab2)
        if not resuming:
            print(f"training {config.model.model} on {config.data.num_train} sentence pairs into {working_dir}")
        with interrupts.safe_points(), strategy.scope():
            training.train(trainer, corpus, working_dir, task)


def check_resumable(working_dir, models, config, given):
    """The saved configuration of an unfinished run that ``config`` (of the flags ``given``)
    continues; else a UserError.

    Only --max_epochs may differ, to let a run that reached it go on longer. The translation and
    recognition flags count too: the dev perplexity, and so early stopping, depends on them. A
    field the run does not read (``config.applies``) does not count, and may be given as saved: a
    run trained before such flags were refused (a deep_lstm given --memory_width) resumes by the
    command that started it, and by that command without the flag.
    """
    saved = workdir.load_config(working_dir, models)
    if training.is_finished(training.load_stats(working_dir), saved.replace(max_epochs=config.training.max_epochs)):
        raise UserError(f"--working_dir={working_dir} already holds a trained model; "
                        "choose a new directory, or add --start_over (nothing was changed)")
    derived = {f.name for f in config_lib.fields(DataConfig) if not f.metadata["flag"]}
    was, now = saved.to_flat(), config.to_flat()
    config_lib.check_applicable({k: v for k, v in given.items() if k not in was or was[k] != v}, config)
    differ = [f"--{k} (was {was[k]!r}, now {now[k]!r})" for k in was
              if k not in derived and k != "max_epochs" and was[k] != now[k] and config_lib.applies(k, saved)]
    if differ:
        raise UserError(f"--working_dir={working_dir} holds an unfinished run of another configuration: "
                        f"{', '.join(differ)}; use those flags to resume it, a new directory, or --start_over")
    return saved

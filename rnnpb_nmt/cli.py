"""The command line of the thesis (SPEC section 7): --do_training, --do_testing, --query; and --translate;
and its commands: ``rnnpb-nmt train|test|translate`` (those modes, each with only its own flags and a
short --help), ``export``, ``serve`` (``rnnpb_nmt.serving``) and ``demo-data`` (``rnnpb_nmt.demo_data``).

Flags keep the thesis's names so that its run scripts work unchanged. Unknown flags and invalid
values are one-line errors naming the closest flag or value (exit status 2; the parsing is
``rnnpb_nmt.flags``'); a UserError or OSError anywhere becomes one line on stderr and exit status 1.
Here: the flags, and which command runs; what --do_training does with a working directory is
``rnnpb_nmt.train.resume``'s.
"""

import argparse
import importlib.metadata
import io
import os
import platform
import sys

import tensorflow as tf

from rnnpb_nmt import config as config_lib, flags, registry
from rnnpb_nmt.data import files
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import analysis, parallel, prediction, streaming
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.infer.voting import VotingTranslator
from rnnpb_nmt.train import interrupts, mid_epoch, resume, workdir

DEMO = "--train_set1=demo/data/train.en --train_set2=demo/data/train.de --dev_set1=demo/data/dev.en " \
       "--dev_set2=demo/data/dev.de"
# The subcommands: what each does, and the thesis's flag it stands for (None: a command of its own).
COMMANDS = {
    "train": ("train a model into --working_dir, or resume its unfinished run there", "--do_training"),
    "test": ("translate --test_set and score it (BLEU, or the task's score); --analyze", "--do_testing"),
    "translate": ("translate raw text: -i FILE or stdin, to -o FILE or stdout", "--translate"),
    "export": ("write a trained run as a TensorFlow SavedModel", None),
    "serve": ("answer translation requests over HTTP (JSON)", None),
    "demo-data": ("write the demo's synthetic en->de corpus (tokenized, or --raw)", None),
}
EXAMPLES = {
    "train": f"{{prog}} train --preset=bound {DEMO} --working_dir=runs/bound",
    "test": "{prog} test --test_set=demo/data/test.en --working_dir=runs/bound",
    "translate": "echo 'The old teacher sees a small dog .' | {prog} translate --nbest=3 --working_dir=runs/bound",
}
# The flags that are no configuration field: the subcommands that take each (all: the thesis's command).
OWN_FLAGS = [
    ((), ("--do_training",), dict(action="store_true", help="train a model into --working_dir, or continue the "
                                  "unfinished run there (with no training files given, its saved settings fill in "
                                  "the flags not given)")),
    ((), ("--do_testing",), dict(action="store_true", help="translate --test_set and score BLEU")),
    ((), ("--query",), dict(help="translate this raw sentence ('-': one sentence per stdin line, each answered at "
                                 "once)")),
    ((), ("--translate",), dict(action="store_true", help="translate raw text --input into --output, line by line "
                                                          "(also: rnnpb-nmt translate ...)")),
    (("translate",), ("-i", "--input"), dict(default="-", help="--translate: the raw text to translate ('-': stdin)")),
    (("translate",), ("-o", "--output"), dict(default="-", help="--translate: where the translations go ('-': "
                                                                 "stdout)")),
    (("translate",), ("--nbest",), dict(type=int, default=1, help="--translate/--query: the N best translations of "
                                        "each line, as 'LINE ||| text ||| score' (at most --beam_size)")),
    (("translate",), ("--scores",), dict(action="store_true", help="--translate/--query: each translation's score "
                                         "(summed log-probability), as --nbest's lines")),
    (("translate",), ("--token_scores",), dict(action="store_true", help="--translate/--query: also the "
                                               "log-probability of each output symbol and of the end")),
    (("test",), ("--analyze",), dict(action="store_true", help="write the thesis's figures and PB diagnostics (a "
                                     "bound RNNPB: bitext retrieval) to --analysis_dir (on --test_set, default: the "
                                     "dev set)")),
    (("test",), ("--analysis_dir",), dict(help="--analyze: where its figures and summary go (default: "
                                          "<working_dir>/analysis)")),
    (("train", "test", "translate"), ("--working_dir",), dict(required=True, help="where the model and its "
                                      "statistics live (with --ensemble: where the vote's test files go)")),
    (("test",), ("--ensemble",), dict(help="--do_testing by the majority vote of these trained working directories "
                                      "(comma-separated; a tie goes to the first listed)")),
    (("train",), ("--start_over",), dict(action="store_true", help="--do_training into a --working_dir that holds a "
                                         "run: move that run to <working_dir>.previous-N and train anew (without it, "
                                         "the run is resumed or refused)")),
    (("train", "test", "translate"), ("--device",), dict(choices=["cpu", "gpu", "auto"], default="auto", help=(
        "cpu hides every GPU (the thesis tested on cpu); gpu refuses to run without one"))),
    (("train",), ("--distribute",), dict(choices=["none", "mirrored", "multiworker"], default="none",
                                         help="train with tf.distribute (multiworker reads TF_CONFIG)")),
    (("test", "translate"), ("--reverse_translation",), dict(action="store_true", help="translate B->A with a bound "
                                                            "RNNPB (the model is symmetric)")),
]
TEST_FILES = [
    ("--test_set", "tokenized text to translate and score (--do_testing)"),
    ("--test_ref", "reference of --test_set (default: its counterpart, test.en -> test.de)"),
]
# The config sections each subcommand's flags come from (the thesis's command: every one).
SECTIONS = {"train": ("model", "training", "data", "inference"), "test": ("inference",), "translate": ("inference",)}


def version():
    """The installed package's version (``pip install``; a clone run as nmt.py has none), and the stack's."""
    try:
        number = importlib.metadata.version("rnnpb-nmt")
    except importlib.metadata.PackageNotFoundError:
        number = "(not installed: no package metadata)"
    return f"rnnpb-nmt {number} (Python {platform.python_version()}, TensorFlow {tf.__version__})"


def usage():
    """What a bare ``rnnpb-nmt`` prints: the subcommands, the thesis's flags, and where the rest is."""
    name = flags.prog()
    return "\n".join([f"usage: {name} COMMAND [flags]      (or the thesis's flags: {name} --do_training ...)", "",
                      *_commands(), "", f"{name} --help: the thesis's flags and the presets; {name} --version; "
                                        f"every flag: {flags.DOCS}"])


def _commands():
    return ["commands (COMMAND --help: its flags, with their defaults, and an example):",
            *(f"  {command:<11} {summary}" for command, (summary, _) in COMMANDS.items())]


def _presets():
    return ["presets (--preset=NAME with train; flags given beside it replace its values):",
            *(f"  {p.name:<11} {p.help}" for p in registry.presets().values())]


def _parser(command):
    """The parser of the thesis's command (``command`` None: its usage, the commands and presets,
    --version) or of a subcommand, without their flags."""
    name = flags.prog()
    if command is not None:
        return flags.Parser(prog=f"{name} {command}", usage="%(prog)s --working_dir=DIR [flags]",
                            description=COMMANDS[command][0], example=EXAMPLES[command].format(prog=name))
    p = flags.Parser(prog=name, usage="%(prog)s COMMAND [flags]  |  %(prog)s --do_training|--do_testing|--query=TEXT|"
                                      "--translate|--analyze [flags] --working_dir=DIR",
                     description="\n".join(["Bound-RNNPB and seq-to-seq neural machine translation.", "",
                                            *_commands(), "", *_presets()]),
                     epilog=f"The model, training and data flags, with their defaults: {name} train --help "
                            f"[--model=NAME]; the translation flags: {name} test --help; every flag: {flags.DOCS}.")
    p.add_argument("--version", action="version", version=version(), help="the version of the package, Python and "
                                                                           "TensorFlow")
    return p


def build_parser(model_names, task_names=None, command=None):
    """The parser of ``model_names`` and ``task_names`` (default: every registered task): of the
    thesis's command, or of a subcommand (train, test, translate): its flags, its config sections."""
    task_names = registry.tasks() if task_names is None else task_names
    p = _parser(command)
    mode = p.add_argument_group("what to do" if command is None else f"{command}'s flags")
    for commands, names, kwargs in OWN_FLAGS:
        if command is None or command in commands:
            mode.add_argument(*names, **kwargs)
    choices = {"model": sorted(set(model_names) | set(registry.model_aliases())), "task": sorted(task_names),
               "preset": ["none", *registry.presets()]}
    for section in SECTIONS.get(command, config_lib.SECTIONS):
        if command is None:  # parsed, not listed: --help points at the subcommands' help and docs/flags.md
            flags.add_flags(p.add_argument_group(flags.GROUPS[section]), config_lib.SECTIONS[section], choices,
                            listed=True)
        else:
            p.add_section(section, choices)
    if command in (None, "test"):
        for flag, text in TEST_FILES:
            mode.add_argument(flag, help=text)
    return p


def parse(models, tasks, argv):
    """The flags of ``argv`` (a subcommand's, or the thesis's), every flag of the thesis's command
    present (a subcommand's mode flag set, the flags it does not take at their defaults)."""
    command = argv[0] if argv and argv[0] in SECTIONS else None
    args = vars(build_parser(models, tasks, command).parse_args(argv[1:] if command else argv))
    if command is None:
        return argparse.Namespace(**args)
    defaults = {names[-1].lstrip("-"): kwargs.get("default", False if kwargs.get("action") else None)
                for _, names, kwargs in OWN_FLAGS}
    defaults.update({flag.lstrip("-"): None for flag, _ in TEST_FILES})
    defaults.update({f.name: None for section in config_lib.SECTIONS.values() for f in config_lib.fields(section)})
    defaults[COMMANDS[command][1].lstrip("-")] = True
    return argparse.Namespace(**{**defaults, **args})


def console_main(argv=None):
    """The ``rnnpb-nmt`` command (and ``nmt.py``): every registered model and task. ``rnnpb-nmt
    train|test|translate ...`` is ``rnnpb-nmt --do_training|--do_testing|--translate ...`` with
    the flags of that command; export, serve and demo-data are commands of their own."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        print(usage(), file=sys.stderr)
        return 2
    if argv[0] == "export":  # rnnpb-nmt export --working_dir D --out E: a SavedModel (rnnpb_nmt.serving.export)
        from rnnpb_nmt.serving import export
        return export.main(argv[1:])
    if argv[0] == "serve":  # rnnpb-nmt serve --working_dir D|--saved_model E: HTTP (rnnpb_nmt.serving.server)
        from rnnpb_nmt.serving import server
        return server.main(argv[1:])
    if argv[0] == "demo-data":
        from rnnpb_nmt import demo_data
        return demo_data.main(argv[1:])
    return main(registry.models(), registry.tasks(), argv)


def main(models, tasks, argv=None):
    """Entry point; ``models`` maps --model names to NMTModel subclasses, ``tasks`` task names
    to task classes (``rnnpb_nmt.tasks``)."""
    args = parse(models, tasks, list(sys.argv[1:] if argv is None else argv))
    if not (args.do_training or args.do_testing or args.analyze or args.query is not None or args.translate):
        print("error: nothing to do: give --do_training, --do_testing, --analyze, --query and/or --translate",
              file=sys.stderr)
        return 2
    interrupts.stop_at_once()
    try:
        run(models, tasks, args)
    except (UserError, OSError) as e:  # OSError: an unreadable file, a full disk, a file as --working_dir
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:
        where = stop.resume_from if isinstance(stop, interrupts.Stopped) else "the last finished epoch"
        print("interrupted" + (f": run the same command again to resume from {where}"
                               if args.do_training else ""), file=sys.stderr)
        return 130
    return 0


def run(models, tasks, args):
    if not args.working_dir:
        raise UserError("--working_dir: empty (give the run's directory)")
    if args.device == "cpu":
        tf.config.set_visible_devices([], "GPU")
    if args.device == "gpu" and not tf.config.list_physical_devices("GPU"):
        raise UserError("--device=gpu: TensorFlow sees no GPU")
    parallel.use_cores_for_batches()
    given = given_values(args)
    config_lib.check_ranges(given)
    if args.do_testing and not args.test_set:
        raise UserError("--do_testing needs --test_set")
    if args.ensemble is not None and (args.do_training or args.analyze or args.query is not None
                                      or args.translate or not args.do_testing):
        raise UserError("--ensemble: only with --do_testing (not with --do_training, --analyze, --query or --translate)")
    _check_translation_flags(args)
    _check_training_flags(args, given)
    for flag in ("test_set", "test_ref"):  # before training, not hours into it
        if given.get(flag) and not os.path.isfile(given[flag]):
            raise UserError(f"--{flag}={given[flag]}: no such file")
    if args.analysis_dir and not args.analyze:
        raise UserError("--analysis_dir: only with --analyze")
    analysis_dir = args.analysis_dir or os.path.join(args.working_dir, analysis.FOLDER)
    tested = prediction.outputs(args.reverse_translation) if args.do_testing else ()
    outputs = [os.path.join(args.working_dir, name) for name in tested]
    if args.analyze:
        outputs.append(os.path.join(analysis_dir, analysis.SUMMARY))
    for path in outputs:  # before training or translating, not hours into it
        files.check_writable(path)
    request = flags.RunRequest(models, tasks, given, args.working_dir, args.start_over, args.distribute)
    if args.do_training:
        resume.train(request)
    if args.do_testing or args.analyze or args.query is not None or args.translate:
        translator, task, members = load_translator(request, args.ensemble)
        directed = translator.reversed() if args.reverse_translation else translator  # B->A: the model's reversed view
        if args.do_testing:
            prediction.test(directed, task, args.test_set, request.working_dir, args.test_ref, members=members)
        if args.analyze:
            analysis.analyze(translator, task, request.working_dir, args.test_set, args.test_ref, analysis_dir)
        options = dict(nbest=args.nbest, scores=args.scores, token_scores=args.token_scores)
        if args.query is not None:
            source = sys.stdin.buffer if args.query == "-" else io.BytesIO(args.query.encode("utf-8"))
            streaming.translate_stream(directed, task, source, sys.stdout, **options)
        if args.translate:
            streaming.translate_file(directed, task, args.input, args.output, **options)


def given_values(args):
    """The flags given (flat names -> values), a ``--preset``'s values beneath them and the
    ``--model`` alias resolved: what a run's configuration is made of."""
    given = {k: v for k, v in vars(args).items() if v is not None}
    preset = registry.presets().get(given.get("preset")) if args.do_training else None  # else refused, by name
    given = {**preset.values, **given} if preset else given
    if "model" in given:
        given["model"] = registry.model_aliases().get(given["model"], given["model"])
    return given


def _check_translation_flags(args):
    """The flags of --translate and --query, before any model is loaded."""
    if args.nbest < 1:
        raise UserError(f"--nbest={args.nbest}: must be >= 1")
    if args.query is not None and args.translate:
        raise UserError("--query and --translate: give one (--translate reads --input)")
    if not args.translate and (args.input != "-" or args.output != "-"):
        raise UserError("--input/--output: only with --translate")
    if args.query is None and not args.translate and (args.nbest != 1 or args.scores or args.token_scores):
        raise UserError("--nbest/--scores/--token_scores: only with --translate or --query")
    if args.translate and args.output != "-":
        files.check_writable(args.output)
        run = os.path.realpath(args.working_dir)
        if os.path.exists(args.output) and os.path.commonpath([os.path.realpath(args.output), run]) == run:
            raise UserError(f"--output={args.output}: a file of --working_dir={args.working_dir} "
                            "(it would be overwritten; write a new file)")


def _check_training_flags(args, given):
    """Without --do_training, the flags only training reads are refused, not ignored: a trained
    run's model, training and data settings are its hparams.json's (a test with --units=512 would
    test the saved model, not a larger one)."""
    if args.distribute != "none" and given.get("save_every_steps"):
        raise UserError(f"--save_every_steps: not with --distribute={args.distribute} ({mid_epoch.UNDISTRIBUTED})")
    if args.distribute != "none" and given.get("mixed_precision") == "float16":
        raise UserError(f"--mixed_precision=float16: not with --distribute={args.distribute} (its loss scaling skips "
                        "a step's update on one device only; bfloat16 needs no loss scaling)")
    if args.do_training:
        return
    for name in ("model", "training", "data"):
        for f in config_lib.fields(config_lib.SECTIONS[name]):
            if f.metadata["flag"] and f.name in given:
                raise UserError(f"--{f.name}: only with --do_training (a trained run's {name} settings are its "
                                "hparams.json's); it would be ignored")
    for flag, unread in (("start_over", args.start_over), ("distribute", args.distribute != "none")):
        if unread:
            raise UserError(f"--{flag}: only with --do_training; it would be ignored")
    if args.test_ref and not (args.do_testing or args.analyze):
        raise UserError("--test_ref: only with --do_testing or --analyze; it would be ignored")


def load_translator(request, ensemble):
    """(translator, task, the ensemble's working directories or None): the model of the ``request``'s
    --working_dir, or with ``ensemble`` (--ensemble) the majority vote of its members
    (``rnnpb_nmt.infer.voting``); the translation flags given replace their saved values."""
    models, tasks, overrides = request.models, request.tasks, flags.inference_settings(request.given)
    if ensemble is None:
        model = workdir.WorkingDir(request.working_dir).load_model(models, overrides)
        return Translator(model), tasks[model.config.data.task](model.config, request.working_dir), None
    members = ensemble_members(ensemble)
    loaded = workdir.load_ensemble(members, models, overrides)
    task = tasks[loaded[0].config.data.task](loaded[0].config, members[0])
    _check_same_preparation(members, [tasks[m.config.data.task](m.config, d) for m, d in zip(loaded, members)])
    os.makedirs(request.working_dir, exist_ok=True)  # it holds the vote's test files, and no model
    return VotingTranslator([Translator(model) for model in loaded], task), task, members


def _check_same_preparation(members, member_tasks):
    """An ensemble reads each test line once, with its first member's text preparation: every
    member must prepare text the same way (a translation run's --tokenize, --subword and its
    subword models)."""
    prepared = [getattr(t, "text", None) for t in member_tasks]
    for member, text in zip(members[1:], prepared[1:]):
        if text is not None and (text.tokenize_mode, text.subword, text.models) != \
                (prepared[0].tokenize_mode, prepared[0].subword, prepared[0].models):
            raise UserError(f"--ensemble: {member} prepares its text otherwise than {members[0]} "
                            "(--tokenize, --subword or its subword models differ)")


def ensemble_members(value):
    """The working directories of ``--ensemble=DIR1,DIR2,...``, in order (which breaks ties)."""
    members = value.split(",")
    if "" in members:
        raise UserError(f"--ensemble={value}: an empty directory name (give DIR1,DIR2,...)")
    return members

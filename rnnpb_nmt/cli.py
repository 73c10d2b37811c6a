"""The command line of the thesis (SPEC section 7): --do_training, --do_testing, --query; and --translate.

Flags keep the thesis's names so that its run scripts work unchanged. Unknown flags and invalid
values are one-line errors naming the closest flag or value (exit status 2); a UserError or OSError
anywhere becomes one line on stderr and exit status 1. Here: the flags, and which command runs;
what --do_training does with a working directory is ``rnnpb_nmt.train.resume``'s.
"""

import argparse
import difflib
import io
import os
import sys

import tensorflow as tf

from rnnpb_nmt import config as config_lib, registry
from rnnpb_nmt.data import files
from rnnpb_nmt.errors import UserError
from rnnpb_nmt.infer import analysis, parallel, prediction, streaming
from rnnpb_nmt.infer.translator import Translator
from rnnpb_nmt.infer.voting import VotingTranslator
from rnnpb_nmt.train import interrupts, resume, workdir

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


class _Parser(argparse.ArgumentParser):
    """argparse, whose errors are one line (not the usage, 46 lines of it), naming the flags or
    values closest to a mistyped one."""

    def parse_args(self, args=None, namespace=None):
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {self._unknown(unknown)}")
        return parsed

    def _unknown(self, unknown):
        """The unknown arguments, and the known flags closest to each unknown flag."""
        flags = [s for s in self._option_string_actions if s.startswith("--")]
        close = {word.split("=")[0]: " or ".join(_closest(word.split("=")[0], flags))
                 for word in unknown if word.startswith("-")}
        close = {word: hint for word, hint in close.items() if hint}
        if not close:
            return f"{' '.join(unknown)} ({self.prog} --help lists the flags)"
        hints = next(iter(close.values())) if len(close) == 1 else ", ".join(f"{h} for {w}" for w, h in close.items())
        return f"{' '.join(unknown)} (did you mean {hints}?)"

    def _check_value(self, action, value):
        """argparse's check of a --flag=VALUE against the flag's choices (its message), naming the
        closest choices."""
        if action.choices is not None and value not in action.choices:
            close = " or ".join(map(repr, _closest(str(value), [str(c) for c in action.choices])))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from "
                                                 f"{', '.join(map(repr, action.choices))}"
                                                 f"{f'; did you mean {close}?' if close else ''})")

    def error(self, message):
        self.exit(2, f"error: {message}\n")


def _closest(word, known):
    """The ``known`` words closest to a mistyped ``word``: the closest, and those nearly as close."""
    ratios = {k: difflib.SequenceMatcher(None, word, k).ratio() for k in known}
    best = max(ratios.values(), default=0)
    return [k for k in difflib.get_close_matches(word, known, n=3) if ratios[k] >= best - 0.1]


def _prog():
    """The command's name as it was run: ``rnnpb-nmt`` (the console command) or ``nmt.py``."""
    name = os.path.basename(sys.argv[0])
    return "python3 -m rnnpb_nmt" if name == "__main__.py" else name or "rnnpb-nmt"


def build_parser(model_names, task_names=None):
    """The parser of ``model_names`` and ``task_names`` (default: every registered task)."""
    task_names = registry.tasks() if task_names is None else task_names
    p = _Parser(prog=_prog(), allow_abbrev=False,
                description="Bound-RNNPB and seq-to-seq neural machine translation.")
    mode = p.add_argument_group("what to do")
    mode.add_argument("--do_training", action="store_true",
                      help="train a model into --working_dir, or continue the unfinished run there (with no "
                           "training files given, its saved settings fill in the flags not given)")
    mode.add_argument("--do_testing", action="store_true", help="translate --test_set and score BLEU")
    mode.add_argument("--query", help="translate this raw sentence ('-': one sentence per stdin line, each "
                                      "answered at once)")
    mode.add_argument("--translate", action="store_true",
                      help="translate raw text --input into --output, line by line (also: rnnpb-nmt translate ...)")
    mode.add_argument("-i", "--input", default="-", help="--translate: the raw text to translate ('-': stdin)")
    mode.add_argument("-o", "--output", default="-", help="--translate: where the translations go ('-': stdout)")
    mode.add_argument("--nbest", type=int, default=1,
                      help="--translate/--query: the N best translations of each line, as 'LINE ||| text ||| score' "
                           "(at most --beam_size)")
    mode.add_argument("--scores", action="store_true",
                      help="--translate/--query: each translation's score (summed log-probability), as --nbest's lines")
    mode.add_argument("--token_scores", action="store_true",
                      help="--translate/--query: also the log-probability of each output symbol and of the end")
    mode.add_argument("--analyze", action="store_true",
                      help="write the thesis's figures and PB diagnostics to --analysis_dir "
                           "(on --test_set, default: the dev set)")
    mode.add_argument("--analysis_dir", help="--analyze: where its figures and summary go "
                                             "(default: <working_dir>/analysis)")
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
    choices = {"model": sorted(set(model_names) | set(registry.model_aliases())), "task": sorted(task_names)}
    for name, section in config_lib.SECTIONS.items():
        group = p.add_argument_group(GROUPS[name])
        _add_flags(group, section, choices)
        if name == "data":
            group.add_argument("--test_set", help="tokenized text to translate and score (--do_testing)")
            group.add_argument("--test_ref", help="reference of --test_set (default: its counterpart, "
                                                  "test.en -> test.de)")
    return p


def console_main(argv=None):
    """The ``rnnpb-nmt`` command (and ``nmt.py``): every registered model and task.
    ``rnnpb-nmt translate ...`` is ``rnnpb-nmt --translate ...``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["translate"]:
        argv[0] = "--translate"
    if argv[:1] == ["export"]:  # rnnpb-nmt export --working_dir D --out E: a SavedModel (rnnpb_nmt.serving.export)
        from rnnpb_nmt.serving import export
        return export.main(argv[1:])
    if argv[:1] == ["serve"]:  # rnnpb-nmt serve --working_dir D|--saved_model E: HTTP (rnnpb_nmt.serving.server)
        from rnnpb_nmt.serving import server
        return server.main(argv[1:])
    return main(registry.models(), registry.tasks(), argv)


def main(models, tasks, argv=None):
    """Entry point; ``models`` maps --model names to NMTModel subclasses, ``tasks`` task names
    to task classes (``rnnpb_nmt.tasks``)."""
    args = build_parser(models, tasks).parse_args(argv)
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
    except KeyboardInterrupt:
        print("interrupted" + (": run the same command again to resume from the last finished epoch"
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
    given = {k: v for k, v in vars(args).items() if v is not None}
    if "model" in given:
        given["model"] = registry.model_aliases().get(given["model"], given["model"])
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
    if args.do_training:
        resume.train(models, tasks, given, args.working_dir, args.start_over, args.distribute)
    if args.do_testing or args.analyze or args.query is not None or args.translate:
        overrides = {f.name: given[f.name] for f in config_lib.fields(config_lib.SECTIONS["inference"]) if f.name in given}
        translator, task, members = load_translator(models, tasks, args, overrides)
        if args.do_testing:
            prediction.test(translator, task, args.test_set, args.working_dir, args.test_ref, args.reverse_translation,
                            members=members)
        if args.analyze:
            analysis.analyze(translator, task, args.working_dir, args.test_set, args.test_ref, analysis_dir)
        options = dict(nbest=args.nbest, scores=args.scores, token_scores=args.token_scores,
                       reverse=args.reverse_translation)
        if args.query is not None:
            source = sys.stdin.buffer if args.query == "-" else io.BytesIO(args.query.encode("utf-8"))
            streaming.translate_stream(translator, task, source, sys.stdout, **options)
        if args.translate:
            streaming.translate_file(translator, task, args.input, args.output, **options)


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


def load_translator(models, tasks, args, overrides):
    """(translator, task, the ensemble's working directories or None): the model of --working_dir,
    or with --ensemble the majority vote of its members (``rnnpb_nmt.infer.voting``)."""
    if args.ensemble is None:
        model = workdir.WorkingDir(args.working_dir).load_model(models, overrides)
        return Translator(model), tasks[model.config.data.task](model.config, args.working_dir), None
    members = ensemble_members(args.ensemble)
    loaded = workdir.load_ensemble(members, models, overrides)
    task = tasks[loaded[0].config.data.task](loaded[0].config, members[0])
    _check_same_preparation(members, [tasks[m.config.data.task](m.config, d) for m, d in zip(loaded, members)])
    os.makedirs(args.working_dir, exist_ok=True)  # it holds the vote's test files, and no model
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

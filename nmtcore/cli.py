"""The command line of the thesis (SPEC section 7): --do_training, --do_testing, --query.

Flags keep the thesis's names so that its run scripts work unchanged. Unknown flags and invalid
values are errors; a UserError or OSError anywhere becomes one line on stderr and exit status 1.
"""

import argparse
import os
import sys

import tensorflow as tf

from nmtcore import analysis, corpus as corpus_lib, interrupts, parallel, prediction, training, workdir
from nmtcore.errors import UserError

# Defaults of the thesis's baseline (section 5.2.4); None means "take it from hparams.json".
TRAINING_DEFAULTS = dict(
    model="rnnpbnmt", embedding_size=128, units=256, num_layers=2, learning_rate=0.001,
    pb_learning_rate=0.01, batch_size=64, gradient_clip=1.0, early_stopping_steps=20,
    max_epochs=200, dev_every=1, vocab1_max=None, vocab2_max=None, num_PB=128, binding_strength=1.0,
    bind_hard=False, autoencode=False, reverse_source=False, dropout=0.0, sigma=0.0,
    p_reset=0.0, p_mono=0.0, double_shared_updates=False, seed=1234)
INFERENCE_DEFAULTS = dict(
    beam_size=10, max_trans_ratio=1.5, max_recog_epochs=100, recog_stop="early",
    recog_patience=3, recog_epsilon=1e-4, recog_grad_threshold=1.0, recog_clip=None, test_batch_size=256)
# Hyperparameters added after some working directories were written, with the value those runs used.
ADDED_LATER = dict(dev_every=1, double_shared_updates=False)
MODEL_ALIASES = {"rnnpbmt": "rnnpbnmt", "rnnpbmmt": "rnnpbnmt"}  # spellings in the thesis listings


def _flag(parser, name, kind, help_text, choices=None):
    if kind is bool:
        parser.add_argument(f"--{name}", action="store_true", default=None, help=help_text)
    else:
        parser.add_argument(f"--{name}", type=kind, default=None, help=help_text, choices=choices)


def build_parser(model_names):
    p = argparse.ArgumentParser(prog="nmt.py", allow_abbrev=False,
                                description="Bound-RNNPB and seq-to-seq neural machine translation.")
    mode = p.add_argument_group("what to do")
    mode.add_argument("--do_training", action="store_true", help="train a model into --working_dir")
    mode.add_argument("--do_testing", action="store_true", help="translate --test_set and score BLEU")
    mode.add_argument("--query", help="translate this raw sentence ('-': one sentence per stdin line)")
    mode.add_argument("--analyze", action="store_true",
                      help="write the thesis's figures and PB diagnostics to <working_dir>/analysis "
                           "(on --test_set, default: the dev set)")
    mode.add_argument("--working_dir", required=True, help="where the model and its statistics live")
    mode.add_argument("--start_over", action="store_true",
                      help="--do_training into a --working_dir that holds a run: move that run to "
                           "<working_dir>.previous-N and train anew (without it, the run is resumed or refused)")
    mode.add_argument("--device", choices=["cpu", "gpu", "auto"], default="auto",
                      help="cpu hides every GPU (the thesis tested on cpu); gpu refuses to run without one")
    mode.add_argument("--distribute", choices=["none", "mirrored", "multiworker"], default="none",
                      help="train with tf.distribute (multiworker reads TF_CONFIG)")
    mode.add_argument("--monitor_every", type=int, default=0, metavar="N",
                      help="every N epochs, log a small dev BLEU to TensorBoard (0: never)")
    mode.add_argument("--monitor_sentences", type=int, default=100, help="dev sentences the monitoring BLEU uses")
    data = p.add_argument_group("data")
    for name in ("train_set1", "train_set2", "dev_set1", "dev_set2", "mono_set1", "mono_set2", "test_set"):
        data.add_argument(f"--{name}", help="tokenized text, one sentence per line")
    data.add_argument("--test_ref", help="reference of --test_set (default: its counterpart, test.en -> test.de)")
    model = p.add_argument_group("model and training (saved in hparams.json)")
    _flag(model, "model", str, "model type", choices=sorted(set(model_names) | set(MODEL_ALIASES)))
    for name, kind, text in [
            ("embedding_size", int, "word embedding size"), ("units", int, "LSTM units per layer"),
            ("num_layers", int, "LSTM layers"), ("learning_rate", float, "network weights' learning rate"),
            ("pb_learning_rate", float, "PB learning rate (training and recognition)"),
            ("batch_size", int, "sentences per training batch"), ("gradient_clip", float, "global-norm clip"),
            ("early_stopping_steps", int, "epochs without dev improvement before stopping"),
            ("max_epochs", int, "upper bound on epochs"),
            ("dev_every", int, "measure the dev perplexity every Nth epoch (the thesis's code: 2)"),
            ("vocab1_max", int, "source vocabulary size"),
            ("vocab2_max", int, "target vocabulary size"), ("num_PB", int, "PB vector size"),
            ("binding_strength", float, "soft binding strength alpha"), ("bind_hard", bool, "share one PB table"),
            ("autoencode", bool, "one RNNPB is both A and B"), ("reverse_source", bool, "reverse encoder input"),
            ("dropout", float, "dropout on every LSTM layer's inputs"), ("sigma", float, "PB noise std"),
            ("p_reset", float, "per-epoch PB reset probability"), ("p_mono", float, "monolingual batch probability"),
            ("double_shared_updates", bool, "as the thesis's code: a variable A and B share (the hard-bound "
             "PB table; every weight under --autoencode) gets two LazyAdam updates per step"),
            ("seed", int, "random seed")]:
        _flag(model, name, kind, text)
    inference = p.add_argument_group("translation and recognition (may be changed at test time)")
    for name, kind, text, choices in [
            ("beam_size", int, "beam width (1 = greedy)", None),
            ("max_trans_ratio", float, "max output length / source length", None),
            ("max_recog_epochs", int, "recognition iteration cap", None),
            ("recog_stop", str, "recognition stopping: early (epsilon/patience), fixed, grad_norm",
             ["early", "fixed", "grad_norm"]),
            ("recog_patience", int, "early: iterations without improvement", None),
            ("recog_epsilon", float, "early: smallest improvement that counts", None),
            ("recog_grad_threshold", float, "grad_norm: stop below this gradient L2 norm", None),
            ("recog_clip", float, "clip each sentence's recognition gradient to this L2 norm "
             "(default: --gradient_clip)", None),
            ("test_batch_size", int, "sentences translated at once", None)]:
        _flag(inference, name, kind, text, choices)
    inference.add_argument("--reverse_translation", action="store_true",
                           help="translate B->A with a bound RNNPB (the model is symmetric)")
    return p


# Valid ranges: (name, lowest, highest, lowest included).
RANGES = [("embedding_size", 1, 1e5, True), ("units", 1, 1e5, True), ("num_layers", 1, 100, True),
          ("learning_rate", 0, 10, False), ("pb_learning_rate", 0, 1e3, False), ("batch_size", 1, 1e6, True),
          ("gradient_clip", 0, 1e9, False), ("early_stopping_steps", 1, 1e6, True), ("max_epochs", 1, 1e6, True),
          ("dev_every", 1, 1e6, True),
          ("vocab1_max", 1, 1e8, True), ("vocab2_max", 1, 1e8, True), ("num_PB", 1, 1e5, True),
          ("binding_strength", 0, 1e9, True), ("dropout", 0, 1, True), ("sigma", 0, 1e3, True),
          ("p_reset", 0, 1, True), ("p_mono", 0, 1, True), ("beam_size", 1, 1000, True),
          ("max_trans_ratio", 0, 100, False), ("max_recog_epochs", 1, 1e6, True), ("recog_patience", 1, 1e6, True),
          ("recog_epsilon", 0, 1e9, True), ("recog_grad_threshold", 0, 1e9, True), ("recog_clip", 0, 1e9, False),
          ("test_batch_size", 1, 1e6, True),
          ("monitor_every", 0, 1e6, True), ("monitor_sentences", 1, 1e8, True),
          ("seed", 0, 2**32 - 1, True)]  # numpy's seeds are unsigned 32-bit


def check_ranges(values):
    for name, low, high, closed in RANGES:
        v = values.get(name)
        if v is None:
            continue
        if (v < low if closed else v <= low) or v > high or v != v:
            bound = f"{'>=' if closed else '>'} {low:g} and <= {high:g}"
            raise UserError(f"--{name}={v}: must be {bound}")
        # Dropout 1 drops every input; p_mono 1 never draws a parallel batch, so no epoch ends.
        if name in ("dropout", "p_mono") and v >= 1:
            raise UserError(f"--{name}={v}: must be below 1")


def main(models, argv=None):
    """Entry point; ``models`` maps --model names to NMTModel subclasses."""
    args = build_parser(models).parse_args(argv)
    if not (args.do_training or args.do_testing or args.analyze or args.query is not None):
        print("error: nothing to do: give --do_training, --do_testing, --analyze and/or --query", file=sys.stderr)
        return 2
    interrupts.stop_at_once()
    try:
        run(models, args)
    except (UserError, OSError) as e:  # OSError: an unreadable file, a full disk, a file as --working_dir
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted" + (": run the same command again to resume from the last finished epoch"
                               if args.do_training else ""), file=sys.stderr)
        return 130
    return 0


def run(models, args):
    if args.device == "cpu":
        tf.config.set_visible_devices([], "GPU")
    if args.device == "gpu" and not tf.config.list_physical_devices("GPU"):
        raise UserError("--device=gpu: TensorFlow sees no GPU")
    parallel.use_cores_for_batches()
    given = {k: v for k, v in vars(args).items() if v is not None}
    if "model" in given:
        given["model"] = MODEL_ALIASES.get(given["model"], given["model"])
    check_ranges(given)
    if args.do_testing and not args.test_set:
        raise UserError("--do_testing needs --test_set")
    for flag in ("test_set", "test_ref"):  # before training, not hours into it
        if given.get(flag) and not os.path.isfile(given[flag]):
            raise UserError(f"--{flag}={given[flag]}: no such file")
    if args.do_training:
        train_command(models, given, args)
    if args.do_testing or args.analyze or args.query is not None:
        overrides = {k: given[k] for k in INFERENCE_DEFAULTS if k in given}
        model = workdir.load_model(args.working_dir, models, overrides)
        if args.do_testing:
            prediction.test(model, args.test_set, args.working_dir, args.test_ref, args.reverse_translation)
        if args.analyze:
            analysis.analyze(model, args.working_dir, args.test_set, args.test_ref)
        if args.query is not None:
            prediction.query(model, args.query, args.reverse_translation)


def _strategy(name):
    if name == "mirrored":
        return tf.distribute.MirroredStrategy()
    if name == "multiworker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    return tf.distribute.get_strategy()


DATA_FLAGS = ("train_set1", "train_set2", "dev_set1", "dev_set2", "mono_set1", "mono_set2")


def train_command(models, given, args):
    """Train a new model, or resume the unfinished run of the same configuration in --working_dir."""
    for name in DATA_FLAGS[:4]:
        if not given.get(name):
            raise UserError(f"--do_training needs --{name}")
    params = dict(TRAINING_DEFAULTS, **INFERENCE_DEFAULTS)
    params.update({k: v for k, v in given.items() if k in params})
    if params["autoencode"]:
        params["bind_hard"] = True
    if params["model"] not in models:
        raise UserError(f"--model={params['model']}: unknown (choose from {', '.join(models)})")
    params.update({k: given.get(k) for k in DATA_FLAGS},
                  lang1=prediction.language_of(given["train_set1"]), lang2=prediction.language_of(given["train_set2"]))
    strategy = _strategy(args.distribute)  # first: a multi-worker strategy must precede other TF work
    working_dir = workdir.for_worker(args.working_dir, strategy)
    start_over = args.start_over and workdir.is_trained(working_dir)
    resuming = workdir.is_trained(working_dir) and not start_over
    if resuming:
        saved = check_resumable(working_dir, params)
        params = dict(saved, max_epochs=params["max_epochs"])
    corpus = corpus_lib.load(given, params, workdir.load_vocabularies(working_dir) if resuming else None)
    params.update(corpus.sizes())
    if start_over:  # only once the new run's data has loaded, so a typo does not move the old run
        print(f"--start_over: the previous run is now {workdir.set_aside(working_dir)}")
    tf.keras.utils.set_random_seed(params["seed"])  # initialisation (epochs seed their own draws)
    with strategy.scope():
        model = models[params["model"]](params, corpus.vocab1, corpus.vocab2)
    workdir.save_setup(working_dir, params, corpus.vocab1, corpus.vocab2)
    if not resuming:
        print(f"training {params['model']} on {params['num_train']} sentence pairs into {working_dir}")
    with interrupts.safe_points(), strategy.scope():
        training.train(model, corpus, working_dir, monitor_every=args.monitor_every,
                       monitor_sentences=args.monitor_sentences)


def check_resumable(working_dir, params):
    """The saved hyperparameters of an unfinished run that ``params`` continues; else a UserError.

    Only --max_epochs may differ, to let a run that reached it go on longer. The translation and
    recognition flags count too: the dev perplexity, and so early stopping, depends on them.
    """
    saved = dict(ADDED_LATER, **workdir.load_params(working_dir))
    if training.is_finished(training.load_stats(working_dir), dict(saved, max_epochs=params["max_epochs"])):
        raise UserError(f"--working_dir={working_dir} already holds a trained model; "
                        "choose a new directory, or add --start_over (nothing was changed)")
    keys = [k for k in [*TRAINING_DEFAULTS, *INFERENCE_DEFAULTS, *DATA_FLAGS] if k != "max_epochs"]
    differ = [f"--{k} (was {saved.get(k)!r}, now {params.get(k)!r})" for k in keys if saved.get(k) != params.get(k)]
    if differ:
        raise UserError(f"--working_dir={working_dir} holds an unfinished run of another configuration: "
                        f"{', '.join(differ)}; use those flags to resume it, a new directory, or --start_over")
    return saved

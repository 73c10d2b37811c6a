#!/usr/bin/env python3
"""Speed benchmark: batched vs one-at-a-time recognition and beam search, the RNNPB training step
against a plain Keras LSTM language model, end-to-end test time, and the training step of the
Stack-, Queue- and DeQue-LSTM against a 2-layer LSTM of the same hidden size (read-then-generate
copying of length-64 sequences, the longest of the paper's training lengths).

    python3 run_scripts/benchmark.py [--quick] [--exp1_dir runs/exp1_autoencode/rnnpb20000]
    python3 run_scripts/benchmark.py --part=memory_lstms [--quick]   # the memory-LSTM keys alone
    python3 run_scripts/benchmark.py --part=hard_attention [--quick] [--inflection_dir DIR]
    python3 run_scripts/benchmark.py --part=translation_cost --bound_dir=DIR --seq2seq_dir=DIR --test_set=FILE
    python3 run_scripts/benchmark.py --part=translate_mode --working_dirs=DIR1,DIR2 --test_set=FILE
    python3 run_scripts/benchmark.py --part=serving --working_dirs=DIR --test_set=FILE [--quick]
    python3 run_scripts/benchmark.py --part=peer_opennmt [--quick] [--peer_core=N] [--peer_steps=N] [--peer_env=DIR]
    python3 run_scripts/benchmark.py --part=scale [--scale_pairs=500000,1000000,2000000,4500000]  # scale_benchmark.py

Prints a table and, as its last line, one JSON object. Everything is measured in this process on
the same weights and sentences (the first 256 of ``../shared/data/autoenc/easy20000/test.en``).
With ``--exp1_dir`` the end-to-end figure is ``nmt.py --do_testing`` of that trained model on the
2000 test sentences; without it, an untrained model of the same shape is tested in-process on
``--test_sentences`` sentences (recognition then runs to its iteration cap: a pessimistic figure).
The hard-attention key is the characters of predicted forms per second of a whole in-process
``--do_testing`` on German SIGMORPHON 2016 dev lines (``inflection/sigmorphon2016``).

``--part=translation_cost`` (issue 16) times two trained models on one test set, one right after
the other in this process, so that both meet the same machine and the same load: a bound RNNPB
(``--bound_dir``) and a seq-to-seq (``--seq2seq_dir``), each with its saved translation settings.

``--part=peer_opennmt`` (issue 91) trains the same Transformer with OpenNMT-tf and with ours on one
core, one after the other, and translates and scores easy20000's test set with each
(``run_scripts/peer_opennmt.py``, which sets up OpenNMT-tf's virtualenv on first use).
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from rnnpb_nmt import registry  # noqa: E402
from rnnpb_nmt import tf_stack as addons  # noqa: E402
from rnnpb_nmt.config import Config  # noqa: E402
from rnnpb_nmt.data.dataset import encode_all, make_dataset, read_sentences  # noqa: E402
from rnnpb_nmt.data.files import write_text  # noqa: E402
from rnnpb_nmt.data.vocabulary import Vocabulary  # noqa: E402
from rnnpb_nmt.errors import UserError  # noqa: E402
from rnnpb_nmt.infer import parallel  # noqa: E402
from rnnpb_nmt.infer import prediction  # noqa: E402
from rnnpb_nmt.infer import search  # noqa: E402
from rnnpb_nmt.infer.translator import Translator  # noqa: E402
from rnnpb_nmt.models.hard_attention.model import HardAttentionTransducer  # noqa: E402
from rnnpb_nmt.models.losses import summed_cross_entropy  # noqa: E402
from rnnpb_nmt.models.memory_lstm.model import DeepLSTMTransducer, MemoryLSTMTransducer  # noqa: E402
from rnnpb_nmt.models.rnnpb.model import BoundRNNPB  # noqa: E402
from rnnpb_nmt.models.rnnpb.recognition import RecognitionSettings, recognize  # noqa: E402
from rnnpb_nmt.tasks.inflection.task import InflectionTask  # noqa: E402
from rnnpb_nmt.tasks.transduction import synthetic  # noqa: E402
from rnnpb_nmt.tasks.translation.task import TranslationTask  # noqa: E402
from rnnpb_nmt.train import workdir  # noqa: E402
from rnnpb_nmt.train.step import Trainer  # noqa: E402

import peer_opennmt  # noqa: E402

SPEC = tf.TensorSpec([None, None], tf.int32)


def timed(fn, repeat=1):
    """Seconds per call of ``fn`` after one warm-up call (which also compiles it)."""
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def batch_of(src):
    return next(iter(make_dataset(src, batch_size=len(src))))


def build_model(vocab, num_train, num_pb, units, embedding, recognition_iterations=100):
    config = Config().replace(model="rnnpbnmt", autoencode=True, num_train=num_train, num_PB=num_pb, units=units,
                              embedding_size=embedding, max_recog_epochs=recognition_iterations)
    tf.random.set_seed(0)
    return BoundRNNPB(config, vocab, vocab)


def bench_recognition(model, src, singles, iterations):
    settings = RecognitionSettings(**{**vars(model.recognition), "stop": "fixed", "max_iterations": iterations})
    fn = tf.function(lambda s: recognize(model.lm_a, s, settings)["pb"], input_signature=[SPEC])
    batch = batch_of(src)["src"]
    batched_pb = fn(batch).numpy()
    batched = timed(lambda: fn(batch).numpy())
    alone = [batch_of([s])["src"] for s in src[:singles]]
    fn(alone[0])
    start = time.perf_counter()
    single_pb = np.stack([fn(one).numpy()[0] for one in alone])
    single = time.perf_counter() - start
    return {"recognition_batched_sentences_per_second": len(src) / batched,
            "recognition_single_sentences_per_second": singles / single,
            "recognition_batched_speedup": (len(src) / batched) / (singles / single),
            "recognition_max_pb_diff": float(np.max(np.abs(single_pb - batched_pb[:singles])))}


def keras_lstm_lm(vocab_size, embedding, units, layers):
    inputs = tf.keras.Input([None], dtype=tf.int32)
    x = tf.keras.layers.Embedding(vocab_size, embedding)(inputs)
    for _ in range(layers):
        x = tf.keras.layers.LSTM(units, return_sequences=True)(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(vocab_size)(x))


def bench_train_step(trainer, batch, repeat):
    """One RNNPB training step (as the bound model trains each half) vs a plain Keras LSTM LM step."""
    rnnpb_step = lambda: trainer.train_step(batch)["loss"].numpy()
    m, t = trainer.model.config.model, trainer.config
    lm = keras_lstm_lm(len(trainer.model.vocab1), m.embedding_size, m.units, m.num_layers)
    optimizer = addons.lazy_adam(t.learning_rate, lm.trainable_variables)

    @tf.function(input_signature=[SPEC])
    def lm_step(seq):
        inputs = tf.concat([tf.ones_like(seq[:, :1]), seq[:, :-1]], axis=1)
        with tf.GradientTape() as tape:
            ce, _ = summed_cross_entropy(lm(inputs, training=True), seq)
            loss = tf.reduce_mean(ce)
        grads, _ = tf.clip_by_global_norm(tape.gradient(loss, lm.trainable_variables), t.gradient_clip)
        optimizer.apply_gradients(zip(grads, lm.trainable_variables))
        return loss

    seq = batch["src"]
    rnnpb = timed(rnnpb_step, repeat)
    keras = timed(lambda: lm_step(seq).numpy(), repeat)
    return {"train_step_rnnpb_ms": 1000 * rnnpb, "train_step_keras_lstm_lm_ms": 1000 * keras,
            "train_step_ratio_vs_lstm_lm": rnnpb / keras}


def bench_memory_lstms(units, batch_size, repeat):
    """Training step of each memory LSTM ÷ that of a 2-layer deep LSTM (the issue's target: <= 3),
    both reading and generating a batch of length-64 copying pairs; embeddings of 64 and memory
    width = ``units`` (the paper's 256 at its hidden size 256)."""
    pairs = synthetic.generate("copy", batch_size, 64, 64, seed=0)
    vocab = Vocabulary.build([source for source, _ in pairs])
    src, tgt = (encode_all(vocab, [pair[side] for pair in pairs]) for side in (0, 1))
    batch = next(iter(make_dataset(src, tgt, batch_size=batch_size)))
    base = Config().replace(units=units, memory_width=units, embedding_size=64, num_layers=2, beam_size=1)
    seconds = {}
    for name, cls in (("deep_lstm2", DeepLSTMTransducer), ("stack_lstm", MemoryLSTMTransducer),
                      ("queue_lstm", MemoryLSTMTransducer), ("deque_lstm", MemoryLSTMTransducer)):
        tf.random.set_seed(0)
        trainer = Trainer(cls(base.replace(model=name.rstrip("2")), vocab, vocab))
        trainer.dataset("parallel", src, tgt)  # the step's input signature
        seconds[name] = timed(lambda t=trainer: t.train_step(batch)["loss"].numpy(), repeat)
    results = {f"train_step_{name}_len64_ms": 1000 * s for name, s in seconds.items()}
    results.update({f"train_step_ratio_{name}_vs_lstm2": seconds[name] / seconds["deep_lstm2"]
                    for name in seconds if name != "deep_lstm2"})
    return results


def bench_beam(model, src, singles):
    state_fn = lambda s: model.lm_b.start_state(tf.zeros([tf.shape(s)[0], model.lm_b.num_pb]))
    step = lambda tokens, state: model.lm_b.step(tokens, state)

    @tf.function(input_signature=[SPEC])
    def beam(s):
        max_lengths = tf.fill([tf.shape(s)[0]], 15)
        return search.beam_search(step, state_fn(s), max_lengths, 10)[0]

    batch = batch_of(src)["src"]
    batched = timed(lambda: beam(batch).numpy())
    alone = [batch_of([s])["src"] for s in src[:singles]]
    beam(alone[0])
    start = time.perf_counter()
    for one in alone:
        beam(one).numpy()
    single = time.perf_counter() - start
    return {"beam_batched_speedup": (len(src) / batched) / (singles / single)}


def bench_end_to_end(args, model, sentences, working_dir):
    if args.exp1_dir:
        test_set = os.path.join(args.data, "autoenc/easy20000/test.en")
        start = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(ROOT, "nmt.py"), "--do_testing", "--device=cpu",
                        f"--test_set={test_set}", f"--working_dir={args.exp1_dir}"], check=True,
                       capture_output=True)
        seconds, count = time.perf_counter() - start, len(read_sentences(test_set))
    else:
        test_set = os.path.join(working_dir, "test.en")
        with open(test_set, "w", encoding="utf-8") as f:
            f.writelines(" ".join(s) + "\n" for s in sentences)
        start = time.perf_counter()
        prediction.test(Translator(model), TranslationTask(), test_set, working_dir, log=lambda m: None)
        seconds, count = time.perf_counter() - start, len(sentences)
    return {"test_seconds_per_1000_sentences": 1000 * seconds / count}


def bench_hard_attention(args, lines):
    """Characters of the predicted forms per second of ``prediction.test`` (reading, greedy search,
    writing, scoring) of the hard-attention transducer on the first ``lines`` German dev lines,
    after one translation that traces the search (as ``timed`` warms up): with ``--inflection_dir``
    that trained model, else an untrained one of the run scripts' SIGMORPHON sizes, which writes
    up to the length cap of 3 x the input (a pessimistic figure)."""
    prefix = os.path.join(args.data, "inflection", "sigmorphon2016", "german-task1-")
    os.makedirs(args.out, exist_ok=True)
    test_set = os.path.join(args.out, "german-task1-dev")
    with open(prefix + "dev", encoding="utf-8") as f, open(test_set, "w", encoding="utf-8") as out:
        out.writelines(f.readlines()[:lines])
    if args.inflection_dir:
        model = workdir.load_model(args.inflection_dir, {"hard_attention": HardAttentionTransducer})
    else:
        config = Config().replace(task="inflection", model="hard_attention", embedding_size=300, units=100,
                                  num_layers=2, feature_size=100, beam_size=1, max_trans_ratio=3.0)
        loaded = InflectionTask().load_corpus({"train_set1": prefix + "train", "dev_set1": prefix + "dev"}, config)
        tf.random.set_seed(0)
        model = HardAttentionTransducer(config, loaded.vocab1, loaded.vocab2)
    translator, task = Translator(model), InflectionTask()
    translator.translate(task.read_test(test_set, None, "und")[0][:1])
    stats = prediction.test(translator, task, test_set, args.out, log=lambda m: None)
    with open(os.path.join(args.out, prediction.TRANSLATIONS), encoding="utf-8") as f:
        characters = sum(len(line.rstrip("\n").split("\t")[2]) for line in f)
    return {"hard_attention_test_characters_per_second": characters / stats["testing_time"],
            "hard_attention_test_lines_per_second": stats["sentences"] / stats["testing_time"]}


def bench_translation_cost(bound_dir, seq2seq_dir, test_set, warmup=8):
    """Seconds per 1000 sentences of translating ``test_set`` (all of it, as ``--do_testing``
    does: batched on every core, beam search with each model's saved settings) with the bound
    model and with the seq-to-seq, and their ratio. Each first translates ``warmup`` sentences,
    untimed, so that tracing its search function is not counted."""
    sentences = read_sentences(test_set)
    seconds = {}
    for name, working_dir, model_name in (("bound", bound_dir, "rnnpbnmt"), ("seq2seq", seq2seq_dir, "encdec")):
        model = workdir.load_model(working_dir, registry.models())
        if model.config.model.model != model_name:
            raise UserError(f"--{name}_dir={working_dir}: its model is {model.config.model.model}, not {model_name}")
        translator = Translator(model)
        translator.translate(sentences[:warmup])
        start = time.perf_counter()
        translator.translate(sentences)
        seconds[name] = time.perf_counter() - start
    results = {f"translation_seconds_per_1000_{name}": 1000 * s / len(sentences) for name, s in seconds.items()}
    results.update(translation_cost_ratio_bound_vs_seq2seq=seconds["bound"] / seconds["seq2seq"],
                   translation_test_sentences=len(sentences))
    return results


def bench_translate_mode(working_dirs, test_set, out):
    """Sentences per second of translate mode (``--translate -i FILE -o FILE``: raw lines read as
    they come, batched, prepared by the run's pipeline, n-best 1) against ``--do_testing`` of the same
    sentences (read whole, batched, scored), for each trained working directory, in this process on
    the same loaded model. Translate mode reads raw text: it is given ``test_set`` restored to raw text
    by the run's own pipeline (as a user's input comes; the tokenized file itself would be tokenized
    again, its ``&apos;`` escaped anew, into other inputs), and the share of its translations equal
    to ``--do_testing``'s, restored likewise, is recorded beside the speeds. Each first translates
    8 sentences untimed (tracing)."""
    from rnnpb_nmt.infer import streaming

    results = {}
    for working_dir in working_dirs:
        model = workdir.load_model(working_dir, registry.models())
        task = registry.tasks()[model.config.data.task](model.config, working_dir)
        translator, name = Translator(model), os.path.basename(os.path.normpath(working_dir))
        source_language, target_language = model.languages
        with open(test_set, encoding="utf-8") as f:
            raw = _raw(task, f.read().splitlines(), source_language)
        raw_input, raw_output = os.path.join(out, "translate_mode_input.txt"), os.path.join(out, "translate_mode.txt")
        write_text(raw_input, "".join(line + "\n" for line in raw))
        prediction.translate_lines(translator, task, raw[:8])
        started = time.perf_counter()
        streaming.translate_file(translator, task, raw_input, raw_output)
        results[f"translate_mode_sentences_per_second_{name}"] = len(raw) / (time.perf_counter() - started)
        stats = prediction.test(translator, task, test_set, out, log=lambda m: None)
        results[f"do_testing_sentences_per_second_{name}"] = stats["sentences"] / stats["testing_time"]
        results[f"translate_mode_same_translations_{name}"] = _same_share(task, target_language, raw_output, out)
    results["translate_mode_test_sentences"] = len(raw)
    return results


def _same_share(task, language, raw_output, out):
    """The share of translate mode's lines in ``raw_output`` equal to --do_testing's test_trans.txt
    in ``out`` restored to raw text."""
    with open(raw_output, encoding="utf-8") as mine, open(os.path.join(out, "test_trans.txt"), encoding="utf-8") as tested:
        ours, theirs = mine.read().splitlines(), _raw(task, tested.read().splitlines(), language)
    return sum(a == b for a, b in zip(ours, theirs)) / len(theirs)


def _raw(task, lines, language):
    """``lines`` as raw text: a run of tokenized files (``pretokenized``) reads and writes words, which
    its pipeline's detokenizer restores; a run of raw text (``moses``, ``none``) has them raw already
    (``TranslationTask.output_lines``)."""
    if task.text.tokenize_mode != "pretokenized":
        return lines
    return [task.text.detokenize(line.split(), language) for line in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, under 2 minutes on 2 cores")
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    parser.add_argument("--exp1_dir", help="trained Exp I working directory for the end-to-end figure")
    parser.add_argument("--test_sentences", type=int, default=200)
    parser.add_argument("--out", default="/tmp/rnnpb_benchmark", help="scratch working directory")
    parser.add_argument("--save", action="store_true",
                        help="record the results in run_scripts/results/benchmark.json (one entry per mode)")
    parser.add_argument("--note", default="", help="with --save: the conditions of the run, e.g. other load")
    parser.add_argument("--part", choices=["all", "memory_lstms", "hard_attention", "translation_cost", "translate_mode",
                                           "serving", "peer_opennmt", "scale"],
                        default="all",
                        help="memory_lstms: only the memory-LSTM training steps (no thesis data needed); "
                             "hard_attention: only its test speed; translation_cost: only the bound model against "
                             "the seq-to-seq on --test_set; translate_mode: translate mode against --do_testing of "
                             "--working_dirs on --test_set; serving: rnnpb-nmt serve of one --working_dirs under 1, 8 and 32 "
                             "clients (run_scripts/load_test.py); peer_opennmt: the same Transformer trained and tested by "
                             "OpenNMT-tf and by us (run_scripts/peer_opennmt.py); scale: preparation and training by "
                             "corpus size (run_scripts/scale_benchmark.py); each saved apart from the other keys")
    parser.add_argument("--working_dirs", help="translate_mode: trained working directories, comma-separated")
    parser.add_argument("--scale_pairs", default="500000,1000000,2000000,4500000",
                        help="scale: the corpus sizes (sentence pairs), comma-separated; the corpora and runs go under --out")
    parser.add_argument("--inflection_dir", help="trained hard-attention working directory for its test speed")
    parser.add_argument("--bound_dir", help="translation_cost: a trained bound RNNPB working directory")
    parser.add_argument("--seq2seq_dir", help="translation_cost: a trained seq-to-seq working directory")
    parser.add_argument("--test_set", help="translation_cost: the tokenized test file both translate")
    parser.add_argument("--peer_env", default=peer_opennmt.DEFAULT_PEER_ENV,
                        help="peer_opennmt: OpenNMT-tf's virtualenv, made there on first use (outside the repository)")
    parser.add_argument("--peer_steps", type=int, help="peer_opennmt: training steps of each side (default 1500, "
                                                        "--quick 40), a multiple of the report interval (100, --quick 10)")
    parser.add_argument("--peer_core", type=int, default=max(os.sched_getaffinity(0)),
                        help="peer_opennmt: the core both sides run on, one after the other (default: the last)")
    args = parser.parse_args()
    if args.part == "translation_cost" and not (args.bound_dir and args.seq2seq_dir and args.test_set):
        parser.error("--part=translation_cost needs --bound_dir, --seq2seq_dir and --test_set")
    if args.part == "translate_mode" and not (args.working_dirs and args.test_set):
        parser.error("--part=translate_mode needs --working_dirs and --test_set")
    if args.part == "serving" and not (args.working_dirs and "," not in args.working_dirs and args.test_set):
        parser.error("--part=serving needs one --working_dirs and --test_set")
    results = {"quick": args.quick, "cpu_cores": os.cpu_count(), "tensorflow": tf.__version__, "stack": addons.STACK}
    if args.part == "translation_cost":
        parallel.use_cores_for_batches()  # as nmt.py --do_testing runs
        try:
            results.update(bench_translation_cost(args.bound_dir, args.seq2seq_dir, args.test_set))
        except (UserError, OSError) as e:
            parser.error(str(e))
    if args.part == "translate_mode":
        parallel.use_cores_for_batches()
        os.makedirs(args.out, exist_ok=True)
        try:
            results.update(bench_translate_mode(args.working_dirs.split(","), args.test_set, args.out))
        except (UserError, OSError) as e:
            parser.error(str(e))
    if args.part == "serving":  # the load test's figures (its servers are subprocesses on loopback ports)
        import load_test
        if not os.path.isdir(args.working_dirs) or not os.path.isfile(args.test_set):
            parser.error(f"--working_dirs={args.working_dirs} or --test_set={args.test_set} does not exist")
        record = load_test.load_test(args.working_dirs, args.test_set, [1, 8, 32], 64 if args.quick else 512,
                                     60.0 if args.quick else 300.0)
        results.update(load_test.benchmark_keys(record))
    if args.part == "peer_opennmt":
        results.update(bench_peer_opennmt(args, parser))
    if args.part == "scale":  # preparation and training by corpus size, each in a process of its own (issue 91)
        import scale_benchmark
        results["scale"] = [scale_benchmark.scale(int(pairs), args.out, 30, compare_lists=True)
                            for pairs in args.scale_pairs.split(",")]
    if args.part == "all":
        results.update(bench_thesis_models(args))
    if args.part in ("all", "memory_lstms"):
        results.update(bench_memory_lstms(64 if args.quick else 256, 10, 5 if args.quick else 20))
    if args.part in ("all", "hard_attention"):
        results.update(bench_hard_attention(args, 200 if args.quick else 1597))
    width = max(map(len, results))
    for key, value in results.items():
        print(f"{key:<{width}}  {value:.4g}" if isinstance(value, float) else f"{key:<{width}}  {value}")
    if args.save:
        save(results, args)
    print(json.dumps(results))


def bench_peer_opennmt(args, parser):
    """OpenNMT-tf's Transformer and ours side by side; --quick: 40 steps and 50 test sentences."""
    report_every = 10 if args.quick else 100
    steps = args.peer_steps or (40 if args.quick else 1500)
    try:
        return peer_opennmt.run(args.data, args.out, args.peer_env, steps, report_every, args.peer_core,
                                50 if args.quick else None)
    except (UserError, OSError) as e:
        parser.error(str(e))


def bench_thesis_models(args):
    """Every key but the memory LSTMs': recognition, the RNNPB step, beam search, a whole test."""
    sentences = read_sentences(os.path.join(args.data, "autoenc/easy20000/test.en"))
    train = read_sentences(os.path.join(args.data, "autoenc/easy20000/train.en"))
    vocab = Vocabulary.build(train)
    size = dict(units=64, embedding=32, recog_batch=64, singles=8, iterations=30, repeat=5, test=40) if args.quick \
        else dict(units=256, embedding=128, recog_batch=256, singles=32, iterations=100, repeat=20,
                  test=args.test_sentences)
    src = encode_all(vocab, sentences[:size["recog_batch"]])
    results = {}

    exp1 = build_model(vocab, len(train), 128, size["units"], size["embedding"], size["iterations"])
    results.update(bench_recognition(exp1, src, size["singles"], size["iterations"]))

    trainer = Trainer(build_model(vocab, len(train), 1024, size["units"], size["embedding"]))
    train_src = encode_all(vocab, train[:64])
    trainer.dataset("parallel", train_src, train_src)
    results.update(bench_train_step(trainer, next(iter(make_dataset(train_src, train_src, batch_size=64))),
                                    size["repeat"]))

    results.update(bench_beam(exp1, encode_all(vocab, sentences[:64]), size["singles"]))
    os.makedirs(args.out, exist_ok=True)
    results.update(bench_end_to_end(args, exp1, sentences[:size["test"]], args.out))
    return results


def save(results, args):
    """Keep this run in results/benchmark.json under its mode, with the command and the machine."""
    from run_experiment import machine
    path = os.path.join(ROOT, "run_scripts", "results", "benchmark.json")
    recorded = json.load(open(path)) if os.path.isfile(path) else {}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    mode = ("quick" if args.quick else "full") + ("" if args.part == "all" else f"_{args.part}")
    recorded[mode] = {
        "command": shlex.join(["python3", "run_scripts/benchmark.py", *sys.argv[1:]]), "commit": commit,
        "date": time.strftime("%Y-%m-%d"), "machine": machine(), "note": args.note, "results": results}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(recorded, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()

"""Side by side with OpenNMT-tf (issue 91 item 7; ``benchmark.py --part=peer_opennmt``).

The same Transformer (2 + 2 layers of 192 units, 4 heads, feed-forward layers of 768, pre-layer-norm,
sinusoidal positions, no dropout, nothing shared) trained by OpenNMT-tf and by us on
``easy/easy20000`` en->de for the same number of steps (64 sentences a batch, Adam at a constant
1e-3, gradients clipped at a global norm of 1, the same vocabularies: every training word), one
after the other, each pinned to the same core by ``taskset``; then each translates the test set at
beam 4 and 10 and is scored by the same BLEU (``rnnpb_nmt.metrics.bleu``, multi-bleu on the words).

OpenNMT-tf is a benchmark-only dependency: it lives in a virtualenv of its own (``--peer_env``,
outside the repository), made here on first use with ``python3.11 -m venv`` and
``pip install 'opennmt-tf[tensorflow]==2.32.0'`` (the TensorFlow that pip resolves for it).

What each figure includes is ``FIGURES``'s, the same for both sides; its steps/s leave out the first
report interval (start-up and tracing), as OpenNMT-tf's log of each interval and our epochs'
``train_seconds`` allow (an epoch of ours is one interval of steps, ``--epoch_examples``).

This module needs neither TensorFlow nor OpenNMT-tf itself: benchmark.py calls ``run``.
"""

import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from rnnpb_nmt.data.files import write_text
from rnnpb_nmt.errors import UserError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NMT = os.path.join(ROOT, "nmt.py")
PEER = "opennmt-tf[tensorflow]==2.32.0"
DEFAULT_PEER_ENV = os.path.join(os.path.expanduser("~"), ".cache", "rnnpb_nmt", "opennmt-tf-2.32.0")
CORPUS = ("easy/easy20000", "en", "de")
BATCH_SIZE = 64
LEARNING_RATE = 0.001
GRADIENT_CLIP = 1.0
TEST_BATCH_SIZE = 256  # ours' --test_batch_size default, given to OpenNMT-tf's infer
BEAMS = (4, 10)
SIDES = ("peer_opennmt", "ours")
# The Transformer's sizes, in OpenNMT-tf's argument names and in our flags.
SIZES = {"num_layers": 2, "num_units": 192, "num_heads": 4, "ffn_inner_dim": 768}
OUR_MODEL = ["--model=transformer", "--num_layers=2", "--units=192", "--embedding_size=192", "--heads=4",
             "--ffn_units=768", "--dropout=0"]
MODEL_FILE = f"""import opennmt


def model():
    # Our Transformer's sizes (run_scripts/peer_opennmt.py), no dropout anywhere.
    return opennmt.models.Transformer({", ".join(f"{k}={v}" for k, v in SIZES.items())},
                                      dropout=0.0, attention_dropout=0.0, ffn_dropout=0.0)
"""
RESTORED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+): I runner\.py:\d+\] Restored checkpoint", re.M)
# OpenNMT-tf 2.32's report of each --save_summary_steps interval.
STEP_LINE = re.compile(r"Step = (\d+) ; steps/s = ([\d.]+), tokens/s = \d+ \((\d+) source, (\d+) target\)")


TRANSLATING = ("the test sentences over the whole translating process's wall time: start-up, loading and "
               "tracing included (`onmt-main infer`; `nmt.py --do_testing`, which also scores)")
STARTUP = ("of the translating process's wall time, what comes before the search: the interpreter, TensorFlow's "
           "import, the model built and its checkpoint read (OpenNMT-tf: until its log's 'Restored checkpoint'; ours: "
           "the wall time less --do_testing's testing_time, so also the scoring and writing after it)")
BLEU = "multi-bleu of the tokenized translations against the tokenized references (`rnnpb_nmt.metrics.bleu`)"
# (figure, ours is compared by ratio or by difference, the target and its test, what it includes)
FIGURES = [
    ("train_steps_per_second", "ratio", "–", None,
     "the steps after the first report interval over their time: start-up, the first interval's tracing, "
     "checkpoints and our dev perplexity left out (OpenNMT-tf: its log's steps/s; ours: the epochs' train_seconds)"),
    ("train_target_tokens_per_second", "ratio", "≥ 1 (stretch ≥ 1.2)", lambda r: r >= 1,
     "steps/s × 64 × the training set's mean target sentence in tokens (its end token included): one factor for "
     "both; OpenNMT-tf's own log's target words/s is under the table"),
    ("train_wall_seconds", "ratio", "–", None,
     "the whole training process: start-up, tracing, every step, checkpoints, our dev perplexity (first and last "
     "epoch)"),
    ("train_overhead_seconds", "ratio", "–", None,
     "the training process's wall time less its steps at the steady rate: start-up, reading the data (OpenNMT-tf "
     "fills its shuffle buffer), the first interval's tracing, checkpoints, our dev perplexity"),
    *((f"translate_sentences_per_second_beam{b}", "ratio", "≥ 1", lambda r: r >= 1, TRANSLATING) for b in BEAMS),
    *((f"translate_startup_seconds_beam{b}", "ratio", "–", None, STARTUP) for b in BEAMS),
    *((f"test_bleu_beam{b}", "difference", "within ± 1", lambda d: abs(d) <= 1, BLEU) for b in BEAMS),
]


def figure_keys():
    """The figures a run records (settings apart)."""
    return [f"{side}_{figure[0]}" for figure in FIGURES for side in SIDES] + \
        ["peer_opennmt_logged_target_words_per_second"]


SETTING_KEYS = ("peer_opennmt_version", "peer_tensorflow", "peer_train_steps", "peer_report_every", "peer_core",
                "peer_test_sentences")


# ---- the peer's virtualenv


def ensure_peer_env(path, python="python3.11", log=print):
    """The Python of OpenNMT-tf's virtualenv at ``path``, made there first if it is not yet: built
    beside it (``path``.partial) and moved into place once pip has finished, so that an interrupted
    set-up is redone, never taken for a finished one. Its interpreter is always run as
    ``python -m``, which the move does not break."""
    interpreter = os.path.join(path, "bin", "python")
    if os.path.isfile(interpreter):
        return interpreter
    if not shutil.which(python):
        raise UserError(f"--peer_env={path}: making it needs {python}, which is not on PATH")
    partial = path.rstrip(os.sep) + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    log(f"setting up OpenNMT-tf in {path} ({PEER}; a few minutes, once)")
    for step, command in ((f"{python} -m venv", [python, "-m", "venv", partial]),
                          (f"pip install '{PEER}'", [os.path.join(partial, "bin", "python"), "-m", "pip", "install",
                                                     "--quiet", PEER])):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise UserError(f"--peer_env={path}: {step} failed: {last_line(done.stderr)}")
    os.replace(partial, path)
    return interpreter


def last_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def peer_versions(interpreter):
    """{peer_opennmt_version, peer_tensorflow} of the peer's virtualenv."""
    code = "import opennmt, tensorflow; print(opennmt.__version__, tensorflow.__version__)"
    done = subprocess.run([interpreter, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if done.returncode:
        raise UserError(f"the peer's virtualenv ({interpreter}) does not import OpenNMT-tf: {last_line(done.stderr)}")
    opennmt, tensorflow = done.stdout.split()[-2:]
    return {"peer_opennmt_version": opennmt, "peer_tensorflow": tensorflow}


# ---- files


def sentences(path, limit=None):
    with open(path, encoding="utf-8") as f:
        lines = [line.split() for line in f]
    return lines if limit is None else lines[:limit]


# OpenNMT-tf reads a vocabulary file's first three lines as its padding, start and end tokens (as
# onmt-build-vocab writes them); it does not add them: without them a file's three most frequent words
# become those tokens (a German "Ich" ended every sentence it began).
PEER_SPECIALS = ["<blank>", "<s>", "</s>"]


def vocabulary_words(path):
    """OpenNMT-tf's special tokens, then every word of a training file, most frequent first (ties by
    first appearance): the same words our --vocab1_max/--vocab2_max=30000 keep of easy20000."""
    from rnnpb_nmt.data.vocabulary import SPECIALS, Vocabulary
    return PEER_SPECIALS + [word for word in Vocabulary.build(sentences(path)).itos if word not in SPECIALS]


def mean_target_tokens(path):
    """Mean tokens a training target costs: its words and the end token."""
    lengths = [len(words) + 1 for words in sentences(path)]
    return sum(lengths) / len(lengths)


def peer_config(files, model_dir, steps, report_every, beam):
    """OpenNMT-tf's configuration (JSON is YAML), whose settings are ours: 64 sentences a batch in
    random order (no length buckets: ours are not), Adam at a constant rate with the same global-norm
    clip, no evaluation, one checkpoint at the end; ``beam`` for inference, in batches of our test
    batch size sorted by length (order restored), as ours are."""
    return {
        "model_dir": model_dir,
        "data": {"train_features_file": files["train_source"], "train_labels_file": files["train_target"],
                 "source_vocabulary": files["source_vocabulary"], "target_vocabulary": files["target_vocabulary"]},
        "params": {"optimizer": "Adam", "learning_rate": LEARNING_RATE,
                   "optimizer_params": {"global_clipnorm": GRADIENT_CLIP}, "beam_width": beam, "num_hypotheses": 1},
        "train": {"batch_size": BATCH_SIZE, "batch_type": "examples", "max_step": steps,
                  "save_summary_steps": report_every, "save_checkpoints_steps": steps, "keep_checkpoint_max": 1,
                  "length_bucket_width": None},
        "infer": {"batch_size": TEST_BATCH_SIZE, "batch_type": "examples", "length_bucket_width": 1},
    }


def prepare(data, out, test_sentences):
    """The peer's files in ``out``: vocabularies, its model file, and the test set (its first
    ``test_sentences``, with its reference beside it as ours finds it). Returns their paths."""
    folder, source, target = CORPUS
    d = os.path.join(data, folder)
    files = {"train_source": f"{d}/train.{source}", "train_target": f"{d}/train.{target}",
             "dev_source": f"{d}/dev.{source}", "dev_target": f"{d}/dev.{target}",
             "source_vocabulary": os.path.join(out, f"vocab.{source}"),
             "target_vocabulary": os.path.join(out, f"vocab.{target}"),
             "model": os.path.join(out, "transformer_model.py"),
             "test_source": os.path.join(out, f"test.{source}"), "test_target": os.path.join(out, f"test.{target}")}
    for side, language in (("source", source), ("target", target)):
        write_text(files[f"{side}_vocabulary"], "".join(w + "\n" for w in vocabulary_words(files[f"train_{side}"])))
        test = sentences(f"{d}/test.{language}", test_sentences)
        write_text(files[f"test_{side}"], "".join(" ".join(words) + "\n" for words in test))
    write_text(files["model"], MODEL_FILE)
    return files


# ---- measurements


def steady_steps_per_second(intervals):
    """Steps per second over [(steps, seconds)] of report intervals, the first left out (tracing)."""
    steady = intervals[1:] or intervals
    return sum(s for s, _ in steady) / sum(t for _, t in steady)


def peer_intervals(log_text):
    """[(steps, seconds)] of OpenNMT-tf's training reports, and the mean of its logged target words/s."""
    reports = [(int(step), float(rate), int(target)) for step, rate, _, target in STEP_LINE.findall(log_text)]
    if not reports:
        raise UserError("OpenNMT-tf's training log has no 'Step = N ; steps/s = ...' line")
    intervals, last = [], 0
    for step, rate, _ in reports:
        intervals.append((step - last, (step - last) / rate))
        last = step
    return intervals, statistics.mean(target for *_, target in reports[1:] or reports)


def restored_at(log_text):
    """The time (seconds since the epoch) at which OpenNMT-tf's log says the checkpoint was read:
    its lines carry the local time, as ``time.time()`` is read against here."""
    found = RESTORED.search(log_text)
    if not found:
        raise UserError("OpenNMT-tf's inference log has no 'Restored checkpoint' line")
    return datetime.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()


def pinned(core, command):
    return ["taskset", "-c", str(core), *command]


def timed_run(command, log_path):
    """Run ``command`` with its output in ``log_path``; its wall seconds. A failure is a one-line error."""
    started = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT,
                              env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    seconds = time.perf_counter() - started
    if done.returncode:
        with open(log_path, encoding="utf-8") as f:
            raise UserError(f"{' '.join(command[3:6])} failed (exit {done.returncode}, log {log_path}): "
                            f"{last_line(f.read())}")
    return seconds


def run_peer(interpreter, files, out, steps, report_every, core):
    """OpenNMT-tf's figures: training, then translation and BLEU at each beam."""
    model_dir = os.path.join(out, "opennmt_run")
    shutil.rmtree(model_dir, ignore_errors=True)
    onmt = lambda config: pinned(core, [interpreter, "-m", "opennmt.bin.main", "--config", config, "--model",
                                        files["model"], "--seed", "1234"])
    configs = {}
    for beam in BEAMS:
        configs[beam] = os.path.join(out, f"opennmt_beam{beam}.yml")
        write_text(configs[beam], json.dumps(peer_config(files, model_dir, steps, report_every, beam), indent=1))
    log_path = os.path.join(out, "opennmt_train.log")
    results = {"peer_opennmt_train_wall_seconds": timed_run([*onmt(configs[BEAMS[0]]), "train"], log_path)}
    with open(log_path, encoding="utf-8") as f:
        intervals, logged_target = peer_intervals(f.read())
    results.update(peer_opennmt_train_steps_per_second=steady_steps_per_second(intervals),
                   peer_opennmt_logged_target_words_per_second=logged_target)
    references = [" ".join(words) for words in sentences(files["test_target"])]
    for beam in BEAMS:
        predictions = os.path.join(out, f"opennmt_beam{beam}.txt")
        log_path = os.path.join(out, f"opennmt_infer_beam{beam}.log")
        started = time.time()
        seconds = timed_run([*onmt(configs[beam]), "infer", "--features_file", files["test_source"],
                             "--predictions_file", predictions], log_path)
        with open(log_path, encoding="utf-8") as f:
            results[f"peer_opennmt_translate_startup_seconds_beam{beam}"] = restored_at(f.read()) - started
        results[f"peer_opennmt_translate_sentences_per_second_beam{beam}"] = len(references) / seconds
        results[f"peer_opennmt_test_bleu_beam{beam}"] = scored(predictions, references)
    return results


def scored(predictions, references):
    from rnnpb_nmt.metrics import bleu
    with open(predictions, encoding="utf-8") as f:
        return bleu([" ".join(line.split()) for line in f], references)


def our_training_command(files, working_dir, steps, report_every):
    """``nmt.py --do_training`` for ``steps`` steps: epochs of ``report_every`` steps' pairs
    (--epoch_examples), dev perplexity on the first and last only, so that best/, which --do_testing
    translates with, is the last epoch's weights unless the dev perplexity rose since the first."""
    return [sys.executable, NMT, "--do_training", "--device=cpu", *OUR_MODEL, f"--batch_size={BATCH_SIZE}",
            "--optimizer=adam", f"--learning_rate={LEARNING_RATE}", "--lr_schedule=constant",
            f"--gradient_clip={GRADIENT_CLIP}", "--label_smoothing=0", "--vocab1_max=30000", "--vocab2_max=30000",
            f"--epoch_examples={BATCH_SIZE * report_every}", f"--max_epochs={steps // report_every}",
            "--dev_every=1000000", "--early_stopping_steps=1000000", "--seed=1234",
            f"--train_set1={files['train_source']}", f"--train_set2={files['train_target']}",
            f"--dev_set1={files['dev_source']}", f"--dev_set2={files['dev_target']}", f"--working_dir={working_dir}"]


def run_ours(files, out, steps, report_every, core):
    """Our figures, as ``run_peer``'s."""
    working_dir = os.path.join(out, "our_run")
    shutil.rmtree(working_dir, ignore_errors=True)
    results = {"ours_train_wall_seconds": timed_run(pinned(core, our_training_command(files, working_dir, steps,
                                                                                      report_every)),
                                                    os.path.join(out, "our_train.log"))}
    with open(os.path.join(working_dir, "training_stats.json"), encoding="utf-8") as f:
        epochs = json.load(f)["epochs"]
    results["ours_train_steps_per_second"] = steady_steps_per_second([(report_every, row["train_seconds"])
                                                                      for row in epochs])
    for beam in BEAMS:
        seconds = timed_run(pinned(core, [sys.executable, NMT, "--do_testing", "--device=cpu", f"--beam_size={beam}",
                                          f"--test_set={files['test_source']}", f"--working_dir={working_dir}"]),
                            os.path.join(out, f"our_test_beam{beam}.log"))
        with open(os.path.join(working_dir, "testing_stats.json"), encoding="utf-8") as f:
            stats = json.load(f)
        results[f"ours_translate_sentences_per_second_beam{beam}"] = stats["sentences"] / seconds
        results[f"ours_translate_startup_seconds_beam{beam}"] = seconds - stats["testing_time"]
        results[f"ours_test_bleu_beam{beam}"] = stats["bleu"]
    return results


def check_core(core):
    """``core`` if this process may run on it (taskset would refuse it), else a UserError."""
    allowed = os.sched_getaffinity(0)
    if core not in allowed:
        raise UserError(f"--peer_core={core}: not one of this machine's cores {sorted(allowed)}")
    return core


def run(data, out, peer_env, steps, report_every, core, test_sentences=None, log=print):
    """Both sides' figures and the settings they ran with (SETTING_KEYS), peer first."""
    if steps < 2 * report_every or steps % report_every:
        raise UserError(f"--peer_steps={steps}: needs to be a multiple of {report_every} steps (a report "
                        "interval), two at least")
    check_core(core)
    os.makedirs(out, exist_ok=True)
    interpreter = ensure_peer_env(peer_env, log=log)
    results = {**peer_versions(interpreter), "peer_train_steps": steps, "peer_report_every": report_every,
               "peer_core": core}
    files = prepare(data, out, test_sentences)
    results["peer_test_sentences"] = len(sentences(files["test_source"]))
    log(f"OpenNMT-tf: {steps} steps on core {core}")
    results.update(run_peer(interpreter, files, out, steps, report_every, core))
    log(f"ours: {steps} steps on core {core}")
    results.update(run_ours(files, out, steps, report_every, core))
    tokens = mean_target_tokens(files["train_target"]) * BATCH_SIZE
    for side in SIDES:
        rate = results[f"{side}_train_steps_per_second"]
        results[f"{side}_train_target_tokens_per_second"] = rate * tokens
        results[f"{side}_train_overhead_seconds"] = results[f"{side}_train_wall_seconds"] - steps / rate
    return results

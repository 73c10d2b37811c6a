"""Helpers the tests share: tiny configurations, the command line as users run it, working directories."""

import contextlib
import itertools
import os
import random
import signal
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from rnnpb_nmt.config import Config  # noqa: E402
from rnnpb_nmt.data.vocabulary import Vocabulary  # noqa: E402


def tiny_config(**overrides):
    """Thesis defaults shrunk to test size; ``overrides`` (flat names) win."""
    small = dict(embedding_size=16, units=32, num_layers=2, num_PB=8, batch_size=16, beam_size=3,
                 max_recog_epochs=30, lang1="en", lang2="de", seed=7)
    return Config().replace(**dict(small, **overrides))


def models():
    from rnnpb_nmt import registry
    return registry.models()


def tasks():
    from rnnpb_nmt import registry
    return registry.tasks()


def translator_of(model):
    from rnnpb_nmt.infer.translator import Translator
    return Translator(model)


def stepped_cross_entropy(model, batch):
    """Per-sentence cross-entropy (numpy, (B,)) of ``batch``'s targets fed word by word through
    ``decoder_start``/``decoder_step``: what search computes, to compare with ``score_targets``."""
    import numpy as np
    import tensorflow as tf

    from rnnpb_nmt.models.losses import decoder_inputs

    state, stepped = model.decoder_start(batch["src"]), np.zeros(batch["tgt"].shape[0])
    inputs = decoder_inputs(batch["tgt"])
    for t in range(batch["tgt"].shape[1]):
        logits, state = model.decoder_step(inputs[:, t], state)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=batch["tgt"][:, t], logits=logits).numpy()
        stepped += np.where(batch["tgt"][:, t].numpy() != 0, ce, 0.0)
    return stepped


def run_nmt(*args, stdin=None, check=True):
    """Run ``nmt.py`` in a subprocess, as a user would; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, str(ROOT / "nmt.py"), *map(str, args)], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"nmt.py {' '.join(map(str, args))} failed:\n{proc.stderr[-3000:]}")
    return proc


@contextlib.contextmanager
def signal_handlers_kept():
    """Puts back this process's SIGINT/SIGTERM handlers after the command line, run in it, installed its own."""
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)


def cli_in_process(args, capsys, stdin=None, monkeypatch=None):
    """The ``rnnpb-nmt`` command run in this process, without a new interpreter and TensorFlow import
    (most of a subprocess's seconds): (exit status, stdout, stderr). ``stdin``: bytes to read (needs
    ``monkeypatch``). The signal handlers the command installs are put back afterwards."""
    import io

    from rnnpb_nmt import cli

    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    with signal_handlers_kept():
        try:
            status = cli.console_main([str(a) for a in args])
        except SystemExit as stop:  # argparse's errors
            status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def train_args(data, working_dir, *extra):
    return ["--do_training", f"--train_set1={data}/train.en", f"--train_set2={data}/train.de",
            f"--dev_set1={data}/dev.en", f"--dev_set2={data}/dev.de", f"--working_dir={working_dir}",
            "--embedding_size=16", "--units=32", "--batch_size=32", *extra]


def untrained_working_dir(path, data, **overrides):
    """A working directory of an untrained tiny model with vocabularies from ``data``'s training
    files: enough to load it and run --query, without training. Returns the model."""
    from rnnpb_nmt.train import workdir
    from rnnpb_nmt.train.checkpoints import RunCheckpoints
    from rnnpb_nmt.data.dataset import read_sentences
    from rnnpb_nmt.data.vocabulary import Vocabulary

    config = tiny_config(max_recog_epochs=3, **overrides)
    vocab1, vocab2 = (Vocabulary.build(read_sentences(f"{data}/train.{lang}")) for lang in ("en", "de"))
    model = models()[config.model.model](config, vocab1, vocab2)
    workdir.save_setup(str(path), config, vocab1, vocab2)
    RunCheckpoints(str(path), model).save_best(1)
    return model


# A synthetic inflection rule for the inflection models' tests: a suffix, a prefix, and a last
# letter replaced, by feature, over lemmas of 2-4 of 4 letters.
INFLECTION_RULES = {"num=PL": lambda w: w + "s", "aspect=PFV": lambda w: "ge" + w, "tense=PST": lambda w: w[:-1] + "t"}
SYNTHETIC_LEMMAS = ["".join(p) for n in (2, 3, 4) for p in itertools.product("abcd", repeat=n)]


def inflection_examples(lemmas):
    """(lemma, [tag], form) of every lemma under every rule."""
    return [(lemma, [tag], rule(lemma)) for lemma in lemmas for tag, rule in INFLECTION_RULES.items()]


def oracle_actions(lemma, form):
    """The action sequence that writes ``form`` from ``lemma``, as the inflection task reads a pair
    under the default ``--aligner=levenshtein``: the actions of their Levenshtein alignment."""
    from rnnpb_nmt.tasks.inflection.alignment import align, alignment_actions

    return alignment_actions(align(lemma, form))


def replay(lemma, actions):
    """Run actions on ``lemma``: (the characters written, the pointer before each action and after
    the last), to check an action sequence. A STEP past the last character is an error: the oracle
    and the decoder never make one."""
    from rnnpb_nmt.data.symbols import STEP

    pointer, written, pointers = 0, [], []
    for action in actions:
        pointers.append(pointer)
        if action == STEP:
            if pointer == len(lemma):
                raise ValueError(f"a step past the last character of {lemma!r}")
            pointer += 1
        else:
            written.append(action)
    return written, pointers + [pointer]


def held_out_inflection(make_model, encode, epochs):
    """Train ``make_model(vocab1, vocab2)`` for ``epochs`` on the examples of 240 of the synthetic
    lemmas (``encode(rows)`` -> vocab1, vocab2, src, tgt) and decode 30 others' greedily: (their
    accuracy, the first wrong (output, form) pairs)."""
    from rnnpb_nmt.tasks.inflection.task import InflectionTask, form_of, source_symbols
    from rnnpb_nmt.train.step import Trainer
    import numpy as np

    lemmas = list(np.random.default_rng(0).permutation(SYNTHETIC_LEMMAS))
    train, test = inflection_examples(lemmas[:240]), inflection_examples(lemmas[240:270])
    vocab1, vocab2, src, tgt = encode(train)
    model = make_model(vocab1, vocab2)
    trainer = Trainer(model)
    for epoch in range(1, epochs + 1):
        trainer.start_epoch(epoch)
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    sources = [source_symbols(lemma, tags) for lemma, tags, _ in test]
    outputs = translator_of(model).translate(sources)
    scores = InflectionTask().score(sources, outputs, [list(form) for _, _, form in test], "und")
    return scores["accuracy"], [(form_of(o), f) for o, (_, _, f) in zip(outputs, test) if form_of(o) != f][:10]


def status_in_process(*argv):
    """``nmt.py ARGV`` through ``rnnpb_nmt.cli.main`` in this process (no TensorFlow start-up per
    run): its exit status, what it printed left for ``capsys``; the signal handlers the command
    installs are put back afterwards."""
    from rnnpb_nmt import cli

    with signal_handlers_kept():
        return cli.main(models(), tasks(), [str(a) for a in argv])


def train_in_process(*argv):
    """``nmt.py --do_training ...`` in this process (``status_in_process``), which must succeed."""
    assert status_in_process("--do_training", *argv) == 0


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def sides(out, name, pairs, ext=("src", "tgt")):
    """Parallel files ``name.src``/``name.tgt`` of (source, target) token lists."""
    return [write_lines(out / f"{name}.{e}", [" ".join(pair[i]) for pair in pairs]) for i, e in enumerate(ext)]


def reversal_files(out, train=24, dev=4):
    """Reversal of 2-6 symbols: small, so that the runs cost little more than their tracing (the
    translation task reads such files as it reads tokenized text); ``train`` and ``dev`` pairs."""
    rng = random.Random(3)
    seqs = [[rng.choice("abcde") for _ in range(rng.randint(2, 6))] for _ in range(train + dev)]
    (train_src, train_tgt), (dev_src, dev_tgt) = (sides(out, name, [(s, s[::-1]) for s in part])
                                                   for name, part in (("train", seqs[:train]), ("dev", seqs[train:])))
    return [f"--train_set1={train_src}", f"--train_set2={train_tgt}", f"--dev_set1={dev_src}", f"--dev_set2={dev_tgt}"]


def latest_variables(working_dir, folder):
    """Every saved tensor of a checkpoint folder's latest checkpoint, but its bookkeeping ones
    (the object graph; save_counter, which counts saves by one process)."""
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(working_dir / folder))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()
            if name != "_CHECKPOINTABLE_OBJECT_GRAPH" and not name.startswith("save_counter")}


def raw_copy(tokenized_path, raw_path, language):
    """A raw-text version of a tokenized file (what a user's untokenized corpus looks like)."""
    from sacremoses import MosesDetokenizer

    from rnnpb_nmt.data.dataset import read_sentences

    detokenizer = MosesDetokenizer(lang=language)
    lines = [detokenizer.detokenize(tokens) for tokens in read_sentences(tokenized_path)]
    write_lines(raw_path, lines)
    return lines


def raw_corpus(demo_data, tmp_path):
    """Raw copies of the demo corpus's train/dev/test files in ``tmp_path``: the --*_set flags' values."""
    files = {}
    for part in ("train", "dev", "test"):
        for language in ("en", "de"):
            raw_copy(demo_data / f"{part}.{language}", tmp_path / f"{part}.{language}", language)
        files[f"{part}_set1"], files[f"{part}_set2"] = str(tmp_path / f"{part}.en"), str(tmp_path / f"{part}.de")
    return files


# question.gr's shape in small: a subject may have a relative clause, so its auxiliary comes first.
TINY_GRAMMAR = """1\tROOT\tS .

1\tS\tNP VP
1\tNP\tDet N
1\tNP\tDet N RC
1\tVP\tAux V
2\tVP\tAux Vt NP
1\tRC\tRel Aux V
1\tDet\tthe
1\tDet\tsome
1\tN\tnewt
1\tN\tyak
1\tAux\tdoes
1\tAux\tdoesn't
1\tV\tsleep
1\tVt\tsee
1\tRel\twho\t
"""


def run_search(model, src, fn):
    """``fn(step, start state, max lengths)`` (a search of ``rnnpb_nmt.infer.search``) on the
    encoded sentences ``src`` as one batch, compiled as the translator compiles it."""
    import tensorflow as tf

    batch = first_batch(src)["src"]
    max_len = tf.constant([len(s) + 1 for s in src])
    return tf.function(lambda b: fn(model.decoder_step, model.decoder_start(b), max_len))(batch)


# The bound model's tests: 30 words (ids 4-33), random sentences of them.
VOCAB = Vocabulary([f"w{i}" for i in range(30)])


def random_corpus(n, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    return [np.append(rng.integers(4, 34, rng.integers(2, 8)), 2).astype(np.int32) for _ in range(n)]


def reversal_corpus(n, seed=0):
    """Random sentences and their reversals: a pair's target is a function of its source."""
    import numpy as np
    rng = np.random.default_rng(seed)
    src = [rng.integers(4, 34, rng.integers(2, 8)).astype(np.int32) for _ in range(n)]
    end = np.array([2], np.int32)
    return [np.concatenate([s, end]) for s in src], [np.concatenate([s[::-1], end]) for s in src]


def first_batch(src, tgt=None, size=None):
    from rnnpb_nmt.data.dataset import make_dataset
    return next(iter(make_dataset(src, tgt, batch_size=size or len(src))))


def make_model(num_train=32, **overrides):
    """A tiny bound RNNPB of ``VOCAB``, seeded by tf.random.set_seed (``seed``, default 0)."""
    import tensorflow as tf

    from rnnpb_nmt.models.rnnpb.model import BoundRNNPB

    tf.random.set_seed(overrides.pop("seed", 0))
    return BoundRNNPB(tiny_config(model="rnnpbnmt", num_train=num_train, **overrides), VOCAB, VOCAB)


def bound_model(**changes):
    """A tiny bound RNNPB of ``VOCAB``, seeded by tf.keras.utils.set_random_seed(0)."""
    import tensorflow as tf

    from rnnpb_nmt.models.rnnpb.model import BoundRNNPB

    tf.keras.utils.set_random_seed(0)
    return BoundRNNPB(tiny_config(**{"model": "rnnpbnmt", "num_train": 16, **changes}), VOCAB, VOCAB)


# The trained bound models of the ``trained`` fixture (conftest.py): their beam, and the
# recognition modes (the thesis's Adam recognition; the semi-amortised one).
TRAINED_BEAM = 4
RECOGNITION_MODES = {"adam": {}, "amortized": {"amortize": "encoder", "refine_steps": 2}}


class ScriptsInProcess:
    """Stands in for a run script's ``subprocess`` module (``monkeypatch.setattr(script, "subprocess",
    ScriptsInProcess())``) where how a process starts is not what a test is about: a command that runs one of
    the repository's Python scripts (``nmt.py``, ``data/*.py``) runs it in this process, as ``__main__`` with
    its arguments in ``sys.argv`` (no interpreter and TensorFlow start-up each; an ``nmt.py`` command builds
    its model from its flags and working directory, as a new process does), its output into the file given
    as ``stdout``; any other command runs as a process."""

    STDOUT, CalledProcessError, TimeoutExpired = subprocess.STDOUT, subprocess.CalledProcessError, subprocess.TimeoutExpired

    def run(self, command, stdout=None, stderr=None, check=False):
        command = [str(part) for part in command]
        script = self._script(command)
        if script is None:
            return subprocess.run(command, stdout=stdout, stderr=stderr, check=check)
        status = self._run_script(command[command.index(script):], stdout or sys.stdout,
                                  stdout if stdout and stderr == subprocess.STDOUT else sys.stderr)
        if check and status:
            raise subprocess.CalledProcessError(status, command)
        return subprocess.CompletedProcess(command, status)

    def Popen(self, command, stdout=None, stderr=None):  # noqa: N802 (subprocess's name)
        """The command run to its end at once: a finished process (no time limit can stop it)."""
        status = self.run(command, stdout, stderr).returncode
        return types.SimpleNamespace(wait=lambda timeout=None: status)

    @staticmethod
    def _script(command):
        """The repository's script that ``command`` (``python [-u] SCRIPT ARGS``) runs, or None."""
        rest = command[2:] if command[1:2] == ["-u"] else command[1:]
        if command[0] == sys.executable and rest and rest[0].endswith(".py") and Path(rest[0]).resolve().is_relative_to(ROOT):
            return rest[0]
        return None

    @staticmethod
    def _run_script(argv, out, err):
        """The exit status of the script ``argv[0]`` run with ``argv``, as ``python`` gives it."""
        import runpy
        from unittest import mock

        with signal_handlers_kept(), mock.patch.object(sys, "argv", argv), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                runpy.run_path(argv[0], run_name="__main__")
            except SystemExit as stop:
                if stop.code is None or isinstance(stop.code, int):
                    return stop.code or 0
                print(stop.code, file=sys.stderr)  # sys.exit(message): the message, and status 1
                return 1
        return 0

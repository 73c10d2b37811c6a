"""Shared fixtures: tiny hyperparameters, the project's demo corpus, and a CLI runner."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# "ci" (the default): the same examples on every run, so a red CI always means a changed program;
# "fuzz" (make fuzz): fresh random examples, and more of them.
settings.register_profile("ci", max_examples=60, derandomize=True)
settings.register_profile("fuzz", max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from data import generate_demo  # noqa: E402
from nmtcore import cli  # noqa: E402


def tiny_params(**overrides):
    """Thesis defaults shrunk to test size; ``overrides`` win."""
    params = dict(cli.TRAINING_DEFAULTS, **cli.INFERENCE_DEFAULTS)
    params.update(embedding_size=16, units=32, num_layers=2, num_PB=8, batch_size=16, beam_size=3,
                  max_recog_epochs=30, num_train=0, num_mono1=0, num_mono2=0, lang1="en", lang2="de",
                  seed=7)
    params.update(overrides)
    return params


def models():
    import nmt
    return nmt.models()


def run_nmt(*args, stdin=None, check=True):
    """Run ``nmt.py`` in a subprocess, as a user would; returns the CompletedProcess."""
    proc = subprocess.run([sys.executable, str(ROOT / "nmt.py"), *map(str, args)], input=stdin,
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"nmt.py {' '.join(map(str, args))} failed:\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory):
    """A small synthetic en->de corpus written by the project's own generator."""
    out = tmp_path_factory.mktemp("demo_data")
    generate_demo.write(generate_demo.generate(400, 40, 30, seed=3), str(out))
    return out


def train_args(data, working_dir, *extra):
    return ["--do_training", f"--train_set1={data}/train.en", f"--train_set2={data}/train.de",
            f"--dev_set1={data}/dev.en", f"--dev_set2={data}/dev.de", f"--working_dir={working_dir}",
            "--embedding_size=16", "--units=32", "--batch_size=32", *extra]


@pytest.fixture(scope="session")
def trained_encdec(demo_data, tmp_path_factory):
    """A seq-to-seq model trained briefly through the command line."""
    wd = tmp_path_factory.mktemp("encdec") / "wd"
    run_nmt(*train_args(demo_data, wd, "--model=encdec", "--reverse_source", "--max_epochs=4", "--learning_rate=0.01"))
    return wd


@pytest.fixture(scope="session")
def trained_rnnpb(demo_data, tmp_path_factory):
    """A bound RNNPB (soft binding) trained briefly through the command line."""
    wd = tmp_path_factory.mktemp("rnnpb") / "wd"
    run_nmt(*train_args(demo_data, wd, "--model=rnnpbnmt", "--num_PB=16", "--binding_strength=1.0",
                        "--max_epochs=2", "--max_recog_epochs=10", "--dropout=0.2", "--sigma=0.1",
                        "--monitor_every=2", "--monitor_sentences=10"))
    return wd


def untrained_working_dir(path, data, **overrides):
    """A working directory of an untrained tiny model with vocabularies from ``data``'s training
    files: enough to load it and run --query, without training. Returns the model."""
    import tensorflow as tf

    from nmtcore import workdir
    from nmtcore.data import read_sentences
    from nmtcore.vocabulary import Vocabulary

    params = tiny_params(max_recog_epochs=3, **overrides)
    vocab1, vocab2 = (Vocabulary.build(read_sentences(f"{data}/train.{lang}")) for lang in ("en", "de"))
    model = models()[params["model"]](params, vocab1, vocab2)
    workdir.save_setup(str(path), params, vocab1, vocab2)
    tf.train.CheckpointManager(tf.train.Checkpoint(model=model), str(path / "best"), max_to_keep=1).save()
    return model

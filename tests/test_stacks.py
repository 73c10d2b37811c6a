"""Checkpoints written by one TensorFlow stack load, translate and resume on the other.

``tests/fixtures/stack-py311`` was written by the Python 3.11 stack (TensorFlow 2.15, tensorflow-addons'
LazyAdam) and ``tests/fixtures/stack-py313`` by the Python 3.13 one (newest TensorFlow, the project's
LazyAdam), each by ``python tests/test_stacks.py`` on that stack: a tiny seq-to-seq and a tiny
bound RNNPB trained for a few epochs on a corpus of the demo generator, with what that stack
translated and measured. Every stack runs these tests on both.

At this size the bound RNNPB generates one sentence for every source (its translations check
generation only); its recognised PBs, which differ from sentence to sentence, check recognition.
"""

import json
import shutil
import sys

import numpy as np
import pytest

from helpers import ROOT, models, run_nmt, translator_of

from rnnpb_nmt import demo_data as demo_corpus
from rnnpb_nmt import tf_stack as addons
from rnnpb_nmt.data.dataset import encode_all, read_sentences
from rnnpb_nmt.train import workdir

FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("stack-py*"))
# Between stacks, dev perplexities differed by at most 3.3e-8 relative when measured (the RNNPB's
# includes 10 iterations of recognition), and translations were equal; 1e-6 leaves rounding room.
PERPLEXITY_RTOL = 1e-6
# Recognised PBs (about 0.1 in size) differed by at most 3.8e-6 between stacks, by 2.2e-7 between
# the stacks reading one checkpoint.
PB_ATOL = 1e-5
EPOCHS = 8  # enough for the seq-to-seq's translations to differ from sentence to sentence
TRAINING = {
    "encdec": ["--model=encdec", "--reverse_source", "--learning_rate=0.02"],
    "rnnpb": ["--model=rnnpbnmt", "--num_PB=8", "--bind_hard", "--learning_rate=0.02", "--max_recog_epochs=10",
              "--p_reset=0.1"],
}


def training_command(corpus, working_dir, name, epochs):
    """nmt.py's arguments that train fixture model ``name``; ``corpus`` relative to ROOT, so that
    the run's hparams.json names the same training files wherever the repository is."""
    return ["--do_training", f"--train_set1={corpus}/train.en", f"--train_set2={corpus}/train.de",
            f"--dev_set1={corpus}/dev.en", f"--dev_set2={corpus}/dev.de", f"--working_dir={working_dir}",
            "--embedding_size=8", "--units=16", "--batch_size=32", f"--max_epochs={epochs}", *TRAINING[name]]


def measure(working_dir, corpus):
    """What a stack makes of a trained working directory: test translations, dev perplexity and,
    for the bound RNNPB, the test sentences' PBs recognised in A (rounded below PB_ATOL)."""
    model = workdir.load_model(str(working_dir), models())
    translator = translator_of(model)
    test = read_sentences(str(corpus / "test.en"))
    dev = [encode_all(vocab, read_sentences(str(corpus / f"dev.{lang}")))
           for vocab, lang in ((model.vocab1, "en"), (model.vocab2, "de"))]
    measured = {"translations": [" ".join(t) for t in translator.translate(test)],
                "dev_perplexity": float(translator.dev_perplexity(*dev, batch_size=64))}
    if hasattr(model, "recognize_sentences"):
        measured["recognised_pbs"] = np.round(model.recognize_sentences(test)["pb"], 6).tolist()
    return measured


def write_fixture():
    """Train both tiny models on this stack into tests/fixtures/stack-py3X and record their results."""
    out = ROOT / "tests" / "fixtures" / f"stack-py{sys.version_info.major}{sys.version_info.minor}"
    shutil.rmtree(out, ignore_errors=True)
    corpus = out / "corpus"
    demo_corpus.write(demo_corpus.generate(300, 30, 20, seed=5), str(corpus))
    expected = {"stack": addons.STACK}
    for name in TRAINING:
        run_nmt(*training_command(corpus.relative_to(ROOT), out.relative_to(ROOT) / name, name, EPOCHS))
        expected[name] = measure(out / name, corpus)
        shutil.rmtree(out / name / "logs")  # TensorBoard's, not needed here
    # The training state of the last epoch, for the resume test (which needs the RNNPB's only).
    shutil.rmtree(out / "encdec" / "state")
    state = out / "rnnpb" / "state"
    for old in state.glob(f"ckpt-{EPOCHS - 1}.*"):
        old.unlink()
    (state / "checkpoint").write_text(f'model_checkpoint_path: "ckpt-{EPOCHS}"\n'
                                      f'all_model_checkpoint_paths: "ckpt-{EPOCHS}"\n')
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


@pytest.mark.parametrize("name", sorted(TRAINING))
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_a_checkpoint_of_either_stack_translates_the_same(fixture, name):
    expected = json.loads((fixture / "expected.json").read_text())[name]
    got = measure(fixture / name, fixture / "corpus")
    assert got["translations"] == expected["translations"]
    assert got["dev_perplexity"] == pytest.approx(expected["dev_perplexity"], rel=PERPLEXITY_RTOL)
    if name == "rnnpb":
        pbs = np.array(expected["recognised_pbs"])
        apart = np.abs(pbs[:, None] - pbs[None]).max(axis=-1) + np.diag(np.full(len(pbs), np.inf))
        assert apart.min() > 10 * PB_ATOL  # every sentence its own PB: the check below can fail
        np.testing.assert_allclose(got["recognised_pbs"], pbs, rtol=0, atol=PB_ATOL)
    elif name == "encdec":
        assert len(set(expected["translations"])) > 1


@pytest.mark.long  # resumes a training
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_a_run_of_either_stack_resumes(fixture, tmp_path):
    # The training state (weights, PB tables, both optimisers' LazyAdam slots and step counters)
    # must be read with every object matched, or resuming is an error.
    working_dir = tmp_path / "rnnpb"
    shutil.copytree(fixture / "rnnpb", working_dir)
    proc = run_nmt(*training_command((fixture / "corpus").relative_to(ROOT), working_dir, "rnnpb", EPOCHS + 1))
    assert f"resuming {working_dir} after epoch {EPOCHS}" in proc.stdout + proc.stderr
    stats = json.loads((working_dir / "training_stats.json").read_text())
    assert len(stats["epochs"]) == EPOCHS + 1


if __name__ == "__main__":
    write_fixture()

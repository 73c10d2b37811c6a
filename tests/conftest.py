"""Fixtures: the project's demo corpus and briefly trained models; test profiles and markers.

``make test-fast`` leaves out the tests marked ``slow`` (each trains a model for more than a few
steps, in this process or through the command line, starts the command line, or reads the thesis's
data); ``make test`` leaves out those marked ``long`` as well (each tests a process of its own —
killed, locked, distributed, serving, loading an export — or trains a model until it meets a
quality threshold: they take about half the suite's time), which ``make test-all`` and CI run.
Tests that need ``../shared/data`` skip, saying so, where it is missing.
"""

import collections
import os

import pytest
import tensorflow as tf
from hypothesis import settings
from xdist.scheduler import LoadFileScheduling

from helpers import (RECOGNITION_MODES, SHARED_DATA, TRAINED_BEAM, bound_model, models, reversal_corpus,
                     tiny_config, train_args, train_in_process)

from rnnpb_nmt import demo_data as demo_corpus

# "ci" (the default): the same examples on every run, so a red CI always means a changed program;
# "fuzz" (make fuzz): fresh random examples, and more of them.
settings.register_profile("ci", max_examples=60, derandomize=True)
settings.register_profile("fuzz", max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# TensorFlow's graph optimiser (Grappler) off for what the tests run in their own process: it
# rewrites every new graph for speed, which a tiny model's few steps never earn back
# (test_amortized.py took 188 s of CPU without it, 245 s with it, on a loaded core). What users
# run keeps it: the tests that start ``nmt.py``, the server or the export in a new process (the
# thesis's listings, resuming, locking, serving).
tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})

# Fixtures that train a model (through the command line, or test_joint_rerank's in this process):
# a test that uses one is slow. (The markers are declared in pytest.ini.)
TRAINED = {"trained_encdec", "trained_rnnpb", "trained"}


def pytest_itemcollected(item):
    """The markers that follow from a test's fixtures and other markers (before ``-m`` selects)."""
    if TRAINED & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("long"):
        item.add_marker(pytest.mark.slow)
    if item.get_closest_marker("shared_data") and not SHARED_DATA.is_dir():
        item.add_marker(pytest.mark.skip(reason=f"needs the shared data sets at {SHARED_DATA}"))


@pytest.hookimpl(trylast=True)  # after ``-m`` has deselected: the order of what will run
def pytest_collection_modifyitems(config, items):
    longest_files_first(items)


def longest_files_first(items):
    """Order the files by their number of slow tests, most first (stable within a file).

    ``make test`` hands whole files to its two workers (``--dist loadfile``) in this order; when the
    longest files start first, no worker is left alone with a long file at the end.
    """
    slow = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[item.path])


class FilesInCollectionOrder(LoadFileScheduling):
    """``--dist loadfile`` handing out files in the order of the collection (longest_files_first).

    xdist's own hands out the files with the most tests first, whatever their cost: our costliest
    files have few tests (test_resume.py 3, test_distribute.py 2), so they started last and one
    worker ran them alone at the end.
    """

    def _assign_work_unit(self, node):
        position = {nodeid: i for i, nodeid in enumerate(self.collection)}
        first = min(self.workqueue, key=lambda scope: position[next(iter(self.workqueue[scope]))])
        self.workqueue.move_to_end(first, last=False)
        super()._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, not called without it
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadfile":
        return FilesInCollectionOrder(config, log)
    return None


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory):
    """A small synthetic en->de corpus written by the project's own generator."""
    out = tmp_path_factory.mktemp("demo_data")
    demo_corpus.write(demo_corpus.generate(400, 40, 30, seed=3), str(out))
    return out


@pytest.fixture(scope="session")
def trained_encdec(demo_data, tmp_path_factory):
    """A seq-to-seq model trained briefly by the command line's code, in this process."""
    wd = tmp_path_factory.mktemp("encdec") / "wd"
    train_in_process(*train_args(demo_data, wd, "--model=encdec", "--reverse_source", "--max_epochs=4", "--learning_rate=0.01"))
    return wd


@pytest.fixture(scope="session")
def trained_rnnpb(demo_data, tmp_path_factory):
    """A bound RNNPB (soft binding) trained briefly by the command line's code, in this process."""
    wd = tmp_path_factory.mktemp("rnnpb") / "wd"
    train_in_process(*train_args(demo_data, wd, "--model=rnnpbnmt", "--num_PB=16", "--binding_strength=1.0",
                                 "--max_epochs=2", "--max_recog_epochs=10", "--dropout=0.2", "--sigma=0.1",
                                 "--monitor_every=2", "--monitor_sentences=10"))
    return wd


@pytest.fixture
def setup(demo_data):
    """A function making an untrained tiny seq-to-seq model's Trainer (configuration changes as
    keywords), and the demo corpus."""
    from rnnpb_nmt.data import corpus as corpus_lib
    from rnnpb_nmt.train.step import Trainer

    files = {f"{part}_set{side}": f"{demo_data}/{part}.{lang}" for part in ("train", "dev")
             for side, lang in (("1", "en"), ("2", "de"))}
    config = tiny_config(model="encdec", max_epochs=2)
    corpus = corpus_lib.load(files, config)
    config = config.replace(**corpus.sizes())

    def trainer(**changes):
        return Trainer(models()["encdec"](config.replace(**changes), corpus.vocab1, corpus.vocab2))

    return trainer, corpus


@pytest.fixture(scope="session")
def trained_by_mode():
    """``trained``'s models by recognition mode, each trained when a module first needs it: the
    modules run by one process (test_joint_rerank.py, test_pb_diagnostics.py) share them, and leave
    them as trained."""
    return {}


@pytest.fixture(scope="module", params=sorted(RECOGNITION_MODES))
def trained(request, trained_by_mode):
    """A tiny bound model of each recognition mode, trained for a few epochs, and test sources."""
    if request.param not in trained_by_mode:
        trained_by_mode[request.param] = train_bound(request.param)
    return trained_by_mode[request.param]


def train_bound(mode):
    """``trained``'s model of recognition mode ``mode`` (its seeds fixed: the same in every process)."""
    from rnnpb_nmt.train.step import Trainer

    src, tgt = reversal_corpus(64)
    trainer = Trainer(bound_model(learning_rate=0.01, pb_learning_rate=0.05, num_train=64, max_recog_epochs=20,
                                  embedding_size=8, units=16, beam_size=TRAINED_BEAM, **RECOGNITION_MODES[mode]))
    for epoch in range(4):
        for batch in trainer.dataset("parallel", src, tgt, epoch):
            trainer.train_step(batch)
    test, _ = reversal_corpus(12, seed=1)
    return trainer.model, test

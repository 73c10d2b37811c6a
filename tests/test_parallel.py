"""Evaluation batches on several cores: same results, in order, errors and stops reach the caller."""

import threading
import time

import numpy as np
import pytest

from rnnpb_nmt.data.dataset import encode_all, read_sentences
from rnnpb_nmt.infer import parallel
from rnnpb_nmt.train import workdir

from rnnpb_nmt.infer.translator import Translator

from helpers import models


def test_results_come_back_in_input_order_and_costliest_start_first():
    started, lock = [], threading.Lock()
    # The three costliest wait for each other, so no worker takes a fourth batch before all three
    # are recorded; were they not the first three taken, the barrier would time out.
    costliest = threading.Barrier(3, timeout=10)

    def fn(b):
        with lock:
            started.append(b)
        if b >= 6:
            costliest.wait()
        time.sleep(0.01 * (b % 3))  # finishing out of order
        return b * 10

    batches = list(range(9))
    steps = []
    assert parallel.map_batches(fn, batches, 3, cost=lambda b: b, done=steps.append) == [b * 10 for b in batches]
    assert steps == list(range(1, 10))
    assert set(started[:3]) == {6, 7, 8}


@pytest.mark.parametrize("workers", [1, 3])
def test_an_error_stops_the_batches_not_yet_started(workers):
    calls = []

    def fn(b):
        calls.append(b)
        if b == 1:
            raise ValueError("bad batch")
        time.sleep(0.05)
        return b

    with pytest.raises(ValueError, match="bad batch"):
        parallel.map_batches(fn, list(range(20)), workers)
    assert len(calls) < 20

    def stop_after_two(n):
        if n == 2:
            raise KeyboardInterrupt

    calls.clear()
    threads = threading.active_count()
    with pytest.raises(KeyboardInterrupt):
        parallel.map_batches(lambda b: calls.append(b) or time.sleep(0.02), list(range(20)), workers, done=stop_after_two)
    assert len(calls) < 20 and threading.active_count() == threads  # the running batches finished


def test_batch_cap_leaves_every_worker_a_batch():
    assert parallel.batch_cap(256, 256, 2) == 128
    assert parallel.batch_cap(2000, 256, 2) == 256
    assert parallel.batch_cap(3, 256, 8) == 1


def test_dev_perplexity_and_translations_do_not_depend_on_the_number_of_workers(trained_rnnpb, demo_data,
                                                                                 monkeypatch):
    model = workdir.load_model(str(trained_rnnpb), models())
    src = encode_all(model.vocab1, read_sentences(demo_data / "dev.en"))[:40]
    tgt = encode_all(model.vocab2, read_sentences(demo_data / "dev.de"))[:40]
    results = []
    for workers in (1, 3):
        monkeypatch.setattr(parallel, "workers", lambda n=workers: n)
        translator = Translator(model)
        ids, scores = translator.translate_ids(src, beam_size=3, batch_size=16)
        results.append((translator.dev_perplexity(src, tgt, 16), ids, scores))
    (ppl1, ids1, scores1), (ppl3, ids3, scores3) = results
    assert ppl3 == pytest.approx(ppl1, rel=1e-5)
    np.testing.assert_allclose(scores3, scores1, atol=1e-3)
    unpadded = lambda ids: [list(np.trim_zeros(a, "b")) for a in ids]
    assert unpadded(ids3) == unpadded(ids1)

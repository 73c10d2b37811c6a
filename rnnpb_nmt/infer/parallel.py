"""Evaluation batches on every CPU core at once (dev perplexity, translation, recognition).

The thesis-sized models are too small for TensorFlow to spread one op over two cores: a batch's
recognition took as long on two cores as on one (``docs/performance.md``). Evaluation batches do
not depend on each other, so each core takes whole batches instead. On a GPU one batch already
fills the device, and the batches run one after another as before.
"""

import math
import os
import queue
import threading

import tensorflow as tf


def use_cores_for_batches():
    """On a CPU-only run, one thread per TensorFlow op, and the cores go to whole batches.

    With the thesis's sizes on 2 cores (``docs/performance.md``), an iteration of dev
    recognition took 83 ms this way against 100 ms with TensorFlow's default of one thread per
    core for every op, and training steps were no slower. Models large enough to profit from
    splitting single ops can set ``TF_NUM_INTRAOP_THREADS``, which this leaves alone. Has no
    effect once TensorFlow has run an op (a process that used it before calling ``nmt.py``'s
    main keeps its setting).
    """
    if "TF_NUM_INTRAOP_THREADS" in os.environ or tf.config.get_visible_devices("GPU"):
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
    except RuntimeError:
        pass


def workers():
    """How many batches to run at once: the usable CPU cores, or 1 when a GPU is visible."""
    if tf.config.list_logical_devices("GPU"):
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def batch_cap(num_sentences, batch_size, num_workers):
    """A batch size that leaves every worker a batch, and at most ``batch_size``."""
    return max(1, min(batch_size, math.ceil(num_sentences / num_workers)))


def map_batches(fn, batches, num_workers, cost=None, done=None):
    """``[fn(b) for b in batches]``, up to ``num_workers`` calls at once, in input order.

    The costliest batches (by ``cost(b)``; without it, in order) start first, so that the
    workers finish together. ``done(n)`` is called in this thread after each of the ``n``
    finished calls; an exception from it or from ``fn`` stops the batches not yet started and
    is raised here once the running ones have finished (a TensorFlow call cannot be cut short).
    """
    done = done or (lambda n: None)
    if num_workers <= 1 or len(batches) <= 1:
        results = []
        for b in batches:
            results.append(fn(b))
            done(len(results))
        return results
    order = sorted(range(len(batches)), key=lambda i: -cost(batches[i]) if cost else i)
    todo, finished, stop = queue.SimpleQueue(), queue.SimpleQueue(), threading.Event()
    for i in order:
        todo.put(i)

    def work():
        while not stop.is_set():
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            try:
                finished.put((i, fn(batches[i]), None))
            except Exception as error:
                finished.put((i, None, error))

    # Daemon threads: a second Ctrl-C while the running batches finish still ends the process.
    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(num_workers, len(batches)))]
    for t in threads:
        t.start()
    results = [None] * len(batches)
    try:
        for n in range(1, len(batches) + 1):
            i, result, error = finished.get()
            if error is not None:
                raise error
            results[i] = result
            done(n)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return results

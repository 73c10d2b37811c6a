"""Ctrl-C and SIGTERM: stop at once, or, while training, at the next safe point.

Python raises KeyboardInterrupt wherever a signal lands. Inside TensorFlow's own Python code
(a dataset being built, a function being traced or called) that can surface as another error, or
leave half-made state. While training, a signal is therefore only recorded, and the training loop
asks ``check()`` between steps and between dev batches; every other mode stops at once.
"""

import contextlib
import signal

_requested = []


class Stopped(KeyboardInterrupt):
    """A stop of training that saved where it was: ``resume_from`` says where the same command
    resumes (``step K of epoch E``)."""

    def __init__(self, resume_from):
        super().__init__(resume_from)
        self.resume_from = resume_from


def _stop_now(signum, frame):
    raise KeyboardInterrupt


def _record(signum, frame):
    _requested.append(signum)


def stop_at_once():
    """SIGINT and SIGTERM raise KeyboardInterrupt where they land (translation, analysis)."""
    signal.signal(signal.SIGINT, _stop_now)
    signal.signal(signal.SIGTERM, _stop_now)


@contextlib.contextmanager
def safe_points():
    """Inside (training), SIGINT and SIGTERM are recorded and ``check()`` raises KeyboardInterrupt.

    On leaving, they stop at once again: the same command may go on to test or translate, where
    nothing asks ``check()``. A stop requested after the last safe point still stops it.
    """
    _requested.clear()
    signal.signal(signal.SIGINT, _record)
    signal.signal(signal.SIGTERM, _record)
    try:
        yield
    finally:
        stop_at_once()
        pending = bool(_requested)
        _requested.clear()
    if pending:
        raise KeyboardInterrupt


def check():
    """Raise KeyboardInterrupt if a stop was requested inside ``safe_points()``."""
    if _requested:
        raise KeyboardInterrupt

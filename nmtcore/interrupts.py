"""Ctrl-C and SIGTERM: stop at once, or, while training, at the next safe point.

Python raises KeyboardInterrupt wherever a signal lands. Inside TensorFlow's own Python code
(a dataset being built, a function being traced or called) that can surface as another error, or
leave half-made state. While training, a signal is therefore only recorded, and the training loop
asks ``check()`` between steps and between dev batches; every other mode stops at once.
"""

import signal

_requested = []


def _stop_now(signum, frame):
    raise KeyboardInterrupt


def _record(signum, frame):
    _requested.append(signum)


def stop_at_once():
    """SIGINT and SIGTERM raise KeyboardInterrupt where they land (translation, analysis)."""
    signal.signal(signal.SIGINT, _stop_now)
    signal.signal(signal.SIGTERM, _stop_now)


def stop_at_safe_points():
    """SIGINT and SIGTERM are recorded, and ``check()`` raises KeyboardInterrupt (training)."""
    signal.signal(signal.SIGINT, _record)
    signal.signal(signal.SIGTERM, _record)


def check():
    """Raise KeyboardInterrupt if a stop was requested since ``stop_at_safe_points()``."""
    if _requested:
        raise KeyboardInterrupt

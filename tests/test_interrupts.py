"""Signals: recorded inside training's safe points, acted on at once everywhere else."""

import signal

import pytest

from rnnpb_nmt.train import interrupts

from helpers import signal_handlers_kept


@pytest.fixture
def own_handlers():
    with signal_handlers_kept():
        interrupts.stop_at_once()
        yield


def test_a_signal_inside_safe_points_waits_for_check(own_handlers):
    reached = []
    with pytest.raises(KeyboardInterrupt), interrupts.safe_points():
        signal.raise_signal(signal.SIGTERM)
        reached.append("after the signal")
        interrupts.check()
        reached.append("after check")
    assert reached == ["after the signal"]


def test_after_safe_points_a_signal_stops_at_once(own_handlers):
    with interrupts.safe_points():
        interrupts.check()
    # --do_training --do_testing goes on to test, where nothing calls check()
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGTERM)
        pytest.fail("the signal was only recorded")


def test_a_signal_after_the_last_check_stops_on_leaving(own_handlers):
    with pytest.raises(KeyboardInterrupt), interrupts.safe_points():
        signal.raise_signal(signal.SIGINT)
    interrupts.check()  # nothing left pending: a later training starts afresh

"""Progress bars for long loops (training epochs, dev measurement, test translation).

A bar is one line, redrawn in place: its label, the steps done of the total (``~`` when the total
is an estimate, such as the previous epoch's count), the time so far and the time left, and named
values (a training epoch's mean loss so far). It is shown on a terminal only: CI logs, pipes and
nohup get the per-epoch lines alone. Used as a context manager, a bar ends its line when the loop
ends, normally or not, so that what is printed next (an epoch's line, "interrupted") starts a line
of its own.
"""

import sys
import time

REDRAW = 0.1  # seconds between redraws: a fast loop does not spend its time writing to the terminal
WIDTH = 20  # characters of the bar itself


def bar(label, total=None, estimated=False, enabled=True):
    """A progress bar ``label`` over ``total`` steps (None: unknown; ``estimated``: a guess the
    steps may pass); ``update(step, {name: value})``, ``finish()``, or a ``with`` block."""
    return Bar(label, total, estimated, enabled and sys.stdout.isatty())


def duration(seconds):
    """``m:ss``, or ``h:mm:ss`` from an hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Bar:
    """A progress line on stdout (``bar``); ``shown`` False: it writes nothing."""

    def __init__(self, label, total, estimated, shown):
        self.label, self.total, self.estimated, self.shown = label, total, estimated, shown
        self.step, self.values = 0, {}
        self._started = time.monotonic()
        self._first = None  # (time, step) of the first update: the pace leaves out a first step's tracing
        self._drawn, self._width = None, 0

    def update(self, step, values=None):
        """``step`` steps are done; ``values`` (name -> number) are shown from now on."""
        self.step = step
        self.values.update(values or {})
        now = time.monotonic()
        if self._first is None:
            self._first = (now, step)
        if self._drawn is None or now - self._drawn >= REDRAW:
            self._draw(self.line(now), now)

    def finish(self):
        """Draw the final state and end the line."""
        if self._drawn is not None:
            now = time.monotonic()
            self._draw(self.line(now, done=True), now)
        self._end_line()

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        if kind is None:
            self.finish()
        else:  # Ctrl-C or an error: the line is left as it was, and ended
            self._end_line()

    def line(self, now, done=False):
        """The bar's text at time ``now`` (``done``: the loop has ended)."""
        elapsed = duration(now - self._started)
        values = "".join(f"  {name} {value:.4g}" for name, value in self.values.items())
        total = self.step if done else self.total
        if total is None or self.step > total:
            return f"{self.label}: {self.step} step{'s' * (self.step != 1)}, {elapsed}{values}"
        filled = WIDTH * self.step // max(total, 1)
        drawn = "=" * filled + (">" if filled < WIDTH else "") + " " * (WIDTH - filled - 1)
        left = "" if done else self._left(now, total)
        approximate = "~" if self.estimated and not done else ""
        return f"{self.label}: {self.step}/{approximate}{total} [{drawn}] {elapsed}{left}{values}"

    def _left(self, now, total):
        """``, ETA m:ss`` at the pace since the first update, once there is one."""
        first_time, first_step = self._first or (now, self.step)
        if self.step <= first_step:
            return ""
        pace = (now - first_time) / (self.step - first_step)
        return f", ETA {duration(pace * (total - self.step))}"

    def _draw(self, text, now):
        self._drawn = now
        if self.shown:
            sys.stdout.write("\r" + text.ljust(self._width))
            sys.stdout.flush()
            self._width = len(text)

    def _end_line(self):
        if self.shown and self._width:
            sys.stdout.write("\n")
            sys.stdout.flush()
        self._width = 0

"""Progress of a batch: a bar with rate and ETA on a terminal, plain lines otherwise.

It counts as the summary does: inputs finished of those to do, by outcome (``completed``,
``failed``, ``invalid``). The rate is of inputs run (a line that is not an input takes no time
and does not count in it), shown once a second has passed, so the first line is not a burst;
the last line gives the time taken and the rate.
"""

from __future__ import annotations

import time
from typing import Final, TextIO

__all__ = ["Progress"]

_RATE_AFTER: Final = 1.0
"""Seconds before the first rate is shown."""


class Progress:
    """Counts finished inputs of ``total`` by outcome and shows them on ``stream``."""

    def __init__(self, total: int, stream: TextIO, *, every: float = 5.0) -> None:
        self.total = total
        self.done = 0
        self.counts = {"completed": 0, "failed": 0, "invalid": 0}
        self._stream = stream
        self._tty = stream.isatty()
        self._every = every
        self._began = time.monotonic()
        self._shown = 0.0

    @property
    def failed(self) -> int:
        """Inputs whose run failed so far."""
        return self.counts["failed"]

    def advance(self, status: str = "completed") -> None:
        """One more input finished with ``status``."""
        self.done += 1
        self.counts[status] = self.counts.get(status, 0) + 1
        now = time.monotonic()
        if self._tty or now - self._shown >= self._every or self.done == self.total:
            self._shown = now
            self._show(now)

    def _show(self, now: float) -> None:
        took = now - self._began
        ran = self.counts["completed"] + self.counts["failed"]
        left = self.total - self.done
        if not left:  # the last line: the time taken, and the rate when inputs ran
            speed = f"{took:.1f} s" + (f", {ran / max(took, 1e-9):.1f}/s" if ran else "")
        elif took >= _RATE_AFTER and ran:
            rate = ran / took
            speed = f"{rate:.1f}/s, ETA {left / rate:.0f} s"
        else:
            speed = "rate: measuring"
        outcomes = ", ".join(f"{n} {status}" for status, n in self.counts.items() if n)
        counts = f"{self.done}/{self.total}"
        tail = f"({outcomes}), {speed}" if outcomes else speed
        if self._tty:
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if self.done == self.total else ""
            self._stream.write(f"\r[{bar}] {counts} {tail}" + end)
        else:
            self._stream.write(f"batch: {counts} done {tail}\n")
        self._stream.flush()

"""Progress of a batch: a bar with rate and ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """Counts finished inputs of ``total`` and shows them on ``stream``."""

    def __init__(self, total: int, stream: TextIO, *, every: float = 5.0) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self._stream = stream
        self._tty = stream.isatty()
        self._every = every
        self._began = time.monotonic()
        self._shown = 0.0

    def advance(self, *, failed: bool = False) -> None:
        """One more input finished."""
        self.done += 1
        self.failed += failed
        now = time.monotonic()
        if self._tty or now - self._shown >= self._every or self.done == self.total:
            self._shown = now
            self._show(now)

    def _show(self, now: float) -> None:
        took = max(now - self._began, 1e-9)
        rate = self.done / took
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        eta = f"{left:.0f} s" if left != float("inf") else "?"
        counts = f"{self.done}/{self.total}"
        tail = f"{rate:.1f}/s, ETA {eta}" + (f", {self.failed} failed" if self.failed else "")
        if self._tty:
            width = 30
            filled = int(width * self.done / self.total) if self.total else width
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if self.done == self.total else ""
            self._stream.write(f"\r[{bar}] {counts} {tail}" + end)
        else:
            self._stream.write(f"batch: {counts} done, {tail}\n")
        self._stream.flush()

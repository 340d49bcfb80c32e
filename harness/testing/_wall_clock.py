"""The checker's wall-clock guard: a run that outlives its limit is interrupted, never waited on.

Two layers. A hang that awaits (a policy awaiting an event that never comes, a tool awaiting a
dead server) is cut by :func:`harness.testing.report_run`'s own asyncio timeout, which first
reads where every task is waiting. A hang that blocks the event loop (``time.sleep``, a busy
loop in a tool, a policy or the thinker itself) cannot be cut by asyncio: :func:`guarded` arms
``SIGALRM`` (main thread) or a watchdog thread that injects :class:`RunHung` into the blocked
thread (other threads; pure-Python code only), a little after the limit, then again every
:data:`REPEAT` seconds until the guarded block ends, so code swallowing one interruption gets
the next. C code that never returns to the interpreter cannot be interrupted by either.
"""

from __future__ import annotations

import ctypes
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Final

__all__ = ["GRACE", "REPEAT", "RunHung", "disarm", "guarded"]

GRACE: Final = 0.5
"""Seconds past the limit before blocking code is interrupted (asyncio's timeout goes first)."""

REPEAT: Final = 0.5
"""Seconds between interruptions while the guarded block has not ended."""


class RunHung(BaseException):
    """Raised into a run that outlived its wall-clock limit.

    A ``BaseException``, so neither a tool's ``except Exception`` nor the dispatcher's failure
    handling takes it for the run's own failure; the recorder catches it.
    """


_active: list[_Guard] = []


class _Guard:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.armed = True
        self.fired = 0
        self.thread = threading.current_thread()
        self.done = threading.Event()

    def fire(self) -> None:
        self.fired += 1


def disarm() -> None:
    """Stop interrupting this thread's innermost guarded block (its hang was caught and is
    being reported)."""
    here = threading.current_thread()
    mine = [guard for guard in _active if guard.thread is here]
    if not mine:
        return
    guard = mine[-1]
    guard.armed = False
    guard.done.set()
    if here is threading.main_thread() and hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0.0)


@contextmanager
def guarded(limit: float) -> Iterator[None]:
    """Interrupt the block with :class:`RunHung` if it runs ``limit`` + :data:`GRACE` seconds."""
    if limit <= 0:
        raise ValueError(f"the wall-clock limit must be positive, got {limit!r} seconds")
    guard = _Guard(limit + GRACE)
    _active.append(guard)
    try:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            with _by_signal(guard):
                yield
        else:
            with _by_watchdog(guard):
                yield
    finally:
        _active.remove(guard)


@contextmanager
def _by_signal(guard: _Guard) -> Iterator[None]:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        if not guard.armed:
            return
        guard.fire()
        signal.setitimer(signal.ITIMER_REAL, REPEAT)
        raise RunHung(f"interrupted after {guard.seconds:g} s")

    started = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, interrupt)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, guard.seconds)
    try:
        yield
    finally:
        guard.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay > 0:  # someone else's timer (pytest-timeout, say) keeps its time
            left = max(previous_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)


@contextmanager
def _by_watchdog(guard: _Guard) -> Iterator[None]:
    target = guard.thread.ident

    def watch() -> None:
        wait = guard.seconds
        while not guard.done.wait(wait) and guard.armed and target is not None:
            guard.fire()
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(target), ctypes.py_object(RunHung)
            )
            wait = REPEAT

    watchdog = threading.Thread(target=watch, name="harness-wall-clock", daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        guard.armed = False
        guard.done.set()
        watchdog.join()

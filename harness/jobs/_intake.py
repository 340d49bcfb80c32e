"""The intake: how many jobs do their work before admission in one turn of the event loop.

One concern: spreading a burst of submissions over turns of the loop, so the resolving,
encoding and pricing a job does before it is admitted never holds the loop for long while
admitted jobs, whose clocks run, wait for their replies to be read.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final

__all__ = ["INTAKE_PER_SLICE", "Intake"]

INTAKE_PER_SLICE: Final = 16
"""How many jobs may do their work before admission (resolve, encode, price) in one turn of the
event loop; the rest wait their turn, first come first served."""


class Intake:
    """Spreads the work jobs do before admission over turns of the event loop.

    At most ``per_slice`` jobs pass per slice; the rest wait in line and are let through a slice
    at a time, one slice per later turn of the loop. A burst of submissions (10,000 calls at
    once) therefore spends its pricing over many turns instead of seconds in one.

    A slice ends only when a job finds it full: that job waits in line and the next slice opens
    in a later turn. Jobs that come one at a time therefore pass without scheduling anything
    (one job in ``per_slice`` waits one turn), and no turn ever lets more than ``per_slice``
    through.
    """

    __slots__ = ("_line", "_loop", "_passed", "_per_slice", "_turn_scheduled")

    def __init__(self, per_slice: int = INTAKE_PER_SLICE) -> None:
        self._per_slice = per_slice
        self._passed = 0
        self._line: deque[asyncio.Future[None]] = deque()
        self._turn_scheduled = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def passes(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a job may do its work now (it is counted); else it must :meth:`wait`."""
        if loop is not self._loop:  # a dispatcher used again under a new loop starts afresh
            self._loop = loop
            self._line = deque()
            self._passed = 0
            self._turn_scheduled = False
        if not self._line and self._passed < self._per_slice:
            self._passed += 1
            return True
        return False

    def wait(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A place in line for a later slice: await it. A future, not a coroutine, so a job
        awaits it from its own frame (most of a burst waits once: no frame made for it). A
        cancelled ticket stays in line, done, and is skipped."""
        ticket: asyncio.Future[None] = loop.create_future()
        self._line.append(ticket)
        if not self._turn_scheduled:  # :meth:`_schedule`, inlined: one call fewer a wait
            self._turn_scheduled = True
            loop.call_soon(self._next_slice)
        return ticket

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._turn_scheduled:
            self._turn_scheduled = True
            loop.call_soon(self._next_slice)

    def _next_slice(self) -> None:
        self._turn_scheduled = False
        self._passed = 0
        line = self._line
        while line and self._passed < self._per_slice:
            ticket = line.popleft()
            if not ticket.done():
                ticket.set_result(None)
                self._passed += 1
        if line and self._loop is not None:
            self._schedule(self._loop)

"""pyperf for the fixed-cost benchmarks: each way of making calls is one pyperf benchmark.

pyperf calibrates each way's loop count, runs it in worker processes of their own (each with
warm-up values first), and gives each way's time a call and its spread over the workers; the
script then prints its targets as ratios of those times (their medians), every way measured in
the same run. ``-o FILE`` writes pyperf's own results, which ``python -m pyperf compare_to OLD.json
NEW.json`` compares between two builds; ``--json FILE`` writes the benchmark's results
(``_results.py``).

A script's own options are passed on to its workers (:func:`runner`); ``PYTHONPATH`` is too, so
``targets.py --tree`` measures the tree it names.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import pyperf

__all__ = ["Means", "closing", "finish", "runner", "timed_async", "worker_loop"]


def runner(
    own: Callable[[argparse.ArgumentParser], None],
    passed: Sequence[str],
    *,
    processes: int,
    values: int,
) -> tuple[pyperf.Runner, argparse.Namespace]:
    """A pyperf runner with the script's own options (added by ``own``; the destinations named
    in ``passed`` go to the workers as they were given), and the parsed options."""

    def pass_on(command: list[str], args: argparse.Namespace) -> None:
        for name in passed:
            value = getattr(args, name)
            flag = "--" + name.replace("_", "-")
            if value is True:
                command.append(flag)
            elif value is not False and value is not None:
                command.extend([flag, str(value)])

    made = pyperf.Runner(processes=processes, values=values, add_cmdline_args=pass_on)
    own(made.argparser)
    made.argparser.add_argument(
        "--json", metavar="FILE", help="write the benchmark's results as JSON (- : stdout)"
    )
    options = made.parse_args()
    if os.environ.get("PYTHONPATH"):  # the tree measured (targets.py --tree)
        options.inherit_environ = [*(options.inherit_environ or []), "PYTHONPATH"]
    return made, options


_loop: asyncio.AbstractEventLoop | None = None
_closers: list[Callable[[], Coroutine[Any, Any, object]]] = []


def worker_loop() -> asyncio.AbstractEventLoop:
    """This process's event loop (one per worker: a way's state lives on it between values);
    what :func:`closing` was given is closed on it by :func:`finish`."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
        asyncio.set_event_loop(_loop)
    return _loop


def closing(close: Callable[[], Coroutine[Any, Any, object]]) -> None:
    """Await ``close()`` on the worker's loop at :func:`finish` (a session, a dispatcher)."""
    _closers.append(close)


def finish() -> None:
    """Close what :func:`closing` was given, and the loop: the last thing a script's ``main``
    does, in its workers and in the main process alike (at interpreter exit the executors the
    closing needs are already shut)."""
    global _loop
    if _loop is None or _loop.is_closed():
        return
    for close in reversed(_closers):
        _loop.run_until_complete(close())
    _closers.clear()
    _loop.close()
    _loop = None


def timed_async(
    make: Callable[[], Coroutine[Any, Any, Callable[[], Coroutine[Any, Any, object]]]],
) -> Callable[[int], float]:
    """A pyperf time function for an asynchronous way: ``make`` (run once per worker, on its
    loop) sets the way up and returns one call's coroutine function; each value times ``loops``
    calls of it, awaited one after another."""
    made: list[Callable[[], Coroutine[Any, Any, object]]] = []

    def time_func(loops: int) -> float:
        loop = worker_loop()
        if not made:
            made.append(loop.run_until_complete(make()))
        call = made[0]

        async def calls() -> float:
            started = time.perf_counter()
            for _ in range(loops):
                await call()
            return time.perf_counter() - started

        return loop.run_until_complete(calls())

    return time_func


class Means:
    """Each way's seconds a call, by name: the median of pyperf's values (``Benchmark.median``;
    on a shared machine a value now and then takes a preemption, which moves the mean and not
    the median); empty in a worker, whose runner returns no benchmark for the ways it did not
    run."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.spread: dict[str, float] = {}
        self.values: dict[str, int] = {}

    def add(self, name: str, benchmark: pyperf.Benchmark | None) -> None:
        """Keep ``benchmark``'s mean (None: this process did not run it)."""
        if benchmark is None or benchmark.get_nvalue() == 0:  # calibration: no values yet
            return
        self.seconds[name] = benchmark.median()
        self.spread[name] = benchmark.stdev() if benchmark.get_nvalue() > 1 else 0.0
        self.values[name] = benchmark.get_nvalue()

    def __getitem__(self, name: str) -> float:
        return self.seconds[name]

    def complete(self, names: Sequence[str]) -> bool:
        """Whether every way named was measured here (the main process, after its workers)."""
        return all(name in self.seconds for name in names)

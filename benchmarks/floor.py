"""The contract's floor: the least any code keeping harness's contract (every call priced,
admitted, recorded, traceable) can add to the embedded model, measured beside harness in the
same run.

``embedded.py`` asks whether harness's own time is at most 0.2 of the model's (latency) and
whether its rate is at least 0.95 of the model's serial rate (throughput). When a target is
missed, the question is whether harness's design misses it or the contract itself does. This
script answers that with a **floor path**: the same small request (a three-option choice)
through the least code that does what the contract requires of every call, written by hand in
plain asyncio for this one request and entry, with nothing general about it:

* a call submitted among many runs as a task of its own (a job can be awaited and cancelled
  on its own: the throughput path); a call awaited alone runs in the awaiting task, which
  cancels it by being cancelled (the latency path; harness's ``Dispatcher.run`` does the same
  with a decision call);
* an identity (a job id) and a context variable naming the running job, set and reset
  (traceable);
* the call priced: the body's length reserved against the entry's ceiling (the body encoded
  once per request, as harness keeps it on the request);
* a time limit: the call's deadline added to and taken from a set (one timer per loop, as
  harness does);
* admitted: a permit from an ``asyncio.Semaphore`` of the entry's ``max_concurrent``, held while
  the model runs;
* the model asked, its time taken with two clock reads;
* the reply checked once: an object per question, of the type asked, a probability for every
  option that is a float in [0, 1], the choice one of the options, the confidence a probability
  or computed;
* the shipped entry's calibration applied (its temperature map on the choice);
* recorded: a record holding the request, the model's answers, the calibrated ones and the
  latency, appended to the job's list.

It has no catalog, no resolution, no retries, no events, no hooks, no error messages and no
answer objects beyond tuples: whatever harness does beyond it is design, not contract. So the
floor path's ratios bound what any implementation could reach on this machine: a target the
floor misses cannot be met without giving up part of the contract.

Each way is a pyperf benchmark of the same run (``benchmarks/_perf.py``: calibrated loops,
worker processes, warm-ups): sparrow-decider asked directly (the baseline), the floor path and
harness's ``DecisionCall`` through a ``Dispatcher``, each awaited one after another (latency);
then ``--block`` calls (default 100) submitted at once and gathered (throughput): the floor
path's, harness's, and the model asked in a bare task a call (``create_task`` and ``gather``,
nothing else of the contract: what the task per submitted job alone costs), each against the
model in a plain loop.

A script, not a test: ``python benchmarks/floor.py [--fast | --rigorous] [-o now.json]``;
``--json FILE`` writes the results (``benchmarks/_results.py``), ``--breakdown`` profiles the
floor path by part.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import itertools
import math
import os
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _breakdown import breakdown, print_breakdown
from _perf import Means, finish, runner, timed_async, worker_loop
from _results import conditions, target, write
from embedded import LATENCY_TARGET, SMALL, THROUGHPUT_TARGET, harness_way, submitted

from harness.catalog import TemperatureMap, default_catalog
from harness.decision import Choice, DecisionRequest, systemone
from harness.decision._internal import json_bytes

_job = contextvars.ContextVar[int]("floor_job")
_EPSILON = 1e-12


class _Record:
    """What the floor path keeps of a call."""

    __slots__ = ("calibrated", "job_id", "latency", "raw", "request", "reserved")

    def __init__(
        self,
        job_id: int,
        request: DecisionRequest,
        reserved: int,
        raw: dict[str, tuple[str, dict[str, float], float]],
        calibrated: dict[str, tuple[str, dict[str, float], float]],
        latency: float,
    ) -> None:
        self.job_id = job_id
        self.request = request
        self.reserved = reserved
        self.raw = raw
        self.calibrated = calibrated
        self.latency = latency


class Floor:
    """The floor path for one request on the embedded entry (see the module's notes)."""

    def __init__(
        self, model: Any, request: DecisionRequest, temperature: float
    ) -> None:  # Any: sparrow's Decider
        self.model = model
        self.request = request
        body = systemone.encode_request(request, "sparrow-decider")
        questions = body["questions"]
        if not isinstance(questions, dict):
            raise TypeError("the wire's questions are an object")
        self.state = body["state"]
        self.questions: dict[str, Any] = questions  # sparrow's own JSON shapes
        self.body_length = len(json_bytes(body))
        self.ceiling = 1 << 20
        self.options = {
            qid: tuple(q.options) for qid, q in request.questions.items() if isinstance(q, Choice)
        }
        self.inverse_temperature = 1.0 / temperature
        self.gate = asyncio.Semaphore(4)
        self.deadlines: set[float] = set()
        self.ids = itertools.count(1)
        self.records: list[_Record] = []

    def check(self, reply: Mapping[str, object]) -> dict[str, tuple[str, dict[str, float], float]]:
        """The reply's answers, checked once (a failure raises, unexplained: no messages here)."""
        answers: dict[str, tuple[str, dict[str, float], float]] = {}
        for qid, options in self.options.items():
            raw = reply[qid]
            if type(raw) is not dict or raw.get("type", "choice") != "choice":
                raise ValueError(qid)
            table = raw["probabilities"]
            probabilities: dict[str, float] = {}
            for option in options:
                p = table[option]
                if type(p) is not float or not 0.0 <= p <= 1.0:
                    raise ValueError(qid)
                probabilities[option] = p
            choice = raw["choice"]
            if type(choice) is not str or choice not in probabilities:
                raise ValueError(qid)
            sure = raw.get("confidence")
            if sure is None:
                sure = _confidence(list(probabilities.values()))
            elif type(sure) is not float or not 0.0 <= sure <= 1.0:
                raise ValueError(qid)
            answers[qid] = (choice, probabilities, sure)
        return answers

    def calibrate(
        self, answers: dict[str, tuple[str, dict[str, float], float]]
    ) -> dict[str, tuple[str, dict[str, float], float]]:
        """The entry's temperature map on every choice."""
        out: dict[str, tuple[str, dict[str, float], float]] = {}
        inverse = self.inverse_temperature
        for qid, (choice, probabilities, _) in answers.items():
            logs = [math.log(max(_EPSILON, p)) * inverse for p in probabilities.values()]
            top = max(logs)
            weights = [math.exp(v - top) for v in logs]
            total = sum(weights)
            values = [w / total for w in weights]
            out[qid] = (choice, dict(zip(probabilities, values, strict=True)), _confidence(values))
        return out

    async def job(self) -> dict[str, tuple[str, dict[str, float], float]]:
        """One call: identity, context, price, limit, permit, the model, check, calibration,
        record."""
        job_id = next(self.ids)
        token = _job.set(job_id)
        try:
            reserved = self.body_length
            if reserved > self.ceiling:
                raise ValueError("over the ceiling")
            deadline = time.monotonic() + 60.0
            self.deadlines.add(deadline)
            try:
                async with self.gate:
                    started = time.perf_counter()
                    reply = self.model.ask(self.state, self.questions)
                    latency = time.perf_counter() - started
            finally:
                self.deadlines.discard(deadline)
            raw = self.check(reply)
            calibrated = self.calibrate(raw)
            self.records.append(_Record(job_id, self.request, reserved, raw, calibrated, latency))
            return calibrated
        finally:
            _job.reset(token)

    async def call(self) -> dict[str, tuple[str, dict[str, float], float]]:
        """One call awaited: in the awaiting task, as harness runs an awaited decision call
        (``Job.runs_inline``); cancelling the awaiter cancels it."""
        return await self.job()


def _confidence(values: list[float]) -> float:
    count = len(values)
    if count == 1:
        return 1.0
    uniform = 1 / count
    return min(1.0, max(0.0, (max(values) - uniform) / (1 - uniform)))


def _temperature() -> float:
    """The shipped embedded entry's temperature for a choice (the ``choice`` role)."""
    entry = default_catalog().resolve_decision(None, asked_by="benchmark")
    calibration = entry.calibration
    found = None if calibration is None else calibration.roles.get("choice")
    if not isinstance(found, TemperatureMap):
        raise SystemExit("the shipped entry has no temperature map for a choice: nothing to copy")
    return found.temperature


def _model() -> Any:  # Any: sparrow's Decider
    import sparrow_decider

    return sparrow_decider.Decider.load()


_made: dict[str, Any] = {}


def _floor() -> Floor:
    """This worker's floor path (made once)."""
    if "floor" not in _made:
        worker_loop()
        _made["floor"] = Floor(_model(), SMALL, _temperature())
    found: Floor = _made["floor"]
    return found


async def _floor_way() -> Callable[[], Coroutine[Any, Any, object]]:
    return _floor().call


def _at_once(
    block: int, make: Callable[[], Callable[[], Coroutine[Any, Any, object]]]
) -> Callable[[int], float]:
    """``loops`` blocks of ``block`` calls of ``make()``, each block made a task a call at once
    and gathered."""

    def time_func(loops: int) -> float:
        loop = worker_loop()
        call = make()

        async def blocks() -> float:
            started = time.perf_counter()
            for _ in range(loops):
                await asyncio.gather(*[loop.create_task(call()) for _ in range(block)])
            return time.perf_counter() - started

        return loop.run_until_complete(blocks())

    return time_func


def _bare_task() -> Callable[[], Coroutine[Any, Any, object]]:
    floor = _floor()
    model, state, questions = floor.model, floor.state, floor.questions

    async def asked() -> object:
        return model.ask(state, questions)

    return asked


WAYS = (
    "model",
    "floor",
    "harness",
    "floor, at once",
    "harness, at once",
    "a bare task a call, at once",
)


def own_options(parser: argparse.ArgumentParser) -> None:
    """The script's own options (pyperf's are its own: --fast, --rigorous, -p, -n, -l, -o)."""
    parser.add_argument("--block", type=int, default=100, help="calls submitted at once")
    parser.add_argument("--breakdown", action="store_true", help="break the floor path down")
    parser.add_argument("--breakdown-calls", type=int, default=500, help="calls profiled")


def main() -> None:
    """Run every way as a pyperf benchmark; in the main process, print and write the ratios."""
    load = os.getloadavg()[0]
    perf, options = runner(own_options, ("block",), processes=6, values=3)
    block = options.block
    floor = _floor()
    means = Means()
    means.add("model", perf.bench_func("model", floor.model.ask, floor.state, floor.questions))
    means.add("floor", perf.bench_time_func("floor", timed_async(_floor_way)))
    means.add("harness", perf.bench_time_func("harness", timed_async(harness_way(SMALL))))
    means.add(
        "floor, at once",
        perf.bench_time_func(
            "floor, at once", _at_once(block, lambda: _floor().job), inner_loops=block
        ),
    )
    means.add(
        "harness, at once",
        perf.bench_time_func("harness, at once", submitted(SMALL, block), inner_loops=block),
    )
    means.add(
        "a bare task a call, at once",
        perf.bench_time_func(
            "a bare task a call, at once", _at_once(block, _bare_task), inner_loops=block
        ),
    )
    finish()  # the worker's loop and what it holds, closed
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    report(options, floor, means, load)


def report(options: argparse.Namespace, floor: Floor, means: Means, load: float) -> None:
    """Print the ratios of the means and write the results."""
    model_s, floor_s, harness_s = means["model"], means["floor"], means["harness"]
    floor_own = (floor_s - model_s) / model_s
    harness_own = (harness_s - model_s) / model_s
    rate = 1 / model_s
    rates = {name: 1 / means[name] for name in WAYS[3:]}
    parts: dict[str, float] | None = None
    if options.breakdown:
        parts = asyncio.run(_profiled(floor, options.breakdown_calls))
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print("latency, medians of pyperf's values:")
    print(f"  sparrow-decider directly : {model_s * 1e6:8.1f} µs")
    print(f"  the floor path           : {floor_s * 1e6:8.1f} µs")
    print(f"  through harness          : {harness_s * 1e6:8.1f} µs")
    print(
        f"  own time / the model's   : floor {floor_own:.3f}, harness {harness_own:.3f} "
        f"(target <= {LATENCY_TARGET})"
    )
    print(f"throughput, blocks of {options.block} calls at once (target >= {THROUGHPUT_TARGET}):")
    print(f"  sparrow-decider in a loop: {rate:8.0f} decisions/s")
    for name, found in rates.items():
        print(f"  {name:<27}: {found:8.0f} decisions/s = {found / rate:.3f}")
    if parts is not None:
        print_breakdown("the floor path, one call after another", parts, floor_s * 1e6)
    baseline = "sparrow-decider asked directly, the same run"
    plain = "sparrow-decider in a plain loop"
    write(
        options.json,
        "floor",
        conditions(
            {
                "block": options.block,
                "processes": options.processes,
                "values": options.values,
                "loops": options.loops,
            },
            load,
        ),
        {
            "model_us": round(model_s * 1e6, 2),
            "floor_us": round(floor_s * 1e6, 2),
            "harness_us": round(harness_s * 1e6, 2),
            "model_rate_per_s": round(rate, 2),
            "floor_rate_per_s": round(rates["floor, at once"], 2),
            "harness_rate_per_s": round(rates["harness, at once"], 2),
            "tasks_rate_per_s": round(rates["a bare task a call, at once"], 2),
            "values": dict(means.values),
            "stdev_us": {name: round(spread * 1e6, 3) for name, spread in means.spread.items()},
        },
        [
            target(
                "the floor path's own time / the model's", floor_own, LATENCY_TARGET, "<=", baseline
            ),
            target("harness's own time / the model's", harness_own, LATENCY_TARGET, "<=", baseline),
            target(
                "the floor path's rate / the model's serial rate",
                rates["floor, at once"] / rate,
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
            target(
                "harness's rate / the model's serial rate",
                rates["harness, at once"] / rate,
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
            target(
                "a bare task a call: rate / the model's serial rate",
                rates["a bare task a call, at once"] / rate,
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
        ],
        parts,
    )


async def _profiled(floor: Floor, calls: int) -> dict[str, float]:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        await floor.call()
    profiler.disable()
    return breakdown(profiler, calls)


if __name__ == "__main__":
    main()

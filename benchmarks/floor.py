"""The contract's floor: the least any code keeping issue 26's contract can add to the embedded
model, measured beside harness in the same run.

``embedded.py`` asks whether harness's own time is at most 0.2 of the model's (latency) and
whether its rate is at least 0.95 of the model's serial rate (throughput). When a target is
missed, the question is whether harness's design misses it or the contract itself does. This
script answers that with a **floor path**: the same small request (a three-option choice)
through the least code that does what the contract requires of every call, written by hand in
plain asyncio for this one request and entry, with nothing general about it:

* a call submitted among many runs as a task of its own (a job can be awaited and cancelled
  on its own: the throughput path); a call awaited alone runs in the awaiting task, which
  cancels it by being cancelled (the latency path; harness's ``Dispatcher.run`` does the same
  with a decision call since issue 26's fourth round: before it, this path made a task too);
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

Three ways, interleaved per round in rotating order (``--rounds``, medians): sparrow-decider
asked directly (the baseline), the floor path, and harness's ``DecisionCall`` through a
``Dispatcher``. Then throughput: ``--calls`` calls each way (default 2,000) in interleaved blocks of
``--block`` (default 100; ``benchmarks/_blocks.py``): the model in a plain loop, the floor path's
and harness's calls each block submitted at once, and the model asked in a bare task a call
(``create_task`` and ``gather``, nothing else of the contract): what the task per submitted job
alone costs.

A script, not a test: ``python benchmarks/floor.py [--rounds 300] [--calls 500]``;
``--json FILE`` writes the results (``benchmarks/_results.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import itertools
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _blocks import interleaved
from _breakdown import breakdown, print_breakdown
from _results import conditions, target, write
from embedded import LATENCY_TARGET, SMALL, THROUGHPUT_TARGET

from harness.catalog import TemperatureMap, default_catalog
from harness.decision import Choice, DecisionRequest, systemone
from harness.jobs import Dispatcher
from harness.thinker import DecisionCall
from harness.tools import Workflow

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
        self.body_length = len(json.dumps(body, separators=(",", ":")).encode())
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


async def _timed(
    way: Callable[[], Coroutine[Any, Any, object]] | Callable[[], object],
) -> tuple[float, float]:
    cpu = time.process_time()
    started = time.perf_counter()
    result = way()
    if asyncio.iscoroutine(result):
        await result
    return time.perf_counter() - started, time.process_time() - cpu


async def measure(options: argparse.Namespace) -> dict[str, object]:
    import sparrow_decider

    load = os.getloadavg()[0]
    request = SMALL
    model = sparrow_decider.Decider.load()
    floor = Floor(model, request, _temperature())
    state, questions = floor.state, floor.questions
    workflow = Workflow()
    parts: dict[str, float] | None = None
    async with Dispatcher(default_catalog()) as dispatcher:

        def direct() -> object:
            return model.ask(state, questions)

        async def harness() -> object:
            response = await dispatcher.run(DecisionCall(workflow, request))
            if not response.success:
                raise SystemExit(f"a harness call failed: {response.failure}")
            return response

        ways: list[Callable[[], Any]] = [direct, floor.call, harness]
        wall: list[list[float]] = [[], [], []]
        cpu: list[list[float]] = [[], [], []]
        warm = min(30, options.rounds)
        for round_ in range(options.rounds + warm):
            for index in range(3):
                way = (round_ + index) % 3
                elapsed, spent = await _timed(ways[way])
                if round_ >= warm:
                    wall[way].append(elapsed)
                    cpu[way].append(spent)
        medians = [statistics.median(times) for times in wall]
        cpu_medians = [statistics.median(times) for times in cpu]

        def loop_of_direct(count: int) -> None:
            for _ in range(count):
                model.ask(state, questions)

        async def asked(_: int) -> None:
            model.ask(state, questions)

        async def tasks_at_once(count: int) -> None:
            loop = asyncio.get_running_loop()  # a task a call and nothing else of the contract
            await asyncio.gather(*[loop.create_task(asked(0)) for _ in range(count)])

        async def floor_at_once(count: int) -> None:
            loop = asyncio.get_running_loop()  # one task a call, as dispatcher.submit makes
            await asyncio.gather(*[loop.create_task(floor.job()) for _ in range(count)])

        async def harness_at_once(count: int) -> None:
            handles = [dispatcher.submit(DecisionCall(workflow, request)) for _ in range(count)]
            await asyncio.gather(*(h.result() for h in handles))

        rates = await interleaved(
            [
                ("direct", loop_of_direct),
                ("floor", floor_at_once),
                ("harness", harness_at_once),
                ("tasks", tasks_at_once),
            ],
            options.calls,
            options.block,
        )
        if options.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(options.calls):
                await floor.call()
            profiler.disable()
            parts = breakdown(profiler, options.calls)

    model_s, floor_s, harness_s = medians
    model_cpu, floor_cpu, harness_cpu = cpu_medians
    floor_own = (floor_s - model_s) / model_s
    harness_own = (harness_s - model_s) / model_s
    print(f"load average: {load:.2f} on {os.cpu_count()} CPUs")
    print(f"latency, median of {options.rounds} interleaved rounds (wall, CPU):")
    print(f"  sparrow-decider directly : {model_s * 1e6:8.1f} µs {model_cpu * 1e6:8.1f} µs")
    print(f"  the floor path           : {floor_s * 1e6:8.1f} µs {floor_cpu * 1e6:8.1f} µs")
    print(f"  through harness          : {harness_s * 1e6:8.1f} µs {harness_cpu * 1e6:8.1f} µs")
    print(
        f"  own time / the model's   : floor {floor_own:.3f}, harness {harness_own:.3f} "
        f"(target <= {LATENCY_TARGET})"
    )
    print(f"throughput, interleaved blocks of {options.block} calls each way:")
    print(f"  sparrow-decider in a loop: {rates.rate(0):8.0f} decisions/s")
    print(f"  the floor path, at once  : {rates.rate(1):8.0f} decisions/s = {rates.describe(1)}")
    print(f"  harness, at once         : {rates.rate(2):8.0f} decisions/s = {rates.describe(2)}")
    print(f"  a bare task a call       : {rates.rate(3):8.0f} decisions/s = {rates.describe(3)}")
    print(f"  (target >= {THROUGHPUT_TARGET})")
    if parts is not None:
        print_breakdown("the floor path, one call after another", parts, floor_cpu * 1e6)
    baseline = "sparrow-decider asked directly, interleaved"
    plain = "sparrow-decider in a plain loop"
    return {
        "conditions": conditions(
            {"rounds": options.rounds, "calls": options.calls, "block": options.block}, load
        ),
        "figures": {
            "model_us": round(model_s * 1e6, 2),
            "floor_us": round(floor_s * 1e6, 2),
            "harness_us": round(harness_s * 1e6, 2),
            "model_cpu_us": round(model_cpu * 1e6, 2),
            "floor_cpu_us": round(floor_cpu * 1e6, 2),
            "harness_cpu_us": round(harness_cpu * 1e6, 2),
            "model_rate_per_s": round(rates.rate(0), 2),
            "floor_rate_per_s": round(rates.rate(1), 2),
            "harness_rate_per_s": round(rates.rate(2), 2),
            **rates.figures(1, "floor"),
            **rates.figures(2, "harness"),
            "tasks_rate_per_s": round(rates.rate(3), 2),
            **rates.figures(3, "tasks"),
        },
        "targets": [
            target(
                "the floor path's own time / the model's", floor_own, LATENCY_TARGET, "<=", baseline
            ),
            target("harness's own time / the model's", harness_own, LATENCY_TARGET, "<=", baseline),
            target(
                "the floor path's rate / the model's serial rate",
                rates.ratio(1),
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
            target(
                "harness's rate / the model's serial rate",
                rates.ratio(2),
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
            target(
                "a bare task a call: rate / the model's serial rate",
                rates.ratio(3),
                THROUGHPUT_TARGET,
                ">=",
                plain,
            ),
        ],
        "breakdown": parts,
    }


def main() -> None:
    """Parse the options and measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--calls", type=int, default=2000, help="throughput calls each way")
    parser.add_argument("--block", type=int, default=100, help="calls a throughput block")
    parser.add_argument("--profile", action="store_true", help="break the floor path down")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    options = parser.parse_args()
    found = asyncio.run(measure(options))
    write(
        options.json,
        "floor",
        found["conditions"],  # type: ignore[arg-type]  # built by measure
        found["figures"],  # type: ignore[arg-type]  # built by measure
        found["targets"],  # type: ignore[arg-type]  # built by measure
        found["breakdown"],  # type: ignore[arg-type]  # built by measure
    )


if __name__ == "__main__":
    main()

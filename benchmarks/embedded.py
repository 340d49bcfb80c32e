"""What harness adds to the embedded model: the reference benchmark of harness's two targets on
it, with the contract's floor beside.

* **latency**: harness's own time per awaited decision (one ``DecisionCall`` through a
  :class:`~harness.jobs.Dispatcher` on the default catalog, less sparrow-decider asked directly on
  the same wire shapes), over the model's time. Target: at most 0.2.
* **throughput**: ``--block`` calls (default 100) submitted at once through the dispatcher and
  gathered, their rate over the model's rate in a plain loop. Target: at least 0.95.

Every way answers the same small request (a three-option choice over a one-line state;
``--request mixed`` adds a described noul and a three-level score). Beside the targets, in the
same rounds and never as a target: the contract's floor (``_floor.py``: the least code keeping
harness's contract, by hand for this one request) awaited and submitted at once, a bare task a
call around the model (what a task per submitted job costs alone), harness's own CPU time by the
process's clock, and harness with the model's answer canned (its path with its caches warm).

How it measures. ``--runs`` fresh processes (default 10), one after another; each warms every way
up, then times ``--rounds`` rounds (default 12) of every way, ``--calls`` calls a way (default
200), in an order reversed every round, and takes each ratio **within a round** from ways timed
next to each other: a load that comes and goes, or the model's speed drifting, moves both sides
of a ratio alike. A process's figure is the median of its rounds; the printed figure is the
median of the processes' figures with a 95 % interval that assumes nothing of their spread, and
the verdict comes from the interval (``_campaign.py``: ``met`` only when the interval's worse end
meets the target, never on a loaded machine). The processes differ in memory layout and in how
harness and the model share the CPU's caches, which moves a ratio more than anything within a
process: the interval spans processes, so a lucky one cannot carry the verdict.

``--breakdown`` profiles harness's calls by part after the runs (``_breakdown.py``);
``--json FILE`` writes the results (``_results.py``: conditions, figures, targets with their
intervals and verdicts).

A script, not a test: ``python benchmarks/embedded.py [--runs 10] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _breakdown import breakdown, print_breakdown
from _campaign import Machine, row_text, spread, summed
from _floor import Floor, model, temperature
from _results import measured, write

from harness.catalog import default_catalog
from harness.decision import (
    Choice,
    DecisionRequest,
    Noul,
    Score,
    systemone,
)
from harness.jobs import Dispatcher
from harness.thinker import DecisionCall
from harness.tools import Workflow

LATENCY_TARGET = 0.2
THROUGHPUT_TARGET = 0.95

SMALL = DecisionRequest(
    "User: I was charged twice for my subscription this month and want the extra charge back.",
    {
        "intent": Choice(
            "What does the user want?",
            {
                "billing": "charges, invoices, refunds",
                "bug": "a feature is broken",
                "account": "login, profile, settings",
            },
        )
    },
)
MIXED = DecisionRequest(
    SMALL.state,
    {
        **SMALL.questions,
        "refund": Noul(
            "Is the user asking for money back?",
            when_true="the user wants a refund",
            when_false="the user wants something else",
        ),
        "urgency": Score("How urgent is it?", ("not urgent", "soon", "now")),
    },
)

LATENCY = "harness's own time / the model's"
THROUGHPUT = "dispatcher rate / the model's serial rate"
TARGETS: dict[str, tuple[float, str, str]] = {
    LATENCY: (LATENCY_TARGET, "<=", "sparrow-decider asked directly, the same rounds"),
    THROUGHPUT: (THROUGHPUT_TARGET, ">=", "sparrow-decider in a plain loop, the same rounds"),
}
"""The targets: limit, direction, baseline."""

BESIDE = (
    "harness's own CPU / the model's",
    "the floor's own time / the model's",
    "the floor's rate / the model's serial rate",
    "a bare task a call: rate / the model's serial rate",
)
"""Ratios measured in the same rounds and shown beside the targets, never as one."""

WAYS = ("model", "harness", "floor", "dispatcher", "floor, at once", "bare task", "canned")
"""Every way a round times, in its first order (the next round reverses it)."""

AT_ONCE = frozenset({"dispatcher", "floor, at once", "bare task"})
"""The ways that submit ``--block`` calls at once."""


def direct_call(request: DecisionRequest) -> Callable[[], Mapping[str, object]]:
    """sparrow-decider asked directly, on the request's System One wire shapes."""
    import sparrow_decider

    decider = sparrow_decider.Decider.load()
    body = systemone.encode_request(request, "sparrow-decider")
    state, questions = body["state"], body["questions"]
    assert isinstance(questions, dict)

    def ask() -> Mapping[str, object]:
        answers: Mapping[str, object] = decider.ask(state, questions)
        return answers

    return ask


@contextlib.contextmanager
def canned(reply: Mapping[str, object]) -> Iterator[None]:
    """The embedded client's model answers ``reply`` at once while the block runs."""
    from harness.providers import _embedded

    real = _embedded._ask
    _embedded._ask = lambda model, entry, body: dict(reply)
    try:
        yield
    finally:
        _embedded._ask = real


def requested(name: str) -> DecisionRequest:
    """The request ``--request`` names."""
    return MIXED if name == "mixed" else SMALL


Timed = tuple[float, float]
"""A way's seconds a call in one round: wall clock, process CPU clock."""


class Ways:
    """Every way of one process, on one event loop, each timed by :meth:`time`."""

    def __init__(self, request: DecisionRequest, calls: int, block: int) -> None:
        self.request = request
        self.calls = calls
        self.block = block
        self.blocks = max(1, calls // block)
        self.ask = direct_call(request)
        self.reply = {"model": "sparrow", "answers": self.ask(), "usage": {}}
        self.floor = Floor(model(), SMALL, temperature()) if request is SMALL else None
        self.workflow = Workflow()
        self.dispatcher = Dispatcher(default_catalog())

    async def open(self) -> None:
        await self.dispatcher.__aenter__()

    async def close(self) -> None:
        await self.dispatcher.aclose()

    async def _harness(self) -> None:
        dispatcher, workflow, request = self.dispatcher, self.workflow, self.request
        for _ in range(self.calls):
            response = await dispatcher.run(DecisionCall(workflow, request))
            if not response.success:
                raise SystemExit(f"a harness call failed: {response.failure}")

    async def _model(self) -> None:
        ask = self.ask
        for _ in range(self.calls):
            ask()

    async def _canned(self) -> None:
        with canned(self.reply):
            await self._harness()

    async def _dispatcher(self) -> None:
        dispatcher, workflow, request = self.dispatcher, self.workflow, self.request
        for _ in range(self.blocks):
            handles = [
                dispatcher.submit(DecisionCall(workflow, request)) for _ in range(self.block)
            ]
            responses = await asyncio.gather(*(h.result() for h in handles))
            if not all(r.success for r in responses):
                raise SystemExit("a harness call failed: the figures are void")

    async def _floor(self) -> None:
        assert self.floor is not None
        call = self.floor.call
        for _ in range(self.calls):
            await call()

    async def _at_once(self, make: Callable[[], Coroutine[Any, Any, object]]) -> None:
        loop = asyncio.get_running_loop()
        for _ in range(self.blocks):
            await asyncio.gather(*[loop.create_task(make()) for _ in range(self.block)])

    async def _floor_at_once(self) -> None:
        assert self.floor is not None
        await self._at_once(self.floor.job)

    async def _bare(self) -> None:
        ask = self.ask

        async def asked() -> object:
            return ask()

        await self._at_once(asked)

    def runnable(self) -> dict[str, Callable[[], Awaitable[None]]]:
        """The ways this request has (the floor path is written for the small request only)."""
        ways: dict[str, Callable[[], Awaitable[None]]] = {
            "model": self._model,
            "harness": self._harness,
            "floor": self._floor,
            "dispatcher": self._dispatcher,
            "floor, at once": self._floor_at_once,
            "bare task": self._bare,
            "canned": self._canned,
        }
        if self.floor is None:
            del ways["floor"], ways["floor, at once"]
        return ways

    async def time(self, way: str) -> Timed:
        """``way``'s seconds a call: wall clock and process CPU clock."""
        run = self.runnable()[way]
        many = self.blocks * self.block if way in AT_ONCE else self.calls
        wall, cpu = time.perf_counter(), time.process_time()
        await run()
        return (time.perf_counter() - wall) / many, (time.process_time() - cpu) / many


def round_ratios(t: Mapping[str, Timed]) -> dict[str, float]:
    """One round's ratios, each from ways timed in that round."""
    model, model_cpu = t["model"]
    found = {
        LATENCY: (t["harness"][0] - model) / model,
        THROUGHPUT: model / t["dispatcher"][0],
        BESIDE[0]: (t["harness"][1] - model_cpu) / model_cpu,
        BESIDE[3]: model / t["bare task"][0],
    }
    if "floor" in t:
        found[BESIDE[1]] = (t["floor"][0] - model) / model
        found[BESIDE[2]] = model / t["floor, at once"][0]
    return found


async def measure(
    request: DecisionRequest, rounds: int, calls: int, block: int
) -> dict[str, object]:
    """One process's rounds: per round, each way's µs a call and each ratio."""
    ways = Ways(request, calls, block)
    await ways.open()
    try:
        order = list(ways.runnable())
        for way in order:  # warm-up: every way once, discarded
            await ways.time(way)
        micros: dict[str, list[float]] = {way: [] for way in order}
        ratios: dict[str, list[float]] = {}
        for k in range(rounds):
            timed = {way: await ways.time(way) for way in (order if k % 2 == 0 else order[::-1])}
            for way, (wall, _) in timed.items():
                micros[way].append(wall * 1e6)
            for name, value in round_ratios(timed).items():
                ratios.setdefault(name, []).append(value)
        return {"micros": micros, "ratios": ratios}
    finally:
        await ways.close()


async def profiled(request: DecisionRequest, calls: int) -> tuple[dict[str, float], float]:
    """The breakdown of ``calls`` harness calls one after another (model included), and their
    unprofiled CPU a call in microseconds, measured just before."""
    workflow = Workflow()
    async with Dispatcher(default_catalog()) as dispatcher:
        for _ in range(min(50, calls)):
            await dispatcher.run(DecisionCall(workflow, request))
        cpu = time.process_time()
        for _ in range(calls):
            await dispatcher.run(DecisionCall(workflow, request))
        cpu = time.process_time() - cpu
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            await dispatcher.run(DecisionCall(workflow, request))
        profiler.disable()
    return breakdown(profiler, calls), cpu / calls * 1e6


def one_process(options: argparse.Namespace) -> dict[str, object]:
    """Run :func:`measure` in a fresh process of this script; what it found."""
    command = [
        sys.executable,
        __file__,
        "--worker",
        *("--request", options.request),
        *("--rounds", str(options.rounds)),
        *("--calls", str(options.calls)),
        *("--block", str(options.block)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise SystemExit(
            f"a run of benchmarks/embedded.py failed (exit {done.returncode}): {said[0]}"
        )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh processes (default 10)")
    parser.add_argument("--rounds", type=int, default=12, help="rounds a process (default 12)")
    parser.add_argument("--calls", type=int, default=200, help="calls a way a round (default 200)")
    parser.add_argument("--block", type=int, default=100, help="calls submitted at once")
    parser.add_argument("--request", choices=("small", "mixed"), default="small")
    parser.add_argument("--breakdown", action="store_true", help="break harness's calls down")
    parser.add_argument("--breakdown-calls", type=int, default=500, help="calls profiled")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    for name in ("runs", "rounds", "calls", "block"):
        if getattr(options, name) < 1:
            parser.error(f"--{name} must be at least 1")
    request = requested(options.request)
    if options.worker:
        print(
            json.dumps(asyncio.run(measure(request, options.rounds, options.calls, options.block)))
        )
        return 0
    machine = Machine(busy=1.0)
    processes = []
    for run in range(options.runs):
        processes.append(one_process(options))
        print(f"run {run + 1} of {options.runs} done", file=sys.stderr, flush=True)
    machine.stop()
    report(options, request, processes, machine)
    return 0


def _medians(processes: list[dict[str, object]], key: str) -> dict[str, list[float]]:
    """Each process's median of its rounds, by name, for the ``key`` part of its findings."""
    found: dict[str, list[float]] = {}
    for process in processes:
        part = process[key]
        assert isinstance(part, dict)
        for name, values in part.items():
            found.setdefault(name, []).append(statistics.median(values))
    return found


def report(
    options: argparse.Namespace,
    request: DecisionRequest,
    processes: list[dict[str, object]],
    machine: Machine,
) -> None:
    """Print the targets and what is beside them, and write the results."""
    ratios, micros = _medians(processes, "ratios"), _medians(processes, "micros")
    loaded = machine.loaded
    rows = [
        {**summed(name, ratios[name], limit, direction, loaded), "baseline": baseline}
        for name, (limit, direction, baseline) in TARGETS.items()
    ]
    beside = [spread(name, ratios[name]) for name in BESIDE if name in ratios]
    us = {way: statistics.median(values) for way, values in micros.items()}
    parts: dict[str, float] | None = None
    cpu_us = 0.0
    if options.breakdown:
        parts, cpu_us = asyncio.run(profiled(request, options.breakdown_calls))
    print(machine.line())
    print(
        f"request: {options.request} ({len(request.questions)} question(s)); {options.runs} "
        f"processes x {options.rounds} rounds x {options.calls} calls a way; "
        "medians of the processes, 95 % interval of the median"
    )
    print(
        f"  a call, µs: model {us['model']:.1f}, harness {us['harness']:.1f}, "
        f"harness with the model canned {us['canned']:.1f}"
        + (f", the floor {us['floor']:.1f}" if "floor" in us else "")
    )
    for row in rows:
        print("  " + row_text(row))
    print("  beside (no target):")
    for row in beside:
        median, low, high = row["median"], row["interval_low"], row["interval_high"]
        interval = "" if low is None else f" [{low:.3f}, {high:.3f}]"
        print(f"    {row['name']:<52} {median:.3f}{interval}")
    if parts is not None:
        print_breakdown("harness calls, one after another", parts, cpu_us)
    figures: dict[str, object] = {
        f"{way.replace(', ', '_').replace(' ', '_')}_us": round(value, 3)
        for way, value in us.items()
    }
    figures["model_rate_per_s"] = round(1e6 / us["model"], 2)
    figures["dispatcher_rate_per_s"] = round(1e6 / us["dispatcher"], 2)
    figures["beside"] = beside
    sizes = {
        "runs": options.runs,
        "rounds": options.rounds,
        "calls": options.calls,
        "block": options.block,
        "request": options.request,
    }
    write(options.json, "embedded", measured(sizes, machine), figures, rows, parts)


if __name__ == "__main__":
    raise SystemExit(main())

"""What harness adds to the embedded model: its call against sparrow-decider called directly.

Every way answers the same small request (a three-option choice over a one-line state;
``--request mixed`` adds a described noul and a three-level score), each a pyperf benchmark in
the same run (``benchmarks/_perf.py``: calibrated loops, worker processes, warm-ups):

* **model**: ``Decider.ask`` on the request's wire shapes, one call after another;
* **harness**: one ``DecisionCall`` through a :class:`~harness.jobs.Dispatcher` on the default
  catalog (the embedded entry: resolution, pricing, admission, the worker handoff, encoding and
  decoding, validation, calibration, the job's record), awaited one after another; harness's own
  time is its mean less the model's. Target: at most 0.2 of the model's time;
* **model (CPU)**, **harness (CPU)**: the same, timed by the process's CPU clock, which another
  process on a loaded machine does not add to;
* **dispatcher**: ``--block`` calls (default 100) submitted at once and gathered, a call's mean
  time. Target: a rate at least 0.95 of the model's serial rate;
* **harness, model canned**: harness's whole path with the model's answer canned (its own time
  with its caches warm; in a real call the model's run evicts them).

``--breakdown`` profiles harness's calls by part after the benchmarks
(``benchmarks/_breakdown.py``); ``--json FILE`` writes the results (``benchmarks/_results.py``);
``-o FILE`` pyperf's, for ``python -m pyperf compare_to``.

A script, not a test: ``python benchmarks/embedded.py [--fast | --rigorous] [-o now.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import sys
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _breakdown import breakdown, print_breakdown
from _perf import Means, closing, finish, runner, timed_async, worker_loop
from _results import conditions, target, write

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


def direct_call(request: DecisionRequest) -> Callable[[], Mapping[str, object]]:
    """sparrow-decider asked directly, on the request's System One wire shapes."""
    import sparrow_decider

    model = sparrow_decider.Decider.load()
    body = systemone.encode_request(request, "sparrow-decider")
    state, questions = body["state"], body["questions"]
    assert isinstance(questions, dict)

    def ask() -> Mapping[str, object]:
        answers: Mapping[str, object] = model.ask(state, questions)
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


def requested(options: argparse.Namespace) -> DecisionRequest:
    """The request the options name."""
    return MIXED if options.request == "mixed" else SMALL


def harness_way(
    request: DecisionRequest,
) -> Callable[[], Coroutine[Any, Any, Callable[[], Coroutine[Any, Any, object]]]]:
    """A dispatcher on the default catalog, kept open in the worker, and one awaited call."""

    async def make() -> Callable[[], Coroutine[Any, Any, object]]:
        dispatcher = Dispatcher(default_catalog())
        await dispatcher.__aenter__()  # open for the worker's life
        closing(dispatcher.aclose)
        workflow = Workflow()

        async def call() -> object:
            response = await dispatcher.run(DecisionCall(workflow, request))
            if not response.success:
                raise SystemExit(f"a harness call failed: {response.failure}")
            return response

        return call

    return make


def cpu_of(way: Callable[[], object]) -> Callable[[int], float]:
    """A pyperf time function: ``loops`` calls of a plain ``way``, by the process's CPU clock."""

    def time_func(loops: int) -> float:
        started = time.process_time()
        for _ in range(loops):
            way()
        return time.process_time() - started

    return time_func


def harness_cpu(request: DecisionRequest) -> Callable[[int], float]:
    """The harness way timed by the process's CPU clock (the model's worker thread included)."""
    made: list[Callable[[], Coroutine[Any, Any, object]]] = []

    def time_func(loops: int) -> float:
        loop = worker_loop()
        if not made:
            made.append(loop.run_until_complete(harness_way(request)()))
        call = made[0]

        async def calls() -> float:
            started = time.process_time()
            for _ in range(loops):
                await call()
            return time.process_time() - started

        return loop.run_until_complete(calls())

    return time_func


def submitted(request: DecisionRequest, block: int) -> Callable[[int], float]:
    """``loops`` blocks of ``block`` calls, each block submitted at once and gathered."""
    made: list[Dispatcher] = []
    workflow = Workflow()

    def time_func(loops: int) -> float:
        loop = worker_loop()
        if not made:
            dispatcher = Dispatcher(default_catalog())
            loop.run_until_complete(dispatcher.__aenter__())
            closing(dispatcher.aclose)
            made.append(dispatcher)
        dispatcher = made[0]

        async def blocks() -> float:
            started = time.perf_counter()
            for _ in range(loops):
                handles = [dispatcher.submit(DecisionCall(workflow, request)) for _ in range(block)]
                responses = await asyncio.gather(*(h.result() for h in handles))
                if not all(r.success for r in responses):
                    raise SystemExit("a harness call failed: the figures are void")
            return time.perf_counter() - started

        return loop.run_until_complete(blocks())

    return time_func


def canned_way(
    request: DecisionRequest,
) -> Callable[[], Coroutine[Any, Any, Callable[[], Coroutine[Any, Any, object]]]]:
    """The harness way with the model's answer canned for the worker's life."""

    async def make() -> Callable[[], Coroutine[Any, Any, object]]:
        from harness.providers import _embedded

        reply = {"model": "sparrow", "answers": direct_call(request)(), "usage": {}}
        _embedded._ask = lambda model, entry, body: dict(reply)  # this worker only
        return await harness_way(request)()

    return make


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


WAYS = ("model", "harness", "model (CPU)", "harness (CPU)", "dispatcher", "harness, model canned")


def own_options(parser: argparse.ArgumentParser) -> None:
    """The script's own options (pyperf's are its own: --fast, --rigorous, -p, -n, -l, -o)."""
    parser.add_argument("--block", type=int, default=100, help="calls submitted at once")
    parser.add_argument("--request", choices=("small", "mixed"), default="small")
    parser.add_argument("--breakdown", action="store_true", help="break harness's calls down")
    parser.add_argument("--breakdown-calls", type=int, default=500, help="calls profiled")


def main() -> None:
    """Run every way as a pyperf benchmark; in the main process, print and write the ratios."""
    load = os.getloadavg()[0]
    perf, options = runner(own_options, ("block", "request"), processes=6, values=3)
    request = requested(options)
    ask = direct_call(request)
    means = Means()
    means.add("model", perf.bench_func("model", ask))
    means.add("harness", perf.bench_time_func("harness", timed_async(harness_way(request))))
    means.add("model (CPU)", perf.bench_time_func("model (CPU)", cpu_of(ask)))
    means.add("harness (CPU)", perf.bench_time_func("harness (CPU)", harness_cpu(request)))
    means.add(
        "dispatcher",
        perf.bench_time_func(
            "dispatcher", submitted(request, options.block), inner_loops=options.block
        ),
    )
    means.add(
        "harness, model canned",
        perf.bench_time_func("harness, model canned", timed_async(canned_way(request))),
    )
    finish()  # the worker's loop and what it holds, closed
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    report(options, request, means, load)


def report(
    options: argparse.Namespace, request: DecisionRequest, means: Means, load: float
) -> None:
    """Print the ratios of the means and write the results."""
    model, harness = means["model"], means["harness"]
    model_cpu, harness_cpu_s = means["model (CPU)"], means["harness (CPU)"]
    own, own_cpu = harness - model, harness_cpu_s - model_cpu
    rate, dispatcher_rate = 1 / model, 1 / means["dispatcher"]
    ratio = dispatcher_rate / rate
    parts: dict[str, float] | None = None
    cpu_us = 0.0
    if options.breakdown:
        parts, cpu_us = asyncio.run(profiled(request, options.breakdown_calls))
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    asked = len(request.questions)
    print(f"request: {options.request} ({asked} question(s)); medians of pyperf's values")
    print(f"  sparrow-decider directly : {model * 1e6:9.1f} µs  CPU {model_cpu * 1e6:9.1f} µs")
    print(
        f"  through harness          : {harness * 1e6:9.1f} µs  CPU {harness_cpu_s * 1e6:9.1f} µs"
    )
    verdict = "meets" if own <= LATENCY_TARGET * model else "misses"
    print(
        f"  harness's own time       : {own * 1e6:9.1f} µs = {own / model:.3f} of the model's "
        f"({verdict} <= {LATENCY_TARGET}); CPU {own_cpu / model_cpu:.3f}"
    )
    canned = means["harness, model canned"]
    print(f"  harness, model canned    : {canned * 1e6:9.1f} µs (its caches warm)")
    verdict = "meets" if ratio >= THROUGHPUT_TARGET else "misses"
    print(f"throughput, blocks of {options.block} calls submitted at once:")
    print(f"  sparrow-decider in a loop: {rate:9.0f} decisions/s")
    print(f"  through the dispatcher   : {dispatcher_rate:9.0f} decisions/s")
    print(f"  ratio: {ratio:.3f} ({verdict} >= {THROUGHPUT_TARGET})")
    if parts is not None:
        print_breakdown("harness calls, one after another", parts, cpu_us)
    figures: dict[str, object] = {
        "model_us": round(model * 1e6, 3),
        "harness_us": round(harness * 1e6, 3),
        "own_us": round(own * 1e6, 3),
        "model_cpu_us": round(model_cpu * 1e6, 3),
        "harness_cpu_us": round(harness_cpu_s * 1e6, 3),
        "own_cpu_us": round(own_cpu * 1e6, 3),
        "canned_us": round(canned * 1e6, 3),
        "model_rate_per_s": round(rate, 2),
        "dispatcher_rate_per_s": round(dispatcher_rate, 2),
        "values": dict(means.values),
        "stdev_us": {name: round(spread * 1e6, 3) for name, spread in means.spread.items()},
    }
    baseline = "sparrow-decider asked directly, the same run"
    write(
        options.json,
        "embedded",
        conditions(
            {
                "block": options.block,
                "request": options.request,
                "processes": options.processes,
                "values": options.values,
                "loops": options.loops,
            },
            load,
        ),
        figures,
        [
            target("harness's own time / the model's", own / model, LATENCY_TARGET, "<=", baseline),
            target(
                "harness's own CPU / the model's",
                own_cpu / model_cpu,
                LATENCY_TARGET,
                "<=",
                baseline,
            ),
            target(
                "dispatcher rate / the model's serial rate",
                ratio,
                THROUGHPUT_TARGET,
                ">=",
                "sparrow-decider in a plain loop",
            ),
        ],
        parts,
    )


if __name__ == "__main__":
    main()

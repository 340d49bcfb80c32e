"""What harness adds to the embedded model: its call against sparrow-decider called directly.

Both ways answer the same small request (a three-option choice over a one-line state, the
issue's "small request"; ``--request mixed`` adds a described noul and a three-level score), in
one run, interleaved so the machine's load falls on both alike:

* **latency**: ``--rounds`` rounds (default 200), each one direct ``Decider.ask`` on the wire
  shapes and one ``DecisionCall`` through a :class:`~harness.jobs.Dispatcher` on the default
  catalog (the embedded entry: resolution, pricing, admission, the worker handoff, encoding and
  decoding, validation, the job's record), in alternating order. Medians of each; harness's own
  time is the difference. Target: at most 0.2 of the model's own time.
* **throughput**: ``--calls`` calls each way (default 2,000), in interleaved blocks of
  ``--block`` (default 100): a block of direct calls in a plain loop, a block submitted at once
  through the dispatcher, in rotating order (``benchmarks/_blocks.py``: the rates over all
  blocks, their ratio with a 95 % interval over the rounds). Target: at least 0.95 of the
  model's own serial rate.
* **warmth**: harness's whole path with the model's answer canned, ``--rounds`` calls back to
  back and as many each right after the model ran: the model's run leaves the CPU's caches
  holding its own code and data, and harness's part of a real call pays for fetching its own
  again (about 2.5 times its time with warm caches on this machine).
* **pieces**: what each step of harness's path costs on this request (``timeit``), so the
  difference above can be read.

Each latency round also takes both ways' CPU time (``process_time``), whose medians are printed
beside the wall-clock ones: CPU time is what another process on a loaded machine does not add.
``--profile`` breaks harness's calls down by part (``benchmarks/_breakdown.py``); ``--json FILE``
writes the results (``benchmarks/_results.py``).

A script, not a test: ``python benchmarks/embedded.py [--rounds 200] [--calls 500]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import random
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _blocks import Blocks, interleaved
from _breakdown import breakdown, print_breakdown
from _results import conditions, target, write

from harness.catalog import CatalogEntry, default_catalog, tokenizer
from harness.decision import (
    Choice,
    DecisionRequest,
    DecisionResponse,
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


def own_ratio(direct: list[float], harness: list[float]) -> float:
    """harness's own time over the model's: the difference of the two medians, over the
    model's median."""
    model = statistics.median(direct)
    return (statistics.median(harness) - model) / model


def interval(
    direct: list[float], harness: list[float], resamples: int = 1000
) -> tuple[float, float]:
    """A 95 % interval of :func:`own_ratio` within this run: the rounds (a direct and a harness
    call each) resampled with replacement (a fixed seed, so the same times give the same
    interval). It says how well the run's rounds pin the ratio down, not how the machine will
    be in the next run: that moves more (docs/performance.md)."""
    pick = random.Random(0).choices
    indices = range(len(direct))
    ratios = []
    for _ in range(resamples):
        chosen = pick(indices, k=len(direct))
        ratios.append(own_ratio([direct[i] for i in chosen], [harness[i] for i in chosen]))
    ratios.sort()
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


async def latency(
    dispatcher: Dispatcher, request: DecisionRequest, rounds: int
) -> tuple[float, float, float, float, tuple[float, float]]:
    """Median seconds of one direct call and of one harness call, interleaved; then the medians
    of their CPU seconds (``process_time``) in the same rounds; then the 95 % interval of the
    own-time ratio (:func:`interval`)."""
    ask = direct_call(request)
    workflow = Workflow()
    direct: list[float] = []
    harness: list[float] = []
    direct_cpu: list[float] = []
    harness_cpu: list[float] = []
    warm = min(20, rounds)
    for round_ in range(rounds + warm):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for way in order:
            cpu = time.process_time()
            started = time.perf_counter()
            if way == 0:
                ask()
            else:
                response = await dispatcher.run(DecisionCall(workflow, request))
                if not response.success:
                    raise SystemExit(f"a harness call failed: {response.failure}")
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu
            if round_ >= warm:  # the first rounds warm caches, the pool and the model
                (direct if way == 0 else harness).append(elapsed)
                (direct_cpu if way == 0 else harness_cpu).append(cpu)
    return (
        statistics.median(direct),
        statistics.median(harness),
        statistics.median(direct_cpu),
        statistics.median(harness_cpu),
        interval(direct, harness),
    )


async def throughput(
    dispatcher: Dispatcher, request: DecisionRequest, calls: int, block: int
) -> Blocks:
    """Direct calls in a plain loop against the same number submitted at once through the
    dispatcher, in interleaved blocks of ``block`` (``benchmarks/_blocks.py``)."""
    ask = direct_call(request)
    workflow = Workflow()

    def direct(count: int) -> None:
        for _ in range(count):
            ask()

    async def submitted(count: int) -> None:
        handles = [dispatcher.submit(DecisionCall(workflow, request)) for _ in range(count)]
        responses = await asyncio.gather(*(h.result() for h in handles))
        if not all(r.success for r in responses):
            raise SystemExit("a harness call failed: the figures are void")

    return await interleaved([("direct", direct), ("dispatcher", submitted)], calls, block)


def pieces(request: DecisionRequest, number: int = 200) -> list[tuple[str, float]]:
    """Microseconds per call of each piece of harness's path, on fresh copies of the request."""
    entry = default_catalog().resolve_decision(None, asked_by="benchmark")
    counter = tokenizer(entry.tokenizer)
    body = systemone.encode_body(request, entry.wire_model_id)
    wire = systemone.encode_request(request, entry.wire_model_id)
    ask = direct_call(request)
    reply = {"model": "sparrow", "answers": ask(), "usage": {"input_tokens": 0}}

    def fresh() -> DecisionRequest:
        return DecisionRequest(request.state, dict(request.questions))

    loop = asyncio.new_event_loop()

    async def handoff() -> None:
        await loop.run_in_executor(None, int)

    figures = [
        ("encode the wire request (dict)", lambda: systemone.encode_request(fresh(), "x")),
        ("encode the wire body (bytes)", lambda: systemone.encode_body(fresh(), "x")),
        ("count the body (cl100k_base)", lambda: counter.count(body)),
        ("decode the reply", lambda: systemone.decode_reply(request, reply)),
        ("one worker-thread handoff", lambda: loop.run_until_complete(handoff())),
        ("the model itself", ask),
    ]
    out = []
    for name, fn in figures:
        best = min(timeit.repeat(fn, number=number, repeat=3)) / number
        out.append((name, best * 1e6))
    loop.close()
    del wire
    out.extend(asyncio.run(paths(request, reply, number * 10)))
    return out


class _Instant:
    """A decision client answering at once with a canned reply (decoded as the embedded one is)."""

    def __init__(self, reply: Mapping[str, object]) -> None:
        self.reply = reply

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        answers = systemone.decode_reply(request, self.reply).answers
        return DecisionResponse(request, answers, None, "canned", None, 0.0)

    async def aclose(self) -> None:
        return None


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


async def warmth(request: DecisionRequest, rounds: int) -> tuple[float, float]:
    """Median microseconds of a whole harness call with the model's answer canned: back to back
    (the CPU's caches hold harness's code and data), and each call right after the model ran
    (untimed), so the caches are as the model leaves them, as in a real call. The difference is
    what the model's run costs harness's own code: the reason harness's own time in a real call
    is larger than its canned path's."""
    ask = direct_call(request)
    reply = {"model": "sparrow", "answers": ask(), "usage": {"input_tokens": 0}}
    workflow = Workflow()
    medians = []
    with canned(reply):
        async with Dispatcher(default_catalog()) as dispatcher:
            for _ in range(min(200, rounds)):
                await dispatcher.run(DecisionCall(workflow, request))
            for after_model in (False, True):
                times = []
                for _ in range(rounds):
                    if after_model:
                        ask()
                    started = time.perf_counter()
                    await dispatcher.run(DecisionCall(workflow, request))
                    times.append(time.perf_counter() - started)
                medians.append(statistics.median(times) * 1e6)
    return medians[0], medians[1]


async def paths(
    request: DecisionRequest, reply: Mapping[str, object], number: int = 2000
) -> list[tuple[str, float]]:
    """Microseconds a call of harness's two layers with the model's own time taken out: the
    embedded client with the model's answer canned, and the dispatcher with an instant client."""
    from harness.providers import _embedded

    entry = default_catalog().resolve_decision(None, asked_by="benchmark")
    out = []
    with canned(reply):
        client = _embedded.EmbeddedDecisionClient()
        for _ in range(min(200, number)):
            await client.decide(request, entry)
        started = time.perf_counter()
        for _ in range(number):
            await client.decide(request, entry)
        out.append(("embedded client, model canned", (time.perf_counter() - started) / number))
        await client.aclose()
    async with Dispatcher(default_catalog(), clients={entry.id: _Instant(reply)}) as dispatcher:
        workflow = Workflow()
        for _ in range(min(200, number)):
            await dispatcher.run(DecisionCall(workflow, request))
        started = time.perf_counter()
        for _ in range(number):
            await dispatcher.run(DecisionCall(workflow, request))
        out.append(("dispatcher, instant client", (time.perf_counter() - started) / number))
    return [(name, seconds * 1e6) for name, seconds in out]


async def profiled(
    dispatcher: Dispatcher, request: DecisionRequest, calls: int
) -> tuple[dict[str, float], float]:
    """The breakdown of ``calls`` harness calls one after another (model included), and their
    unprofiled CPU a call in microseconds, measured just before."""
    workflow = Workflow()
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


async def measure(options: argparse.Namespace) -> dict[str, object]:
    load = os.getloadavg()[0]
    request = MIXED if options.request == "mixed" else SMALL
    parts: dict[str, float] | None = None
    async with Dispatcher(default_catalog()) as dispatcher:
        direct, harness, direct_cpu, harness_cpu, (low, high) = await latency(
            dispatcher, request, options.rounds
        )
        rates = await throughput(dispatcher, request, options.calls, options.block)
        if options.profile:
            parts, cpu_us = await profiled(dispatcher, request, options.calls)
    hot, after_model = await warmth(request, options.rounds)
    own = harness - direct
    own_cpu = harness_cpu - direct_cpu
    print(f"load average: {load:.2f} on {os.cpu_count()} CPUs")
    print(f"request: {options.request} ({len(request.questions)} question(s))")
    print(f"latency, median of {options.rounds} interleaved rounds (wall, CPU):")
    print(f"  sparrow-decider directly : {direct * 1e3:8.3f} ms {direct_cpu * 1e3:8.3f} ms")
    print(f"  through harness          : {harness * 1e3:8.3f} ms {harness_cpu * 1e3:8.3f} ms")
    verdict = "meets" if own <= LATENCY_TARGET * direct else "misses"
    print(
        f"  harness's own time       : {own * 1e3:8.3f} ms = {own / direct:.2f} of the model's "
        f"({verdict} <= {LATENCY_TARGET}); CPU {own_cpu * 1e3:.3f} ms = "
        f"{own_cpu / direct_cpu:.2f}"
    )
    print(f"  95 % interval of the ratio (these {options.rounds} rounds): {low:.3f}-{high:.3f}")
    ratio = rates.ratio(1)
    verdict = "meets" if ratio >= THROUGHPUT_TARGET else "misses"
    print(f"throughput, interleaved blocks of {options.block} calls each way:")
    print(f"  sparrow-decider in a loop: {rates.rate(0):8.0f} decisions/s")
    print(f"  dispatcher, each block at once: {rates.rate(1):8.0f} decisions/s")
    print(f"  ratio: {rates.describe(1)}; {verdict} >= {THROUGHPUT_TARGET}")
    print(f"harness's path, the model's answer canned, median of {options.rounds} calls:")
    print(f"  back to back (caches warm)       : {hot:8.1f} µs")
    print(f"  each right after the model ran   : {after_model:8.1f} µs = {after_model / hot:.2f}x")
    if parts is not None:
        print_breakdown("harness calls, one after another", parts, cpu_us)
    return {
        "conditions": conditions(
            {
                "rounds": options.rounds,
                "calls": options.calls,
                "block": options.block,
                "request": options.request,
            },
            load,
        ),
        "figures": {
            "model_ms": round(direct * 1e3, 4),
            "harness_ms": round(harness * 1e3, 4),
            "own_ms": round(own * 1e3, 4),
            "model_cpu_ms": round(direct_cpu * 1e3, 4),
            "harness_cpu_ms": round(harness_cpu * 1e3, 4),
            "own_cpu_ms": round(own_cpu * 1e3, 4),
            "model_rate_per_s": round(rates.rate(0), 2),
            "dispatcher_rate_per_s": round(rates.rate(1), 2),
            **rates.figures(1, "dispatcher"),
            "own_ratio_interval_low": round(low, 4),
            "own_ratio_interval_high": round(high, 4),
            "canned_warm_us": round(hot, 3),
            "canned_after_model_us": round(after_model, 3),
        },
        "targets": [
            target(
                "harness's own time / the model's",
                own / direct,
                LATENCY_TARGET,
                "<=",
                "sparrow-decider asked directly, interleaved",
            ),
            target(
                "harness's own CPU / the model's",
                own_cpu / direct_cpu,
                LATENCY_TARGET,
                "<=",
                "sparrow-decider asked directly, interleaved",
            ),
            target(
                "dispatcher rate / the model's serial rate",
                ratio,
                THROUGHPUT_TARGET,
                ">=",
                "sparrow-decider in a plain loop",
            ),
        ],
        "breakdown": parts,
    }


def main() -> None:
    """Parse the options and measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--calls", type=int, default=2000, help="throughput calls each way")
    parser.add_argument("--block", type=int, default=100, help="calls a throughput block")
    parser.add_argument("--request", choices=("small", "mixed"), default="small")
    parser.add_argument("--no-pieces", dest="pieces", action="store_false")
    parser.add_argument(
        "--piece-calls", type=int, default=200, help="calls a piece is timed over (x3)"
    )
    parser.add_argument("--profile", action="store_true", help="break harness's calls down")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    options = parser.parse_args()
    found = asyncio.run(measure(options))
    figures = dict(found["figures"])  # type: ignore[call-overload]  # built just above
    if options.pieces:  # outside the measuring loop: one piece runs a loop of its own
        print("pieces (best of 3 x 200, microseconds a call):")
        request = MIXED if options.request == "mixed" else SMALL
        for name, micros in pieces(request, options.piece_calls):
            print(f"  {name:<32} {micros:8.1f}")
            figures[f"piece_us: {name}"] = round(micros, 3)
    write(
        options.json,
        "embedded",
        found["conditions"],  # type: ignore[arg-type]  # built by measure
        figures,
        found["targets"],  # type: ignore[arg-type]  # built by measure
        found["breakdown"],  # type: ignore[arg-type]  # built by measure
    )


if __name__ == "__main__":
    main()

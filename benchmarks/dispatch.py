"""How much does the whole stack cost per decision, next to a bare aiohttp loop?

Sends decision calls to the fake System One server three ways, in the same run, against the same
server, in ``--rounds`` rounds (default 10) of ``--calls`` calls each way (default 500), the
ways in rotating order:

* **stack**: :class:`harness.thinker.DecisionCall` jobs submitted at once to a
  :class:`harness.jobs.Dispatcher` whose catalog entry has ``max_concurrent = 32``: each call is
  resolved and priced (the wire body counted under the entry's tokenizer), admitted through the
  entry's gate, sent by the pooled :class:`harness.providers.SystemOneClient`, decoded into a
  :class:`harness.decision.DecisionResponse` and put on its job's record;
* **bare**: the same body POSTed by one ``aiohttp.ClientSession`` under an
  ``asyncio.Semaphore(32)``, the reply read and parsed with ``json.loads``, nothing else;
* **floor**: the bare loop plus the least a call must do to keep the contract (its own
  request encoded and priced, an id in a context variable, a deadline, the reply checked into
  answers, a record): what any implementation keeping the contract pays over the bare loop
  (``run_floor``; ``floor.py`` is the same for the embedded model).

The server runs in a child process (its own interpreter and event loop, on 127.0.0.1), so its
cost does not land on either side. The ways take turns going first in a round, after a
warm-up; each way's rate is its calls over its summed time (``benchmarks/_blocks.py``, which
gives the ratio a 95 % interval over the rounds). Prints both rates and their ratio (the target
is at least 0.85, never below 0.7) and the client process's CPU per call each way (``process_time``
over the round; the server's CPU is in the other process), so the difference is harness's own
CPU per call. ``--profile`` breaks one more stack round down by part
(``benchmarks/_breakdown.py``); ``--json FILE`` writes the results (``benchmarks/_results.py``).

Every call asks its own request (a distinct ticket number; ``--same`` sends one request object
every time, which harness encodes once), built before the clock starts: the stack encodes and
prices each one, the bare loop sends the bodies pre-encoded (encoded before its clock starts);
``--bare-encodes`` makes the bare loop encode each body inside its timed loop instead, as a user
sending a distinct request per call would (the same encoder as the stack's).

``--fault-every N`` makes the server answer every Nth request 503 (``10`` is a 10 % fault
load): the stack re-runs it through its retry policy (pauses scaled to 0), the bare loop re-sends
until it gets a 200. Use ``--service-time`` to give the server a per-call latency.

Run: ``python benchmarks/dispatch.py`` (about 10 s on an idle machine), and
``python benchmarks/dispatch.py --fault-every 10`` for the fault load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _blocks import Blocks
from _breakdown import breakdown, print_breakdown
from _results import conditions, target, write

from harness.catalog import Catalog, CatalogEntry, reserve, tokenizer
from harness.decision import (
    Choice,
    DecisionRequest,
    DecisionResponse,
    Noul,
    Score,
    systemone,
)
from harness.jobs import Dispatcher, Pacing
from harness.testing import FakeSystemOneServer, Fault, default_answers
from harness.thinker import DecisionCall
from harness.tools import Workflow

CONCURRENCY = 32
MODEL = "fake-decider"
TARGET = 0.85
FLOOR = 0.7

REQUEST = DecisionRequest(
    {
        "ticket": 4711,
        "text": "The invoice total is wrong and I was charged twice for the March plan.",
        "customer": {"plan": "team", "seats": 12, "since": "2025-04-01"},
    },
    {
        "team": Choice(
            "Which team should handle this ticket?",
            {"billing": "invoices, charges, refunds", "tech": "bugs and outages", "sales": None},
        ),
        "urgent": Noul("Is it urgent?", when_true="the customer cannot work"),
        "anger": Score("How angry is the customer?", ("calm", "annoyed", "furious")),
    },
)


def request_for(number: int) -> DecisionRequest:
    """The benchmark's request with its own ticket number."""
    state = dict(REQUEST.state)  # type: ignore[arg-type]  # REQUEST's state is an object
    state["ticket"] = 4711 + number
    return DecisionRequest(state, REQUEST.questions)


def _serve(
    connection: multiprocessing.connection.Connection, service_time: float, fault_every: int
) -> None:
    """The child process: a fake server on 127.0.0.1 until the parent says stop."""

    def fault(number: int) -> Fault | None:
        return Fault.unavailable() if fault_every and number % fault_every == 0 else None

    async def main() -> None:
        async with FakeSystemOneServer(service_time=service_time) as server:
            server.faults = fault
            connection.send(server.port)
            await asyncio.get_running_loop().run_in_executor(None, connection.recv)
            connection.send(server.requests)

    asyncio.run(main())


def entry_for(port: int) -> CatalogEntry:
    """The benchmark's catalog entry: the fake server, 32 calls at once."""
    return CatalogEntry(
        id="fake",
        provider="systemone",
        wire_model_id=MODEL,
        base_url=f"http://127.0.0.1:{port}",
        max_context_tokens=65_536,
        max_concurrent=CONCURRENCY,
    )


def requests_for(calls: int, same: bool) -> list[DecisionRequest]:
    """The requests of one round: one shared object, or one per call."""
    return [REQUEST] * calls if same else [request_for(n) for n in range(calls)]


async def run_stack(
    dispatcher: Dispatcher, requests: Sequence[DecisionRequest], retries: int
) -> tuple[float, float]:
    """Seconds and client CPU seconds for one decision call per request through the
    dispatcher, submitted at once."""
    workflow = Workflow()
    calls = [DecisionCall(workflow, request, upstream_retries=retries) for request in requests]
    cpu = time.process_time()
    started = time.perf_counter()
    handles = [dispatcher.submit(call) for call in calls]
    responses = await asyncio.gather(*(handle.result() for handle in handles))
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    if not all(
        response.success and len(call.record) >= 1 and call.record.calls[-1].success
        for response, call in zip(responses, calls, strict=True)
    ):
        raise SystemExit("a stack call failed or was not recorded: the figures are void")
    return elapsed, cpu


async def run_bare(
    session: aiohttp.ClientSession, url: str, bodies: Sequence[bytes | DecisionRequest]
) -> tuple[float, float]:
    """Seconds and client CPU seconds for one POST per body under a semaphore of 32, replies
    parsed; a 503 is sent again. A request in place of a body is encoded inside the timed loop
    (``--bare-encodes``)."""
    gate = asyncio.Semaphore(CONCURRENCY)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    async def one(sent: bytes | DecisionRequest) -> None:
        body = sent if isinstance(sent, bytes) else systemone.encode_body(sent, MODEL)
        while True:
            async with gate, session.post(url, data=body, headers=headers) as reply:
                payload = json.loads(await reply.read())
                if reply.status == 503:
                    continue
                if reply.status != 200 or "answers" not in payload:
                    raise SystemExit(f"the bare loop got HTTP {reply.status}: the figures are void")
                return

    cpu = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(one(body) for body in bodies))
    return time.perf_counter() - started, time.process_time() - cpu


async def run_floor(
    session: aiohttp.ClientSession, url: str, requests: Sequence[DecisionRequest]
) -> tuple[float, float]:
    """Seconds and client CPU seconds for the contract's least over the bare loop: each call a
    task (as ``gather`` makes of the bare loop's too) with an id in a context variable, its
    request encoded and priced by the byte length (harness's encoder, the cheapest there is),
    a deadline kept in a set, admitted by the semaphore, the reply checked into answers by the
    System One decoder (``decode_body``: what a call must not pass on unchecked), and a record
    appended. No retries, events, catalog or error messages: ``floor.py``'s rules, over HTTP."""
    gate = asyncio.Semaphore(CONCURRENCY)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    deadlines: set[float] = set()
    records: list[tuple[int, int, object, float]] = []
    ids = itertools.count(1)

    async def one(request: DecisionRequest) -> None:
        token = _floor_job.set(next(ids))
        try:
            body = systemone.encode_body(request, MODEL)
            if len(body) > 65_536:
                raise SystemExit("over the ceiling")
            deadline = time.monotonic() + 60.0
            deadlines.add(deadline)
            try:
                async with gate:
                    started = time.perf_counter()  # the round trip, once admitted
                    async with session.post(url, data=body, headers=headers) as reply:
                        payload = await reply.read()
                    latency = time.perf_counter() - started
            finally:
                deadlines.discard(deadline)
            if reply.status != 200:
                raise SystemExit(f"the floor got HTTP {reply.status}: the figures are void")
            answers = systemone.decode_body(request, payload).answers
            records.append((_floor_job.get(), len(body), answers, latency))
        finally:
            _floor_job.reset(token)

    cpu = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(*(one(request) for request in requests))
    if len(records) != len(requests):
        raise SystemExit("a floor call was not recorded: the figures are void")
    return time.perf_counter() - started, time.process_time() - cpu


_floor_job: contextvars.ContextVar[int] = contextvars.ContextVar("dispatch_floor_job")


def bare_bodies(
    requests: Sequence[DecisionRequest], *, encodes: bool
) -> list[bytes | DecisionRequest]:
    """What the bare loop sends: the bodies encoded now (before its clock starts), or, with
    ``encodes``, the requests themselves (encoded inside its timed loop)."""
    if encodes:
        return list(requests)
    return [systemone.encode_body(request, MODEL) for request in requests]


async def measure(
    port: int,
    calls: int,
    rounds: int,
    profile: bool,
    *,
    same: bool,
    retries: int,
    bare_encodes: bool = False,
) -> tuple[Blocks, tuple[float, ...], dict[str, float] | None]:
    """``rounds`` rounds of ``calls`` calls each way, the three in rotating order: their
    times (``benchmarks/_blocks.py``: the bare loop is the baseline, then the stack, then the
    floor) and each way's client CPU per call (seconds) over all rounds, in the same order;
    with ``profile``, the breakdown of one more stack round."""
    entry = entry_for(port)
    catalog = Catalog([entry], {"decision": entry.id})
    stack_rounds: list[tuple[float, float]] = []
    bare_rounds: list[tuple[float, float]] = []
    floor_rounds: list[tuple[float, float]] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher,
    ):
        warm = requests_for(min(200, calls), same)
        bodies = bare_bodies(warm, encodes=bare_encodes)
        await run_bare(session, entry.url, bodies)  # warm-up: connections, caches
        await run_stack(dispatcher, warm, retries)
        await run_floor(session, entry.url, warm)
        for round_ in range(rounds):
            bodies = bare_bodies(requests_for(calls, same), encodes=bare_encodes)
            stacked = requests_for(calls, same)
            floored = requests_for(calls, same)
            for offset in range(3):  # the order rotates: none always follows the same way
                way = (round_ + offset) % 3
                if way == 0:
                    bare_rounds.append(await run_bare(session, entry.url, bodies))
                elif way == 1:
                    stack_rounds.append(await run_stack(dispatcher, stacked, retries))
                else:
                    floor_rounds.append(await run_floor(session, entry.url, floored))
        parts = None
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await run_stack(dispatcher, requests_for(calls, same), retries)
            profiler.disable()
            parts = breakdown(profiler, calls)
    times = tuple(tuple(r[0] for r in way) for way in (bare_rounds, stack_rounds, floor_rounds))
    total = calls * rounds
    cpu = tuple(sum(r[1] for r in way) / total for way in (bare_rounds, stack_rounds, floor_rounds))
    return Blocks(("bare", "stack", "floor"), calls, times), cpu, parts


def cpu_parts(calls: int, fault_every: int) -> tuple[float, float, float]:
    """Client CPU per call (seconds) of pricing the way main priced before this change (every
    attempt's body counted under the tokenizer before admission), of pricing as the dispatcher
    does now (:func:`harness.catalog.reserve`: the benchmark's entry is concurrency-bounded
    without a price, so its bodies are bounded by their byte length), and of decoding a reply
    (``json.loads``, the codec, the response), in-process on ``calls`` distinct requests; with a
    fault every ``fault_every`` requests, that share of calls is priced a second time."""
    entry = entry_for(1)
    requests = [request_for(n) for n in range(calls)]
    bodies = [systemone.encode_body(r, entry.wire_model_id) for r in requests]  # sent anyway
    attempts = [*bodies, *(bodies[::fault_every] if fault_every else [])]
    counter = tokenizer(entry.tokenizer)
    started = time.process_time()
    for body in attempts:
        counter.count(body)
    counted = time.process_time() - started
    started = time.process_time()
    for body in attempts:
        reserve(entry, body)
    bounded = time.process_time() - started
    reply = json.dumps(
        systemone.encode_reply(default_answers(REQUEST), model="fake-decider", input_tokens=99)
    ).encode()
    started = time.process_time()
    for request in requests:
        wire = systemone.decode_reply(request, json.loads(reply))
        DecisionResponse(
            request=request,
            answers=wire.answers,
            input_tokens=wire.input_tokens,
            model=wire.model,
            request_id=None,
            latency=0.0,
            failure=None,
        )
    decoded = time.process_time() - started
    return counted / calls, bounded / calls, decoded / calls


def main() -> None:
    """Parse the options, start the server process, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="calls each way a round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--service-time", type=float, default=0.0, help="server seconds a call")
    parser.add_argument("--profile", action="store_true", help="break a stack round down")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- : stdout)")
    parser.add_argument(
        "--fault-every", type=int, default=0, metavar="N", help="answer every Nth request 503"
    )
    parser.add_argument(
        "--same", action="store_true", help="send one request object every call (encoded once)"
    )
    parser.add_argument(
        "--bare-encodes",
        action="store_true",
        help="the bare loop encodes each body inside its timed loop (default: before it)",
    )
    options = parser.parse_args()
    retries = 10 if options.fault_every else 0
    load = os.getloadavg()[0]

    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(child, options.service_time, options.fault_every), daemon=True
    )
    server.start()
    try:
        port = parent.recv()
        rates, (bare_cpu, stack_cpu, floor_cpu), parts = asyncio.run(
            measure(
                port,
                options.calls,
                options.rounds,
                options.profile,
                same=options.same,
                retries=retries,
                bare_encodes=options.bare_encodes,
            )
        )
        parent.send("stop")
        served = parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()
    bare, stack, ratio = rates.rate(0), rates.rate(1), rates.ratio(1)
    faults = f"every {options.fault_every}th request 503" if options.fault_every else "none"
    print(
        f"calls per way per round: {options.calls}, rounds: {options.rounds}, "
        f"max_concurrent: {CONCURRENCY}, server service time: {options.service_time:g} s, "
        f"faults: {faults}, requests: {'one shared' if options.same else 'one per call'}, "
        f"bare loop encodes: {'inside its timed loop' if options.bare_encodes else 'before it'}, "
        f"requests served: {served}"
    )
    print(f"bare aiohttp loop : {bare:8.0f} calls/s  {bare_cpu * 1e3:6.3f} ms client CPU a call")
    print(f"whole stack       : {stack:8.0f} calls/s  {stack_cpu * 1e3:6.3f} ms client CPU a call")
    floor_rate = rates.rate(2)
    floor_ms = floor_cpu * 1e3
    print(f"the floor         : {floor_rate:8.0f} calls/s  {floor_ms:6.3f} ms client CPU a call")
    print(f"harness's own CPU : {(stack_cpu - bare_cpu) * 1e3:6.3f} ms a call (stack - bare)")
    counted, bounded, decoded = cpu_parts(options.calls, options.fault_every)
    before, now = (counted + decoded) * 1e3, (bounded + decoded) * 1e3
    print(
        f"decode and pricing: {before:6.3f} ms a call counting every attempt (before), "
        f"{now:6.3f} ms as the dispatcher prices now: {now / before:.2f} of it "
        f"(pricing {counted * 1e3:.3f} -> {bounded * 1e3:.3f} ms, decoding {decoded * 1e3:.3f} ms)"
    )
    met = "met" if ratio >= TARGET else "missed"
    floor = "held" if ratio >= FLOOR else "broken"
    print(f"ratio stack/bare  : {rates.describe(1)}")
    print(f"ratio floor/bare  : {rates.describe(2)}")
    print(f"                    target {TARGET} {met}, floor {FLOOR} {floor}")
    if parts is not None:
        print_breakdown("stack, per call (client process)", parts, stack_cpu * 1e6)
    write(
        options.json,
        "dispatch",
        conditions(
            {
                "calls": options.calls,
                "rounds": options.rounds,
                "concurrency": CONCURRENCY,
                "service_time_s": options.service_time,
                "fault_every": options.fault_every,
                "same_request": options.same,
                "bare_encodes": options.bare_encodes,
            },
            load,
        ),
        {
            "bare_calls_per_s": round(bare, 2),
            "stack_calls_per_s": round(stack, 2),
            "bare_cpu_ms_per_call": round(bare_cpu * 1e3, 4),
            "stack_cpu_ms_per_call": round(stack_cpu * 1e3, 4),
            "own_cpu_ms_per_call": round((stack_cpu - bare_cpu) * 1e3, 4),
            **rates.figures(1, "stack"),
            "floor_calls_per_s": round(floor_rate, 2),
            "floor_cpu_ms_per_call": round(floor_cpu * 1e3, 4),
            **rates.figures(2, "floor"),
            "requests_served": served,
        },
        [
            target("stack / bare aiohttp loop", ratio, TARGET, ">=", "a bare aiohttp loop"),
            target(
                "the floor over HTTP / bare aiohttp loop",
                rates.ratio(2),
                TARGET,
                ">=",
                "a bare aiohttp loop",
            ),
            target(
                "stack CPU / bare CPU (inverse)",
                bare_cpu / stack_cpu,
                TARGET,
                ">=",
                "the bare loop's client CPU a call",
            ),
        ],
        parts,
    )


if __name__ == "__main__":
    main()

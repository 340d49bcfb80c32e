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
  ``asyncio.Semaphore(32)``, the reply read and parsed (``load_json``, harness's reader), nothing
  else;
* **floor**: the bare loop plus the least a call must do to keep the contract (its own
  request encoded and priced, an id in a context variable, a deadline, the reply checked into
  answers, a record): what any implementation keeping the contract pays over the bare loop
  (``run_floor``; ``_floor.py`` is the same for the embedded model).

The server runs in a child process (its own interpreter and event loop, on 127.0.0.1), so its
cost does not land on either side. Each way is a pyperf benchmark of the same run
(``benchmarks/_perf.py``: calibrated loops, worker processes, warm-ups), a loop being one round
of ``--calls`` calls (default 500) at once; each way's mean time a call gives its rate, and the
ratio of the stack's to the bare loop's is the target (at least 0.85, never below 0.7). The
**stack (CPU)** and **bare (CPU)** ways time the same by the client process's CPU clock (the
server's CPU is in the other process), so their difference is harness's own CPU a call.
``--breakdown`` profiles one more stack round by part (``benchmarks/_breakdown.py``); ``--json
FILE`` writes the results (``benchmarks/_results.py``), ``-o FILE`` pyperf's.

Every call asks its own request (a distinct ticket number; ``--same`` sends one request object
every time, which harness encodes once), built before the clock starts: the stack encodes and
prices each one, the bare loop sends the bodies pre-encoded (encoded before its clock starts);
``--bare-encodes`` makes the bare loop encode each body inside its timed loop instead, as a user
sending a distinct request per call would (the same encoder as the stack's).

``--fault-every N`` makes the server answer every Nth request 503 (``10`` is a 10 % fault
load): the stack re-runs it through its retry policy (pauses scaled to 0), the bare loop re-sends
until it gets a 200. Use ``--service-time`` to give the server a per-call latency.

Run: ``python benchmarks/dispatch.py [--fast | --rigorous]``, and
``python benchmarks/dispatch.py --fault-every 10`` for the fault load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import cProfile
import itertools
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _breakdown import breakdown, print_breakdown
from _perf import Means, closing, finish, runner, worker_loop
from _results import conditions, one_run, target, write

from harness.catalog import Catalog, CatalogEntry
from harness.decision import Choice, DecisionRequest, Noul, Score, systemone
from harness.decision._internal import load_json
from harness.jobs import Dispatcher, Pacing
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

CONCURRENCY = 32
MODEL = "fake-decider"
TARGET = 0.85

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
                payload = load_json(await reply.read())
                if reply.status == 503:
                    continue
                if reply.status != 200 or not isinstance(payload, dict) or "answers" not in payload:
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
    appended. No retries, events, catalog or error messages: ``_floor.py``'s rules, over HTTP."""
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


_state: dict[str, object] = {}


async def _opened(port: int) -> tuple[aiohttp.ClientSession, Dispatcher, str]:
    """This worker's session and dispatcher on the server at ``port`` (made once)."""
    if "session" not in _state:
        entry = entry_for(port)
        catalog = Catalog([entry], {"decision": entry.id})
        opened = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        dispatching = Dispatcher(catalog, pacing=Pacing.immediate())
        await dispatching.__aenter__()  # open for the worker's life
        _state.update(session=opened, dispatcher=dispatching, url=entry.url)
        closing(opened.close)
        closing(dispatching.aclose)
    session, dispatcher, url = _state["session"], _state["dispatcher"], _state["url"]
    assert isinstance(session, aiohttp.ClientSession)
    assert isinstance(dispatcher, Dispatcher)
    assert isinstance(url, str)
    return session, dispatcher, url


def way(name: str, options: argparse.Namespace, cpu: bool = False) -> Callable[[int], float]:
    """A pyperf time function: ``loops`` rounds of ``--calls`` calls of the way ``name`` (each
    round's requests and bodies made before its clock starts), by the wall clock or, with
    ``cpu``, the client process's CPU clock."""
    retries = 10 if options.fault_every else 0
    index = 0 if cpu else 1

    def time_func(loops: int) -> float:
        loop = worker_loop()
        session, dispatcher, url = loop.run_until_complete(_opened(options.port))
        total = 0.0
        for _ in range(loops):
            requests = requests_for(options.calls, options.same)
            if name == "stack":
                spent = loop.run_until_complete(run_stack(dispatcher, requests, retries))
            elif name == "bare":
                bodies = bare_bodies(requests, encodes=options.bare_encodes)
                spent = loop.run_until_complete(run_bare(session, url, bodies))
            else:
                spent = loop.run_until_complete(run_floor(session, url, requests))
            total += spent[1 - index]
        return total

    return time_func


WAYS = ("bare", "stack", "floor", "bare (CPU)", "stack (CPU)")


def own_options(parser: argparse.ArgumentParser) -> None:
    """The script's own options (pyperf's are its own: --fast, --rigorous, -p, -n, -l, -o)."""
    parser.add_argument("--calls", type=int, default=500, help="calls each way a round")
    parser.add_argument("--service-time", type=float, default=0.0, help="server seconds a call")
    parser.add_argument("--breakdown", action="store_true", help="break a stack round down")
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
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)  # the workers' server


def main() -> None:
    """Start the server process, run every way as a pyperf benchmark, print the ratios."""
    load = os.getloadavg()[0]
    passed = ("calls", "fault_every", "same", "bare_encodes", "port")
    perf, options = runner(own_options, passed, processes=4, values=3)
    server = None
    if not options.worker:
        parent, child = multiprocessing.Pipe()
        server = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(child, options.service_time, options.fault_every), daemon=True
        )
        server.start()
        options.port = parent.recv()
    try:
        means = Means()
        for name in WAYS:
            own = name.split(" ")[0]
            found = perf.bench_time_func(
                name, way(own, options, cpu="CPU" in name), inner_loops=options.calls
            )
            means.add(name, found)
        parts = None
        if not options.worker and options.breakdown:
            parts = worker_loop().run_until_complete(_profiled(options))
        served = 0
        if server is not None:
            parent.send("stop")
            served = parent.recv()
    finally:
        if server is not None:
            server.join(timeout=10)
            if server.is_alive():
                server.terminate()
    finish()  # the worker's loop and what it holds, closed
    if options.worker or not means.complete(WAYS):
        return  # a worker: the main process sums up
    report(options, means, parts, served, load)


async def _profiled(options: argparse.Namespace) -> dict[str, float]:
    _, dispatcher, _ = await _opened(options.port)
    retries = 10 if options.fault_every else 0
    profiler = cProfile.Profile()
    profiler.enable()
    await run_stack(dispatcher, requests_for(options.calls, options.same), retries)
    profiler.disable()
    return breakdown(profiler, options.calls)


def report(
    options: argparse.Namespace,
    means: Means,
    parts: dict[str, float] | None,
    served: int,
    load: float,
) -> None:
    """Print the ratios of the means and write the results."""
    bare, stack, floor_rate = 1 / means["bare"], 1 / means["stack"], 1 / means["floor"]
    bare_cpu, stack_cpu = means["bare (CPU)"], means["stack (CPU)"]
    ratio = stack / bare
    faults = f"every {options.fault_every}th request 503" if options.fault_every else "none"
    print(f"load average: {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} CPUs")
    print(
        f"calls a round: {options.calls}, max_concurrent: {CONCURRENCY}, server service time: "
        f"{options.service_time:g} s, faults: {faults}, requests: "
        f"{'one shared' if options.same else 'one per call'}, bare loop encodes: "
        f"{'inside its timed loop' if options.bare_encodes else 'before it'}, requests served: "
        f"{served}"
    )
    print(f"bare aiohttp loop : {bare:8.0f} calls/s  {bare_cpu * 1e3:6.3f} ms client CPU a call")
    print(f"whole stack       : {stack:8.0f} calls/s  {stack_cpu * 1e3:6.3f} ms client CPU a call")
    print(f"the floor         : {floor_rate:8.0f} calls/s")
    print(f"harness's own CPU : {(stack_cpu - bare_cpu) * 1e3:6.3f} ms a call (stack - bare)")
    print(f"ratio stack/bare  : {ratio:.3f} ({one_run(ratio, TARGET, '>=')})")
    print(f"ratio floor/bare  : {floor_rate / bare:.3f}")
    if parts is not None:
        print_breakdown("stack, per call (client process)", parts, stack_cpu * 1e6)
    write(
        options.json,
        "dispatch",
        conditions(
            {
                "calls": options.calls,
                "concurrency": CONCURRENCY,
                "service_time_s": options.service_time,
                "fault_every": options.fault_every,
                "same_request": options.same,
                "bare_encodes": options.bare_encodes,
                "processes": options.processes,
                "values": options.values,
                "loops": options.loops,
            },
            load,
        ),
        {
            "bare_calls_per_s": round(bare, 2),
            "stack_calls_per_s": round(stack, 2),
            "floor_calls_per_s": round(floor_rate, 2),
            "bare_cpu_ms_per_call": round(bare_cpu * 1e3, 4),
            "stack_cpu_ms_per_call": round(stack_cpu * 1e3, 4),
            "own_cpu_ms_per_call": round((stack_cpu - bare_cpu) * 1e3, 4),
            "requests_served": served,
            "values": dict(means.values),
            "stdev_us": {name: round(spread * 1e6, 3) for name, spread in means.spread.items()},
        },
        [
            target("stack / bare aiohttp loop", ratio, TARGET, ">=", "a bare aiohttp loop"),
            target(
                "the floor over HTTP / bare aiohttp loop",
                floor_rate / bare,
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

"""How much does the whole stack cost per decision, next to a bare aiohttp loop?

Sends ``--calls`` (default 5,000) decision calls to the fake System One server two ways, in the
same run, against the same server:

* **stack**: :class:`harness.deciding.DecisionCall` jobs submitted at once to a
  :class:`harness.jobs.Dispatcher` whose catalog entry has ``max_concurrent = 32``: each call is
  resolved and priced (the wire body counted under the entry's tokenizer), admitted through the
  entry's gate, sent by the pooled :class:`harness.llm.SystemOneClient`, decoded into a
  :class:`harness.decision.DecisionResponse` and put on its job's record;
* **bare**: the same body POSTed by one ``aiohttp.ClientSession`` under an
  ``asyncio.Semaphore(32)``, the reply read and parsed with ``json.loads``, nothing else.

The server runs in a child process (its own interpreter and event loop, on 127.0.0.1), so its
cost does not land on either side. Each way runs ``--rounds`` times, alternating, after a
warm-up; the best round of each is reported. Prints both rates and their ratio (the target is at
least 0.7). ``--profile FILE`` writes a cProfile of one stack round.

Run: ``python benchmarks/dispatch.py`` (about 10 s).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import multiprocessing
import multiprocessing.connection
import time

import aiohttp

from harness.deciding import DecisionCall
from harness.decision import Choice, DecisionRequest, Noul, Score, systemone
from harness.jobs import Dispatcher, Pacing
from harness.models import Catalog, CatalogEntry
from harness.testing import FakeSystemOneServer
from harness.tools import Workflow

CONCURRENCY = 32
TARGET = 0.7

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


def _serve(connection: multiprocessing.connection.Connection, service_time: float) -> None:
    """The child process: a fake server on 127.0.0.1 until the parent says stop."""

    async def main() -> None:
        async with FakeSystemOneServer(service_time=service_time) as server:
            connection.send(server.port)
            await asyncio.get_running_loop().run_in_executor(None, connection.recv)
            connection.send(server.requests)

    asyncio.run(main())


def entry_for(port: int) -> CatalogEntry:
    """The benchmark's catalog entry: the fake server, 32 calls at once."""
    return CatalogEntry(
        id="fake",
        provider="systemone",
        wire_model_id="fake-decider",
        base_url=f"http://127.0.0.1:{port}",
        max_context_tokens=65_536,
        max_concurrent=CONCURRENCY,
    )


async def run_stack(dispatcher: Dispatcher, calls: int) -> float:
    """Seconds for ``calls`` decision calls through the dispatcher, submitted at once."""
    workflow = Workflow()
    started = time.perf_counter()
    handles = [
        dispatcher.submit(DecisionCall(workflow, REQUEST, upstream_retries=0)) for _ in range(calls)
    ]
    responses = await asyncio.gather(*(handle.result() for handle in handles))
    elapsed = time.perf_counter() - started
    if not all(
        response.success and len(handle.job.record) == 1
        for response, handle in zip(responses, handles, strict=True)
    ):
        raise SystemExit("a stack call failed or was not recorded: the figures are void")
    return elapsed


async def run_bare(session: aiohttp.ClientSession, url: str, body: bytes, calls: int) -> float:
    """Seconds for ``calls`` POSTs of ``body`` under a semaphore of 32, replies parsed."""
    gate = asyncio.Semaphore(CONCURRENCY)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}

    async def one() -> None:
        async with gate, session.post(url, data=body, headers=headers) as reply:
            payload = json.loads(await reply.read())
            if reply.status != 200 or "answers" not in payload:
                raise SystemExit(f"the bare loop got HTTP {reply.status}: the figures are void")

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return time.perf_counter() - started


async def measure(port: int, calls: int, rounds: int, profile: str | None) -> tuple[float, float]:
    """The best stack and bare rates (calls per second) over ``rounds`` alternating rounds."""
    entry = entry_for(port)
    body = systemone.encode_body(REQUEST, entry.wire_model_id)
    catalog = Catalog([entry], {"decision": entry.id})
    stack_times: list[float] = []
    bare_times: list[float] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher,
    ):
        await run_bare(session, entry.url, body, 200)  # warm-up: connections, caches
        await run_stack(dispatcher, 200)
        for _ in range(rounds):
            bare_times.append(await run_bare(session, entry.url, body, calls))
            stack_times.append(await run_stack(dispatcher, calls))
        if profile is not None:
            profiler = cProfile.Profile()
            profiler.enable()
            await run_stack(dispatcher, calls)
            profiler.disable()
            profiler.dump_stats(profile)
    return calls / min(stack_times), calls / min(bare_times)


def main() -> None:
    """Parse the options, start the server process, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--service-time", type=float, default=0.0, help="server seconds a call")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of one stack round")
    options = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(child, options.service_time), daemon=True
    )
    server.start()
    try:
        port = parent.recv()
        stack, bare = asyncio.run(measure(port, options.calls, options.rounds, options.profile))
        parent.send("stop")
        served = parent.recv()
    finally:
        server.join(timeout=10)
        if server.is_alive():
            server.terminate()
    ratio = stack / bare
    print(
        f"calls per way per round: {options.calls}, rounds: {options.rounds}, "
        f"max_concurrent: {CONCURRENCY}, server service time: {options.service_time:g} s, "
        f"requests served: {served}"
    )
    print(f"bare aiohttp loop : {bare:8.0f} calls/s")
    print(f"whole stack       : {stack:8.0f} calls/s")
    verdict = "meets" if ratio >= TARGET else "misses"
    print(f"ratio stack/bare  : {ratio:8.2f}  ({verdict} the target of {TARGET})")


if __name__ == "__main__":
    main()

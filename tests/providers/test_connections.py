"""Bounded connection pools per entry, and a server killed with 500 calls in flight."""

from __future__ import annotations

import asyncio
import time

import pytest

from harness.catalog import Catalog, CatalogEntry
from harness.catalog._entry import WINDOW_CONNECTIONS
from harness.decision import DecisionRequest, DecisionResponse, Noul
from harness.errors import HarnessError, ReplyTooLargeError
from harness.jobs import Dispatcher, JobTimeoutError, Pacing
from harness.providers import SystemOneClient
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow
from tests.jobs.stack import eventually

REQUEST = DecisionRequest("a short state", {"q": Noul("Yes?")})


def catalog_of(entry: CatalogEntry) -> Catalog:
    return Catalog([entry], {"decision": entry.id})


async def run_all(entry: CatalogEntry, calls: int, **call: float | int) -> list[object]:
    async with Dispatcher(catalog_of(entry), pacing=Pacing.immediate()) as dispatcher:
        handles = [
            dispatcher.submit(DecisionCall(Workflow(), REQUEST, **call))  # type: ignore[arg-type]  # timeout and retries
            for _ in range(calls)
        ]
        return await asyncio.gather(*(h.result() for h in handles), return_exceptions=True)


@pytest.mark.parametrize(
    ("bound", "limit"),
    [
        ({"tpm": 100_000_000}, WINDOW_CONNECTIONS),
        ({"tpm": 100_000_000, "max_connections": 5}, 5),
        ({"max_concurrent": 8}, 8),
        ({"max_concurrent": 500, "max_connections": 16}, 16),
    ],
)
async def test_500_calls_in_flight_open_at_most_the_pools_sockets(
    bound: dict[str, int], limit: int
) -> None:
    async with FakeSystemOneServer(service_time=0.02) as server:
        entry = server.entry(**bound)
        assert entry.connection_limit == limit
        outcomes = await run_all(entry, 500, timeout=60)
    assert all(isinstance(o, DecisionResponse) and o.success for o in outcomes), outcomes[:3]
    assert server.answered == 500
    assert server.peak_in_flight <= limit
    assert server.peak_connections <= limit
    assert server.connections <= limit  # reused across calls, never one socket per call
    assert server.peak_in_flight >= min(limit, 4)  # the bound is what limits, not something else


async def test_one_client_keeps_one_pool_per_entry_and_reuses_its_sockets() -> None:
    async with FakeSystemOneServer() as server:
        first = server.entry(id="first", max_concurrent=3)
        second = server.entry(id="second", tpm=1_000_000, max_connections=2)
        client = SystemOneClient()
        try:
            for _ in range(10):
                await client.decide(REQUEST, first)
                await client.decide(REQUEST, second)
            assert client._transport.pools() == {"first": 3, "second": 2}
        finally:
            await client.aclose()
        assert client._transport.pools() == {}
    assert server.connections == 2  # one socket per pool, reused by every call after the first


async def test_a_reply_past_max_reply_bytes_is_refused_by_name() -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry(max_reply_bytes=64)
        client = SystemOneClient()
        try:
            with pytest.raises(ReplyTooLargeError, match="max_reply_bytes \\(64\\)"):
                await client.decide(REQUEST, entry)
            big = server.entry(max_reply_bytes=1_000)
            server.fail_next(Fault.not_json("x" * 5_000))
            with pytest.raises(ReplyTooLargeError, match="more than the entry's max_reply_bytes"):
                await client.decide(REQUEST, big)
            assert (await client.decide(REQUEST, big)).success  # the pool still serves
        finally:
            await client.aclose()


async def test_a_server_killed_with_500_calls_in_flight_settles_every_call_by_name() -> None:
    limit = 5.0
    server = FakeSystemOneServer(service_time=0.3)
    await server.start()
    try:
        entry = server.entry(tpm=100_000_000)
        started = time.monotonic()
        async with Dispatcher(catalog_of(entry), pacing=Pacing.immediate()) as dispatcher:
            handles = [
                dispatcher.submit(
                    DecisionCall(Workflow(), REQUEST, timeout=limit, upstream_retries=1)
                )
                for _ in range(500)
            ]
            await eventually(lambda: server.answered >= 20, within=30)
            await server.stop()  # killed: in-flight requests lose their connections
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles), return_exceptions=True),
                limit + 10,  # a hang detector, not a timing assertion
            )
            settled = time.monotonic() - started
    finally:
        await server.stop()
    answered = [o for o in outcomes if isinstance(o, DecisionResponse)]
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(answered) + len(failed) == 500
    assert answered
    assert failed
    assert all(o.success for o in answered)
    for failure in failed:
        assert isinstance(failure, HarnessError), repr(failure)
        assert failure.llm_readable
        said = str(failure)
        named = ("could not be reached", "did not answer", "HTTP 5", "retry budget")
        assert isinstance(failure, JobTimeoutError) or any(n in said for n in named), said
    assert settled < limit + 10

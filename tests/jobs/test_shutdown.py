"""Shutdown: ``aclose`` cancels what still runs, returns every permit, closes its own clients."""

from __future__ import annotations

import asyncio

import pytest

from harness.jobs import Dispatcher, EventKind, JobEvent
from harness.providers import SystemOneClient
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST, catalog_of, eventually


async def test_aclose_cancels_running_and_waiting_jobs_cleanly() -> None:
    async with FakeSystemOneServer() as server:
        server.faults = lambda number: Fault.hang()
        entry = server.entry(max_concurrent=2)
        events: list[JobEvent] = []
        dispatcher = Dispatcher(catalog_of(entry))
        dispatcher.subscribe(events.append, lambda event: event.kind.terminal)
        handles = [dispatcher.submit(DecisionCall(Workflow(), REQUEST)) for _ in range(5)]
        await eventually(lambda: server.requests == 2)
        client = dispatcher.client_for(entry)
        assert isinstance(client, SystemOneClient)
        await asyncio.wait_for(dispatcher.aclose(), 5)
        assert all(handle.done() for handle in handles)
        for handle in handles:
            with pytest.raises(asyncio.CancelledError):
                await handle.result()
        gate = dispatcher.admission.gate_for(entry)
        assert (gate.in_use, gate.waiting) == (0, 0)
        assert [event.kind for event in events] == [EventKind.CANCELLED] * 5
        assert server.requests == 2  # the three in line never went on the wire
        # The client the dispatcher made is closed (its pooled session is gone).
        assert client._transport.pools() == {}
        with pytest.raises(RuntimeError, match="closed"):
            dispatcher.submit(DecisionCall(Workflow(), REQUEST))
        await dispatcher.aclose()  # idempotent


async def test_aclose_leaves_clients_it_was_given_open() -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry()
        client = SystemOneClient()
        try:
            async with Dispatcher(catalog_of(entry), clients={entry.id: client}) as dispatcher:
                assert (await dispatcher.run(DecisionCall(Workflow(), REQUEST))).success
            response = await client.decide(REQUEST, entry)  # still usable: not the dispatcher's
            assert response.success
        finally:
            await client.aclose()

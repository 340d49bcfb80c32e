"""CONTRACT.md "Load": decision calls against a real loopback HTTP server."""

from __future__ import annotations

import asyncio

from harness.catalog import Catalog
from harness.decision import Choice, DecisionRequest
from harness.errors import LLMReadableError
from harness.jobs import Dispatcher, Pacing
from harness.testing import FakeSystemOneServer
from harness.thinker import DecisionCall
from harness.tools import Workflow

REQUEST = DecisionRequest("state", {"q": Choice("Pick", {"a": None, "b": None})})


async def test_200_calls_at_once_through_a_gate_of_one_all_complete() -> None:
    async with FakeSystemOneServer(service_time=0.015) as server:
        catalog = Catalog([server.entry(max_concurrent=1)], {"decision": "fake-systemone"})
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            calls = [DecisionCall(Workflow(), REQUEST, upstream_retries=0) for _ in range(200)]
            handles = [dispatcher.submit(call) for call in calls]
            responses = await asyncio.gather(*(h.result() for h in handles))
        assert server.requests == 200
        assert server.peak_in_flight == 1
    assert all(r.success and r.choice("q").choice == "a" for r in responses)
    assert all(r.input_tokens is not None and r.input_tokens > 0 for r in responses)
    assert all(len(c.record) == 1 and c.record.calls[0].success for c in calls)


async def test_a_server_that_stops_settles_every_call_and_serves_again_after_restart() -> None:
    async with FakeSystemOneServer(service_time=0.005) as server:
        catalog = Catalog([server.entry(max_concurrent=4)], {"decision": "fake-systemone"})
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            handles = [
                dispatcher.submit(DecisionCall(Workflow(), REQUEST, upstream_retries=0, timeout=5))
                for _ in range(60)
            ]
            while server.answered < 5:  # noqa: ASYNC110 - polling a counter of the fake server
                await asyncio.sleep(0.001)
            await server.stop()
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles), return_exceptions=True), 30
            )
            failures = [o for o in outcomes if isinstance(o, BaseException)]
            completed = [o for o in outcomes if not isinstance(o, BaseException)]
            assert all(handle.done() for handle in handles)  # every call settled in the bound
            assert all(response.success for response in completed)
            assert failures
            for failure in failures:
                assert isinstance(failure, LLMReadableError), repr(failure)
                text = str(failure)
                assert (
                    "could not be reached" in text or "HTTP 5" in text or "not an answer" in text
                ), text
            await server.restart()
            again = await dispatcher.run(DecisionCall(Workflow(), REQUEST, upstream_retries=0))
            assert again.success

"""FakeSystemOneServer: lifecycle, counters, capacity, validation, faults."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping

import aiohttp
import pytest

from harness.decision import Answer, DecisionRequest, Noul
from harness.errors import RateLimitedError, RetryableError, TransientError
from harness.providers._fake import yes
from harness.providers._systemone import SystemOneClient
from harness.testing._fake_server import FakeSystemOneServer
from harness.testing._faults import Fault

from .wire_cases import sample_request


async def test_it_listens_on_loopback_and_restarts_on_the_same_port(
    systemone: SystemOneClient,
) -> None:
    server = FakeSystemOneServer()
    await server.start()
    try:
        port = server.port
        assert server.root == f"http://127.0.0.1:{port}"
        assert server.url == f"http://127.0.0.1:{port}/v1/systemone"
        entry = server.entry()
        assert (await systemone.decide(sample_request(), entry)).success
        await server.restart()
        assert server.port == port
        assert (await systemone.decide(sample_request(), entry)).success
        await server.stop()
        assert not server.running
        with pytest.raises(TransientError, match="could not be reached"):
            await systemone.decide(sample_request(), entry)
        await server.start()
        assert server.port == port
        assert (await systemone.decide(sample_request(), entry)).success
        assert server.requests == 3
        assert server.answered == 3
    finally:
        await server.stop()
        await server.stop()  # idempotent


async def test_a_given_port_is_used(systemone: SystemOneClient) -> None:
    async with FakeSystemOneServer() as first:
        port = first.port
    async with FakeSystemOneServer(port=port) as second:
        assert second.port == port
        assert (await systemone.decide(sample_request(), second.entry())).success


async def test_peak_in_flight_counts_concurrent_requests(systemone: SystemOneClient) -> None:
    async with FakeSystemOneServer(service_time=0.2) as server:
        entry = server.entry()
        responses = await asyncio.gather(
            *(systemone.decide(sample_request(), entry) for _ in range(6))
        )
        assert all(response.success for response in responses)
        assert server.peak_in_flight == 6
        assert server.in_flight == 0
        assert server.requests == server.answered == 6


async def test_max_in_flight_queues_then_refuses_with_429(systemone: SystemOneClient) -> None:
    async with FakeSystemOneServer(
        service_time=0.2, max_in_flight=2, queue_limit=2, busy_retry_after=3
    ) as server:
        entry = server.entry()
        outcomes = await asyncio.gather(
            *(systemone.decide(sample_request(), entry) for _ in range(7)),
            return_exceptions=True,
        )
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(refused) == 3
    for error in refused:
        assert isinstance(error, RateLimitedError)
        assert error.retry_after == 3.0
        assert "HTTP 429" in error.message
    assert server.answered == 4
    assert server.peak_in_flight == 2
    assert server.requests == 7


async def test_a_bounded_server_serves_everything_it_queues(systemone: SystemOneClient) -> None:
    async with FakeSystemOneServer(service_time=0.005, max_in_flight=1, queue_limit=100) as server:
        entry = server.entry()
        responses = await asyncio.gather(
            *(systemone.decide(sample_request(), entry) for _ in range(20))
        )
    assert all(response.success for response in responses)
    assert server.peak_in_flight == 1
    assert server.answered == 20


async def test_stopping_does_not_hang_on_hanging_requests(systemone: SystemOneClient) -> None:
    server = FakeSystemOneServer()
    await server.start()
    server.faults = lambda number: Fault.hang()
    entry = server.entry()
    calls = [asyncio.create_task(systemone.decide(sample_request(), entry)) for _ in range(3)]
    for _ in range(100):
        if server.in_flight == 3:
            break
        await asyncio.sleep(0.01)
    assert server.in_flight == 3
    await asyncio.wait_for(server.stop(), 30)  # a hang guard: stopping must not wait on them
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    for outcome in outcomes:
        assert isinstance(outcome, TransientError)
        assert "could not be reached" in outcome.message
    assert server.in_flight == 0


async def test_faults_by_request_number_and_by_script(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    server.faults = lambda number: Fault.unavailable() if number % 2 == 0 else None
    server.fail_next(Fault.server_error(), times=2)
    entry = server.entry()
    statuses: list[int | None] = []
    for _ in range(5):
        try:
            await systemone.decide(sample_request(), entry)
            statuses.append(200)
        except RetryableError as error:  # 500 and 503 are both re-runs
            statuses.append(error.status)
    # requests 1-2 take the scripted 500s, then even numbers get 503
    assert statuses == [500, 500, 200, 503, 200]
    assert server.answered == 2


async def test_invalid_bodies_get_422_with_a_detail_list(server: FakeSystemOneServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(server.url, data=b"not json") as reply:
            assert reply.status == 422
            assert reply.headers["x-typesafe-request-id"] == "fake-1"
            body = await reply.json()
        assert body["detail"][0]["loc"] == ["body"]
        payload = {"model": "m", "state": "s", "questions": {}}
        async with session.post(server.url, json=payload) as reply:
            assert reply.status == 422
            detail = (await reply.json())["detail"]
        assert isinstance(detail, list)
        assert detail
        assert all({"loc", "msg"} <= set(problem) for problem in detail)
        assert any("questions" in problem["loc"] for problem in detail)
    assert server.requests == 2
    assert server.answered == 0


async def test_the_model_listing(server: FakeSystemOneServer) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.root + "/v1/models") as reply,
    ):
        assert reply.status == 200
        listing = await reply.json()
    assert [model["name"] for model in listing["models"]] == ["fake-decider"]
    assert server.requests == 0  # listings are not decision requests


async def test_the_policy_and_usage(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    request = DecisionRequest("s", {"ok": Noul("Ok?")})

    async def confident(asked: DecisionRequest) -> Mapping[str, Answer]:
        return {"ok": yes(0.8)}

    server.policy = confident
    response = await systemone.decide(request, server.entry())
    assert response.noul("ok").probability == pytest.approx(0.8)
    assert response.input_tokens == math.ceil(len(server.bodies[0]) / 4)

    def broken(asked: DecisionRequest) -> Mapping[str, Answer]:
        raise RuntimeError("policy bug")

    server.policy = broken  # a broken policy: a 500 saying so
    with pytest.raises(TransientError, match=r"HTTP 500.*policy bug"):
        await systemone.decide(request, server.entry())


async def test_received_bodies_and_headers_are_recorded(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    await systemone.decide(sample_request(), server.entry(wire_model_id="jev-latest"))
    assert json.loads(server.bodies[0])["model"] == "jev-latest"
    assert server.headers[0]["Content-Type"] == "application/json"


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        FakeSystemOneServer(max_in_flight=0)
    with pytest.raises(ValueError, match="queue_limit"):
        FakeSystemOneServer(queue_limit=-1)

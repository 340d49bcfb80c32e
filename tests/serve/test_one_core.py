"""One server: the test double (`FakeSystemOneServer`) and `harness serve` (`DecisionServer`) are
shells over one core, so what the core owns (admission and 429s, auth, request ids, the access
log, routes and JSON errors) behaves the same in both, and the load the real server takes is
taken by the double too."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import pytest

from harness.decision import DecisionRequest, Noul, NoulAnswer, systemone
from harness.serve import CODECS, REQUEST_ID_HEADER, DecisionServer
from harness.testing import FakeSystemOneServer, Fault
from tests.serve.servers import CountingModel, fake_catalog

KEY = "core-test-key-0123456789"
REQUEST = DecisionRequest("Is this a greeting? hello", {"greeting": Noul("Greeting?")})
BODY = systemone.encode_body(REQUEST, "jev-latest")


async def post(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    sent = {"Content-Type": "application/json", **(headers or {})}
    async with session.post(url, data=BODY, headers=sent) as reply:
        return reply.status, dict(reply.headers), await reply.read()


def test_one_header_and_one_codec_table() -> None:
    assert REQUEST_ID_HEADER == systemone.REQUEST_ID_HEADER == "x-typesafe-request-id"
    assert set(CODECS) == {"systemone", "openai"}


async def test_a_thousand_requests_at_once_at_the_test_double_get_answers_or_429s() -> None:
    cap, queue, requests = 8, 24, 1000
    async with FakeSystemOneServer(
        max_in_flight=cap, queue_limit=queue, service_time=0.004
    ) as server:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            results = await asyncio.gather(*(post(session, server.url) for _ in range(requests)))
    statuses = [status for status, _, _ in results]
    answered, busy = statuses.count(200), statuses.count(429)
    assert set(statuses) <= {200, 429}
    assert answered + busy == requests  # nothing lost
    assert answered >= cap + queue
    assert busy > 0
    assert server.requests == requests
    assert server.answered == answered
    assert server.peak_in_flight == cap
    assert server.in_flight == 0
    for status, headers, raw in results:
        if status == 429:
            assert headers["Retry-After"] == "1"
            assert json.loads(raw)["detail"]["error_type"] == "rate_limit_error"
        else:
            answer = systemone.decode_reply(REQUEST, json.loads(raw)).answers["greeting"]
            assert isinstance(answer, NoulAnswer)
    ids = [headers[REQUEST_ID_HEADER] for _, headers, _ in results]
    assert sorted(ids) == sorted(f"fake-{n}" for n in range(1, requests + 1))


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 403), ({"Authorization": "Bearer wrong"}, 401), ({"Authorization": f"Basic {KEY}"}, 403)],
)
async def test_both_servers_refuse_a_key_alike(headers: dict[str, str], status: int) -> None:
    model = CountingModel(service_time=0.0)
    async with (
        FakeSystemOneServer(api_key=KEY) as fake,
        DecisionServer(fake_catalog(), api_key=KEY, clients={"fake": model}) as real,
        aiohttp.ClientSession() as session,
    ):
        got_fake = await post(session, fake.url, headers)
        got_real = await post(session, real.root + "/v1/systemone", headers)
        good = await post(session, fake.url, {"Authorization": f"Bearer {KEY}"})
    assert got_fake[0] == got_real[0] == status
    assert json.loads(got_fake[2]) == json.loads(got_real[2])
    assert json.loads(got_fake[2])["detail"]["error_type"] == "authentication_error"
    assert got_fake[1][REQUEST_ID_HEADER] == "fake-1"
    assert got_real[1][REQUEST_ID_HEADER].startswith("hs-")
    assert good[0] == 200
    assert fake.answered == 1
    assert model.peak == 0


async def test_the_test_double_writes_one_access_line_per_request_never_a_body(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="harness.testing.access")
    async with FakeSystemOneServer() as server, aiohttp.ClientSession() as session:
        server.fail_next(Fault.unavailable())
        first = await post(session, server.url)
        second = await post(session, server.url)
    assert (first[0], second[0]) == (503, 200)
    lines = [r.getMessage() for r in caplog.records if r.name == "harness.testing.access"]
    assert len(lines) == 2
    assert lines[0].startswith("POST /v1/systemone 503 ")
    assert lines[0].endswith(" fake-1")
    assert lines[1].startswith("POST /v1/systemone 200 ")
    assert lines[1].endswith(" fake-2")
    assert all("hello" not in line for line in lines)


async def test_unknown_routes_answer_json_in_both() -> None:
    model = CountingModel(service_time=0.0)
    async with (
        FakeSystemOneServer() as fake,
        DecisionServer(fake_catalog(), clients={"fake": model}) as real,
        aiohttp.ClientSession() as session,
    ):
        replies = []
        for root in (fake.root, real.root):
            async with session.get(root + "/v1/nowhere") as reply:
                replies.append((reply.status, await reply.json()))
    assert replies[0] == replies[1]
    assert replies[0][0] == 404
    assert replies[0][1]["detail"]["error_type"] == "not_found_error"

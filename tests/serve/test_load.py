"""`harness serve` under load: 1,000 requests at once with an in-flight cap of 8."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from harness.decision import DecisionRequest, Noul, NoulAnswer, systemone
from harness.serve import REQUEST_ID_HEADER, DecisionServer
from tests.serve.servers import CountingModel, fake_catalog

REQUESTS = 1000
CAP = 8
QUEUE = 24


async def test_a_thousand_requests_at_once_get_answers_or_429s_never_more_than_8_in_flight() -> (
    None
):
    model = CountingModel(service_time=0.004)
    request = DecisionRequest("Is this a greeting? hello", {"greeting": Noul("Greeting?")})
    body = systemone.encode_body(request, "jev-latest")
    server = DecisionServer(
        fake_catalog(), max_in_flight=CAP, queue_limit=QUEUE, clients={"fake": model}
    )
    async with server:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one() -> tuple[int, dict[str, str], bytes]:
                async with session.post(
                    server.root + "/v1/systemone",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as reply:
                    return reply.status, dict(reply.headers), await reply.read()

            results = await asyncio.gather(*(one() for _ in range(REQUESTS)))
        stats = server.stats
    statuses = [status for status, _, _ in results]
    answered = statuses.count(200)
    busy = statuses.count(429)
    assert set(statuses) <= {200, 429}
    assert answered + busy == REQUESTS  # nothing lost
    assert answered >= CAP + QUEUE  # the cap and the queue were all used
    assert busy > 0  # and beyond them the server refused
    assert stats.received == REQUESTS
    assert stats.answered == answered
    assert stats.busy == busy
    assert stats.peak_in_flight == CAP  # reached, never passed
    assert stats.peak_waiting <= QUEUE
    assert model.peak <= CAP  # the model never saw more than the cap either
    assert len(model.requests) == answered
    for status, headers, raw in results:
        assert headers[REQUEST_ID_HEADER]
        if status == 429:
            assert headers["Retry-After"] == "1"
            assert json.loads(raw)["detail"]["error_type"] == "rate_limit_error"
        else:
            answer = systemone.decode_reply(request, json.loads(raw)).answers["greeting"]
            assert isinstance(answer, NoulAnswer)
            assert 0.0 <= answer.probability <= 1.0
    assert len({headers[REQUEST_ID_HEADER] for _, headers, _ in results}) == REQUESTS

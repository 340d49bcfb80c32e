"""`harness serve`'s server in-process: validation, usage, ids, listing, both codecs, admission."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from harness.catalog import CatalogEntry, CatalogError, default_catalog, tokenizer
from harness.decision import Choice, DecisionRequest, Noul, NoulAnswer, Score, systemone
from harness.errors import OverloadedError
from harness.providers import OpenAIDecisionsClient, SystemOneClient
from harness.serve import REQUEST_ID_HEADER, DecisionServer
from tests.serve.servers import CountingModel, fake_catalog

REQUEST = DecisionRequest(
    {"ticket": "I was charged twice, please refund me"},
    {
        "refund": Noul("Does the customer want a refund?"),
        "team": Choice("Which team?", {"billing": "money matters", "tech": None}),
        "anger": Score("How angry?", ["calm", "annoyed", "furious"]),
    },
)


@pytest.fixture
async def embedded() -> AsyncIterator[DecisionServer]:
    async with DecisionServer(default_catalog()) as server:
        yield server


async def post(url: str, payload: object) -> tuple[int, dict[str, str], object]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, data=json.dumps(payload).encode()) as reply,
    ):
        return reply.status, dict(reply.headers), json.loads(await reply.read())


async def test_the_embedded_model_answers_through_the_system_one_client(
    embedded: DecisionServer,
) -> None:
    entry = CatalogEntry(
        id="served",
        provider="systemone",
        wire_model_id="jev-latest",
        base_url=embedded.root,
        max_context_tokens=32_768,
        max_concurrent=4,
    )
    client = SystemOneClient()
    try:
        response = await client.decide(REQUEST, entry)
    finally:
        await client.aclose()
    assert response.choice("team").choice in ("billing", "tech")
    assert 0.0 <= response.noul("refund").probability <= 1.0
    assert 0.0 <= response.score("anger").score <= 2.0
    assert response.model  # the served model's own name, recorded
    # Real usage: the body counted under the served entry's tokenizer, not the model's zeros.
    body = systemone.encode_body(REQUEST, "jev-latest")
    assert response.input_tokens == tokenizer("cl100k_base").count(body)
    assert response.request_id is not None
    assert response.request_id.startswith("hs-")
    assert embedded.stats.answered == 1


async def test_the_openai_decisions_endpoint_answers_the_same_questions(
    embedded: DecisionServer,
) -> None:
    entry = CatalogEntry(
        id="served-openai",
        provider="openai",
        wire_model_id="sparrow-decider",
        base_url=embedded.root,
        max_context_tokens=32_768,
        max_concurrent=4,
    )
    client = OpenAIDecisionsClient()
    try:
        response = await client.decide(REQUEST, entry)
    finally:
        await client.aclose()
    assert set(response.answers) == {"refund", "team", "anger"}
    assert response.choice("team").choice in ("billing", "tech")
    assert response.input_tokens is not None
    assert response.input_tokens > 0


NOUL = {"type": "noul", "instructions": "?"}
BARE_CHOICE = {"type": "choice", "instructions": "?"}


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"model": "jev-latest", "state": "hi"}, ["body", "questions"]),
        ({"state": "hi", "questions": {"q": NOUL}}, ["body", "model"]),
        (
            {"model": "m", "state": "hi", "questions": {"q": BARE_CHOICE}},
            ["body", "questions", "q", "choice", "criteria"],
        ),
        (
            {"model": "m", "state": "hi", "questions": {"q": {"type": "box"}}},
            ["body", "questions", "q", "type"],
        ),
    ],
)
async def test_a_bad_request_gets_a_422_with_detail_naming_the_place(
    embedded: DecisionServer, payload: object, where: list[str]
) -> None:
    status, headers, body = await post(embedded.root + "/v1/systemone", payload)
    assert status == 422
    assert headers[REQUEST_ID_HEADER]
    assert isinstance(body, dict)
    assert where in [problem["loc"] for problem in body["detail"]]
    assert all(problem["msg"] for problem in body["detail"])
    assert embedded.stats.invalid == 1
    assert embedded.stats.answered == 0


async def test_a_body_that_is_not_json_gets_a_422(embedded: DecisionServer) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.post(embedded.root + "/v1/systemone", data=b"{not json") as reply,
    ):
        assert reply.status == 422
        assert (await reply.json())["detail"][0]["type"] == "json_invalid"


async def test_more_options_than_the_entry_takes_is_a_422_not_a_5xx(
    embedded: DecisionServer,
) -> None:
    options = {f"o{i}": None for i in range(300)}  # the embedded entry takes 255
    payload = {
        "model": "jev-latest",
        "state": "pick one",
        "questions": {"q": {"type": "choice", "instructions": "Which?", "criteria": options}},
    }
    status, _, body = await post(embedded.root + "/v1/systemone", payload)
    assert status == 422
    assert isinstance(body, dict)
    assert "at most 255 options" in body["detail"][0]["msg"]


async def test_models_lists_the_served_model_and_unknown_routes_answer_json(
    embedded: DecisionServer,
) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(embedded.root + "/v1/models") as reply:
            assert reply.status == 200
            listing = await reply.json()
            assert reply.headers[REQUEST_ID_HEADER]
        async with session.get(embedded.root + "/v2/nothing") as missing:
            assert missing.status == 404
            assert (await missing.json())["detail"]["error_type"] == "not_found_error"
    (model,) = listing["models"]
    assert model["name"] == embedded.model_name == "sparrow-nano-general-v1.1"
    assert "sparrow-decider" in model["aliases"]  # the entry's alias, still accepted
    assert all(isinstance(model[key], str) for key in ("name", "description", "release_date"))


async def test_the_entrys_admission_applies_behind_the_servers_cap() -> None:
    model = CountingModel(service_time=0.005)
    body = systemone.encode_body(REQUEST, "m")
    async with DecisionServer(
        fake_catalog(max_concurrent=2), max_in_flight=8, clients={"fake": model}
    ) as server:
        async with aiohttp.ClientSession() as session:

            async def one() -> int:
                async with session.post(server.root + "/v1/systemone", data=body) as reply:
                    return reply.status

            statuses = await asyncio.gather(*(one() for _ in range(20)))
        peak = server.stats.peak_in_flight
    assert statuses == [200] * 20
    assert peak == 8  # the server let 8 in ...
    assert model.peak == 2  # ... and the entry's gate let 2 of them reach the model


async def test_a_throttled_upstream_answers_503_with_retry_after() -> None:
    model = CountingModel(service_time=0.0)

    def overloaded(request: DecisionRequest) -> dict[str, NoulAnswer]:
        raise OverloadedError("upstream overloaded", status=529)

    model.policy = overloaded
    async with DecisionServer(fake_catalog(), clients={"fake": model}) as server:
        status, headers, body = await post(
            server.root + "/v1/systemone", json.loads(systemone.encode_body(REQUEST, "m"))
        )
    assert status == 503
    assert headers["Retry-After"] == "1"
    assert isinstance(body, dict)
    assert "overloaded" in body["detail"]["message"]


def test_the_server_refuses_a_bad_configuration() -> None:
    with pytest.raises(CatalogError, match="unknown catalog entry id 'nope'"):
        DecisionServer(default_catalog(), entry_id="nope")
    with pytest.raises(ValueError, match="max_in_flight must be >= 1"):
        DecisionServer(default_catalog(), max_in_flight=0)
    with pytest.raises(ValueError, match="queue_limit must be >= 0"):
        DecisionServer(default_catalog(), queue_limit=-1)


async def test_a_busy_server_refuses_before_reading_or_checking_the_body() -> None:
    asked = asyncio.Event()
    release = asyncio.Event()
    model = CountingModel(service_time=0.0)

    async def held(request: DecisionRequest) -> dict[str, NoulAnswer]:
        asked.set()
        await release.wait()
        return {qid: NoulAnswer(0.5) for qid in request.questions}

    model.policy = held
    only = DecisionRequest("state", {"q": Noul("Yes?")})
    async with DecisionServer(
        fake_catalog(), max_in_flight=1, queue_limit=0, clients={"fake": model}
    ) as server:
        url = server.root + "/v1/systemone"
        first = asyncio.create_task(post(url, json.loads(systemone.encode_body(only, "m"))))
        await asyncio.wait_for(asked.wait(), 30)  # the one slot is taken; nothing may queue
        assert server.stats.in_flight == 1
        # A body that is not even JSON is refused as busy, not as invalid: it was never read.
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, data=b"{not json") as reply,
        ):
            assert reply.status == 429
            assert reply.headers["Retry-After"] == "1"
            assert (await reply.json())["detail"]["error_type"] == "rate_limit_error"
        # A request announcing 8 MB and sending 10 bytes is answered at once: the server does
        # not wait for a body it would refuse (the bound only keeps a regression from hanging).
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            b"POST /v1/systemone HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b'Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n{"state":'
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 30)
        writer.close()
        assert status_line.split()[1] == b"429"
        assert (server.stats.busy, server.stats.invalid) == (2, 0)
        release.set()
        status, _, _ = await first
    assert status == 200
    assert server.stats.answered == 1
    assert server.stats.peak_waiting == 0

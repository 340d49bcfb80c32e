"""`harness serve` in-process: keys, the access log, one model name, model routes, health, drain."""

from __future__ import annotations

import asyncio
import json
import logging

import aiohttp
import pytest

from harness.catalog import CatalogEntry, default_catalog
from harness.decision import DecisionRequest, DecisionResponse, Noul, systemone
from harness.errors import NotAnAnswerError, UnauthorizedError
from harness.providers import SystemOneClient
from harness.serve import REQUEST_ID_HEADER, UPSTREAM_MODEL_HEADER, DecisionServer
from tests.jobs.stack import eventually
from tests.serve.servers import CountingModel, fake_catalog

KEY = "serve-key-0c8e1f5a9b7d"
BODY = systemone.encode_body(DecisionRequest("a state", {"q": Noul("Yes?")}), "jev-latest")


async def call(
    method: str, url: str, *, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], object]:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, url, data=body, headers=headers) as reply,
    ):
        raw = await reply.read()
        return reply.status, dict(reply.headers), json.loads(raw) if raw else None


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 403),
        ({"Authorization": ""}, 403),
        ({"Authorization": "Bearer "}, 403),
        ({"Authorization": f"Basic {KEY}"}, 403),
        ({"Authorization": "Bearer wrong-key"}, 401),
        ({"Authorization": f"Bearer {KEY}x"}, 401),
        ({"Authorization": f"Bearer {KEY[:-1]}"}, 401),
    ],
)
async def test_a_missing_key_gets_403_and_a_wrong_one_401_in_the_official_shape(
    headers: dict[str, str], status: int
) -> None:
    model = CountingModel(service_time=0.0)
    async with DecisionServer(fake_catalog(), api_key=KEY, clients={"fake": model}) as server:
        for path, method, body in (
            ("/v1/systemone", "POST", BODY),
            ("/v1/models", "GET", None),
            ("/v1/models/fake-decider", "GET", None),
        ):
            got, reply_headers, payload = await call(
                method, server.root + path, body=body, headers=headers
            )
            assert got == status, path
            assert isinstance(payload, dict)
            assert payload["detail"]["error_type"] == "authentication_error"
            assert KEY not in json.dumps(payload)
            assert reply_headers[REQUEST_ID_HEADER].startswith("hs-")
        assert server.stats.received == 0  # refused before anything was read or asked
        assert model.peak == 0  # the model was never asked
        ok, _, answer = await call(
            "POST",
            server.root + "/v1/systemone",
            body=BODY,
            headers={"Authorization": f"Bearer {KEY}"},
        )
        assert ok == 200
        assert isinstance(answer, dict)
        assert set(answer["answers"]) == {"q"}


async def test_health_needs_no_key_and_the_system_one_client_sends_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with DecisionServer(
        fake_catalog(), api_key=KEY, clients={"fake": CountingModel(0.0)}
    ) as server:
        status, _, health = await call("GET", server.root + "/health")
        assert (status, health) == (200, {"status": "ok", "model": "fake-decider", "in_flight": 0})
        entry = CatalogEntry(
            id="front",
            provider="systemone",
            wire_model_id="fake-decider",
            base_url=server.root,
            api_key_env="FRONT_KEY",
            max_context_tokens=10_000,
            max_concurrent=2,
        )
        client = SystemOneClient()
        try:
            monkeypatch.setenv("FRONT_KEY", "not-the-key")
            with pytest.raises(UnauthorizedError) as refused:
                await client.decide(DecisionRequest("s", {"q": Noul("Yes?")}), entry)
            assert "not-the-key" not in str(refused.value)
            monkeypatch.setenv("FRONT_KEY", KEY)
            response = await client.decide(DecisionRequest("s", {"q": Noul("Yes?")}), entry)
            assert response.model == "fake-decider"
        finally:
            await client.aclose()


def test_a_blank_key_is_refused() -> None:
    with pytest.raises(ValueError, match="non-blank"):
        DecisionServer(fake_catalog(), api_key=" ")


async def test_one_model_name_everywhere_and_the_alias_still_answers() -> None:
    async with DecisionServer(default_catalog()) as server:
        name = server.model_name
        assert name == "sparrow-nano-general-v1.1"  # the loaded model's own name
        _, _, listing = await call("GET", server.root + "/v1/models")
        assert isinstance(listing, dict)
        assert [m["name"] for m in listing["models"]] == [name]
        for asked in (name, "sparrow-decider", "jev-latest"):
            body = systemone.encode_body(DecisionRequest("s", {"q": Noul("Yes?")}), asked)
            status, headers, answer = await call("POST", server.root + "/v1/systemone", body=body)
            assert status == 200
            assert isinstance(answer, dict)
            assert answer["model"] == name  # what the listing says, whatever was asked
            assert headers[UPSTREAM_MODEL_HEADER] == name
        for known in (name, "sparrow-decider", "embedded"):
            status, _, card = await call("GET", f"{server.root}/v1/models/{known}")
            assert status == 200
            assert isinstance(card, dict)
            assert card["name"] == name
        status, _, missing = await call("GET", server.root + "/v1/models/gpt-7")
        assert status == 404
        assert isinstance(missing, dict)
        assert missing["detail"]["error_type"] == "not_found_error"
        assert "'sparrow-nano-general-v1.1'" in missing["detail"]["message"]


async def test_one_access_log_line_per_request_never_a_body(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="harness.serve.access")
    secret = systemone.encode_body(DecisionRequest("ACCESS-CANARY-71", {"q": Noul("Q?")}), "m")
    async with DecisionServer(
        fake_catalog(), api_key=KEY, clients={"fake": CountingModel(0.0)}
    ) as server:
        auth = {"Authorization": f"Bearer {KEY}"}
        await call("POST", server.root + "/v1/systemone", body=secret, headers=auth)
        await call("POST", server.root + "/v1/systemone", body=secret)
        await call("GET", server.root + "/v1/models", headers=auth)
        await call("GET", server.root + "/nowhere", headers=auth)
        await call("GET", server.root + "/health")
    lines = [r.getMessage() for r in caplog.records if r.name == "harness.serve.access"]
    assert len(lines) == 5
    for line, (method, path, status) in zip(
        lines,
        [
            ("POST", "/v1/systemone", 200),
            ("POST", "/v1/systemone", 403),
            ("GET", "/v1/models", 200),
            ("GET", "/nowhere", 404),
            ("GET", "/health", 200),
        ],
        strict=True,
    ):
        fields = line.split()
        assert fields[:3] == [method, path, str(status)], line
        assert fields[3].endswith("ms")
        assert fields[4].startswith("hs-")
        assert "CANARY" not in line
        assert KEY not in line


async def test_drain_finishes_what_is_in_flight_and_refuses_what_comes_after() -> None:
    model = CountingModel(service_time=0.4)
    async with DecisionServer(fake_catalog(), clients={"fake": model}) as server:
        url = server.root + "/v1/systemone"
        in_flight = [asyncio.create_task(call("POST", url, body=BODY)) for _ in range(5)]
        await eventually(lambda: server.in_flight == 5)
        draining = asyncio.create_task(server.drain(grace=10.0))
        await asyncio.sleep(0.05)
        status, headers, refused = await call("POST", url, body=BODY)
        assert status == 503
        assert isinstance(refused, dict)
        assert refused["detail"]["error_type"] == "shutting_down"
        assert headers["Retry-After"] == "1"
        health, _, said = await call("GET", server.root + "/health")
        assert (health, isinstance(said, dict) and said["status"]) == (503, "draining")
        assert await draining == 0  # every request in flight finished within the grace
        finished = await asyncio.gather(*in_flight)
        assert [got[0] for got in finished] == [200] * 5
    assert server.stats.answered == 5


async def test_drain_cuts_off_what_outlives_the_grace() -> None:
    model = CountingModel(service_time=30.0)
    async with DecisionServer(fake_catalog(), clients={"fake": model}) as server:
        url = server.root + "/v1/systemone"
        stuck = asyncio.create_task(call("POST", url, body=BODY))
        await eventually(lambda: server.in_flight == 1)
        assert await server.drain(grace=0.2) == 1
        with pytest.raises(aiohttp.ClientError):
            await stuck


async def test_an_upstream_echo_never_reaches_the_callers_error_body() -> None:
    class Echoing(CountingModel):
        async def decide(
            self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
        ) -> DecisionResponse:
            raise NotAnAnswerError(f"upstream said: {request.state} is odd")

    body = systemone.encode_body(
        DecisionRequest("SERVE-STATE-CANARY quoted back", {"q": Noul("Yes?")}), "m"
    )
    async with DecisionServer(fake_catalog(), clients={"fake": Echoing(0.0)}) as server:
        status, _, problem = await call("POST", server.root + "/v1/systemone", body=body)
    assert status == 502
    assert isinstance(problem, dict)
    assert "SERVE-STATE-CANARY" not in json.dumps(problem)
    assert "[request text]" in problem["detail"]["message"]

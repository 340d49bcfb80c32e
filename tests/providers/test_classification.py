"""SystemOneClient against the fake System One server: answers, and every status class."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from datetime import UTC, datetime

import pytest

from harness.catalog import CatalogEntry
from harness.decision import Choice, ChoiceAnswer, DecisionRequest, Noul, Score
from harness.errors import (
    ExternalServiceError,
    InvalidInputError,
    OverloadedError,
    PermissionDeniedError,
    RetryableError,
    StatusError,
    TransientError,
    UnauthorizedError,
)
from harness.providers._http_failures import error_message, retry_after
from harness.providers._systemone import SystemOneClient
from harness.testing._fake_server import FakeSystemOneServer
from harness.testing._faults import Fault
from tests.jobs.stack import eventually

from .wire_cases import (
    CANARY_KEY,
    CASES,
    STATE_SECRET,
    StatusCase,
    assert_classified,
    sample_request,
)


async def test_an_answer_carries_answers_usage_model_request_id_and_latency(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    entry = server.entry(wire_model_id="jev-latest")
    request = sample_request()
    response = await systemone.decide(request, entry)
    assert response.success
    assert response.request is request
    assert response.choice("team").choice == "billing"
    assert response.choice("team").probabilities["billing"] == pytest.approx(0.9)
    assert response.noul("urgent").probability == pytest.approx(0.5)
    assert response.score("anger").levels == ("calm", "annoyed", "furious")
    assert response.input_tokens == math.ceil(len(server.bodies[0]) / 4)
    assert response.model == "jev-latest"
    assert response.request_id == "fake-1"
    assert response.latency > 0
    assert response.output_tokens == 0
    sent = json.loads(server.bodies[0])
    assert sent["model"] == "jev-latest"
    assert list(sent["questions"]) == ["team", "urgent", "anger"]
    assert server.headers[0]["Content-Type"] == "application/json"
    assert server.paths == ["/v1/systemone"]


async def test_the_served_model_is_recorded_as_the_server_names_it(
    systemone: SystemOneClient,
) -> None:
    async with FakeSystemOneServer(model="jev-1.13.0") as server:
        response = await systemone.decide(
            sample_request(), server.entry(wire_model_id="jev-latest")
        )
    assert response.model == "jev-1.13.0"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_status_class(
    case: StatusCase, server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    server.fail_next(case.fault)
    entry = server.entry()
    with pytest.raises(case.error) as caught:
        await systemone.decide(sample_request(), entry)
    assert_classified(caught.value, case, entry.url)
    assert server.requests == 1
    # the next request is answered: the client and its pool survive every failure
    response = await systemone.decide(sample_request(), entry)
    assert response.success


async def test_a_stopped_server_could_not_be_reached(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    entry = server.entry()
    await systemone.decide(sample_request(), entry)
    await server.stop()
    with pytest.raises(TransientError) as caught:
        await systemone.decide(sample_request(), entry)
    assert "could not be reached" in caught.value.message
    assert entry.url in caught.value.message
    assert caught.value.retry_after is None
    await server.start()
    assert (await systemone.decide(sample_request(), entry)).success


async def test_an_unknown_host_fails_at_once_naming_the_host(systemone: SystemOneClient) -> None:
    entry = CatalogEntry(
        id="nowhere",
        provider="systemone",
        wire_model_id="jev-latest",
        base_url="http://decider.no-such-host.invalid:8080",
        max_context_tokens=4096,
        max_concurrent=1,
    )
    with pytest.raises(ExternalServiceError) as caught:
        await systemone.decide(sample_request(), entry)
    assert not isinstance(caught.value, RetryableError)
    assert type(caught.value) is ExternalServiceError
    assert "decider.no-such-host.invalid" in caught.value.message
    assert "base_url" in caught.value.message


async def test_a_client_side_timeout_is_transient(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    server.fail_next(Fault.hang())
    with pytest.raises(TransientError) as caught:
        # The outer bound only keeps a broken client from hanging the suite.
        await asyncio.wait_for(systemone.decide(sample_request(), server.entry(), timeout=0.2), 30)
    assert "did not answer within 0.2 s" in caught.value.message
    # The timeout is the client's: the server still holds the request, hanging (on a busy
    # machine its handler may start a turn of the loop after the client gave up).
    await eventually(lambda: server.in_flight == 1, within=5.0)


async def test_the_bearer_token_is_sent_only_when_the_entry_has_a_key(
    server: FakeSystemOneServer, systemone: SystemOneClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_DECIDER_KEY", raising=False)
    entry = server.entry(api_key_env="TEST_DECIDER_KEY")
    await systemone.decide(sample_request(), entry)
    assert "Authorization" not in server.headers[-1]
    monkeypatch.setenv("TEST_DECIDER_KEY", CANARY_KEY)
    await systemone.decide(sample_request(), entry)
    assert server.headers[-1]["Authorization"] == f"Bearer {CANARY_KEY}"
    await systemone.decide(sample_request(), server.entry())  # no api_key_env at all
    assert "Authorization" not in server.headers[-1]


async def test_a_server_with_a_key_refuses_none_with_403_and_a_wrong_one_with_401(
    systemone: SystemOneClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with FakeSystemOneServer(api_key="right-key") as server:
        entry = server.entry(api_key_env="TEST_DECIDER_KEY")
        monkeypatch.delenv("TEST_DECIDER_KEY", raising=False)
        with pytest.raises(PermissionDeniedError) as missing:
            await systemone.decide(sample_request(), entry)
        assert "no key was sent" in missing.value.message
        assert "TEST_DECIDER_KEY" in missing.value.message
        monkeypatch.setenv("TEST_DECIDER_KEY", "wrong-key")
        with pytest.raises(UnauthorizedError) as wrong:
            await systemone.decide(sample_request(), entry)
        assert "wrong-key" not in wrong.value.message
        monkeypatch.setenv("TEST_DECIDER_KEY", "right-key")
        assert (await systemone.decide(sample_request(), entry)).success


async def test_the_key_never_appears_in_messages_or_logs(
    systemone: SystemOneClient,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Even a server echoing the key back gets it redacted."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("TEST_DECIDER_KEY", CANARY_KEY)
    faults = [
        Fault.unauthorized(f"invalid API key {CANARY_KEY}"),
        Fault.forbidden(f"key {CANARY_KEY} may not use this model"),
        Fault.http(400, f"bad request from {CANARY_KEY}", shape="detail_list"),
        Fault.unavailable(f"loading for {CANARY_KEY}"),
        Fault.rate_limited(1, message=f"slow down {CANARY_KEY}"),
        Fault.not_json(f"<html>{CANARY_KEY}</html>"),
        Fault.not_an_answer({"ok": CANARY_KEY}),
        Fault.connection_reset(),
    ]
    messages: list[str] = []
    async with FakeSystemOneServer() as server:
        entry = server.entry(api_key_env="TEST_DECIDER_KEY")
        for fault in faults:
            server.fail_next(fault)
            with pytest.raises(StatusError) as caught:
                await systemone.decide(sample_request(), entry)
            error: BaseException | None = caught.value
            while error is not None:
                messages.append(f"{error!s} {error!r}")
                error = error.__cause__ or error.__context__
        await server.stop()
        with pytest.raises(TransientError) as unreachable:
            await systemone.decide(sample_request(), entry)
        messages.append(str(unreachable.value))
    assert len(messages) >= len(faults)
    for message in messages:
        assert CANARY_KEY not in message
        assert STATE_SECRET not in message
    assert any("***" in message for message in messages)
    for record in caplog.records:
        assert CANARY_KEY not in record.getMessage()
        assert CANARY_KEY not in str(record.args)


async def test_a_custom_path_is_used(systemone: SystemOneClient) -> None:
    async with FakeSystemOneServer(systemone_path="/api/decide") as server:
        response = await systemone.decide(sample_request(), server.entry(path="/api/decide"))
        assert response.success
        assert server.paths == ["/api/decide"]
        with pytest.raises(ExternalServiceError) as caught:
            await systemone.decide(sample_request(), server.entry())
        assert caught.value.status == 404
        assert "base_url, path" in caught.value.message


async def test_limits_are_checked_before_sending(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    options = {f"o{i}": None for i in range(5)}
    wide = DecisionRequest("s", {"pick": Choice("Which?", options), "ok": Noul("Ok?")})
    with pytest.raises(InvalidInputError) as too_many:
        await systemone.decide(wide, server.entry(max_options=4))
    assert "'pick'" in too_many.value.message
    assert "5" in too_many.value.message
    assert "at most 4" in too_many.value.message
    tall = DecisionRequest("s", {"rank": Score("How?", ["a", "b", "c"])})
    with pytest.raises(InvalidInputError) as too_tall:
        await systemone.decide(tall, server.entry(max_levels=2))
    assert "'rank'" in too_tall.value.message
    assert "at most 2" in too_tall.value.message
    assert server.requests == 0
    assert (await systemone.decide(wide, server.entry(max_options=5))).success


async def test_a_one_option_choice_is_answered_locally(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    request = DecisionRequest(
        "s",
        {"only": Choice("Which?", ["finish"]), "ok": Noul("Ok?"), "two": Choice("Or?", ["a", "b"])},
    )
    response = await systemone.decide(request, server.entry())
    assert response.choice("only") == ChoiceAnswer("finish", {"finish": 1.0}, confidence=1.0)
    assert list(response.answers) == ["only", "ok", "two"]
    sent = json.loads(server.bodies[0])
    assert list(sent["questions"]) == ["ok", "two"]
    assert response.input_tokens == math.ceil(len(server.bodies[0]) / 4)


async def test_only_one_option_choices_send_nothing(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    request = DecisionRequest("s", {"a": Choice("Which?", ["x"]), "b": Choice("And?", ["y"])})
    response = await systemone.decide(request, server.entry(wire_model_id="jev-latest"))
    assert server.requests == 0
    assert response.choice("a").choice == "x"
    assert response.choice("b").probabilities == {"y": 1.0}
    assert response.input_tokens == 0
    assert response.model == "jev-latest"


async def test_a_retry_signal_hint_is_never_negative(
    server: FakeSystemOneServer, systemone: SystemOneClient
) -> None:
    server.fail_next(
        Fault.http(503, "loading", headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    )
    with pytest.raises(OverloadedError) as caught:
        await systemone.decide(sample_request(), server.entry())
    assert caught.value.retry_after == 0.0


async def test_the_model_listing_is_read_and_a_missing_one_is_unknown(
    systemone: SystemOneClient,
) -> None:
    async with FakeSystemOneServer(models=["jev-1.13.0", "jev-latest"]) as server:
        assert await systemone.list_models(server.entry()) == ["jev-1.13.0", "jev-latest"]
    async with FakeSystemOneServer(models=None) as server:
        assert await systemone.list_models(server.entry()) is None
        entry = server.entry()
    assert await systemone.list_models(entry) is None  # stopped: unknown, never fatal


async def test_aclose_is_idempotent_and_the_client_reopens(
    server: FakeSystemOneServer,
) -> None:
    client = SystemOneClient()
    await client.aclose()
    assert (await client.decide(sample_request(), server.entry())).success
    await client.aclose()
    await client.aclose()
    assert (await client.decide(sample_request(), server.entry())).success
    await client.aclose()


def test_retry_after_reads_milliseconds_then_seconds_then_dates() -> None:
    now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after({}, now) is None
    assert retry_after({"Retry-After": "12"}, now) == 12.0
    assert retry_after({"retry-after": "1.5"}, now) == 1.5
    assert retry_after({"Retry-After": "12", "Retry-After-Ms": "40"}, now) == 0.04
    assert retry_after({"Retry-After": "Fri, 01 May 2026 12:00:45 GMT"}, now) == 45.0
    assert retry_after({"Retry-After": "Fri, 01 May 2026 11:00:00 GMT"}, now) == 0.0
    assert retry_after({"Retry-After": "-3"}, now) == 0.0
    assert retry_after({"Retry-After": "soon"}, now) is None
    assert retry_after({"retry-after-ms": "nan", "Retry-After": "2"}, now) == 2.0


def test_error_message_reads_the_four_shapes_in_order() -> None:
    assert error_message(b'{"error": "bad model"}') == "bad model"
    assert error_message(b'{"error": {"message": "bad key", "type": "auth"}}') == "bad key"
    assert error_message(b'{"message": "slow down"}') == "slow down"
    assert error_message(b'{"detail": "not found"}') == "not found"
    assert error_message(b'{"detail": {"message": "loading"}}') == "loading"
    listed = b'{"detail": [{"loc": ["body", "questions", "q"], "msg": "bad"}, {"msg": "worse"}]}'
    assert error_message(listed) == "body.questions.q: bad; worse"
    assert error_message(b'{"error": "first", "message": "second", "detail": "third"}') == "first"
    assert error_message(b'{"message": "second", "detail": "third"}') == "second"
    raw = error_message(b"<html>" + b"y" * 1000 + b"</html>")
    assert raw.startswith("<html>yyy")
    assert raw.endswith("...")
    assert len(raw) <= 200
    assert error_message(b"") == "(empty body)"

"""The trimmed HTTP request path: one endpoint and one set of prepared headers per entry and key,
shared by every call, while each failure is still redacted for its own request."""

from __future__ import annotations

from typing import Any

import pytest

from harness.decision import DecisionRequest, Noul
from harness.errors import StatusError
from harness.providers import SystemOneClient
from harness.providers._redact import Redaction
from harness.testing import FakeSystemOneServer, Fault

FIRST_CANARY = "FIRSTSTATECANARY-81c2"
SECOND_CANARY = "SECONDSTATECANARY-4d7e"


def _request(canary: str) -> DecisionRequest:
    return DecisionRequest(f"the customer {canary} wants a refund", {"refund": Noul("Refund?")})


async def test_calls_of_one_entry_share_its_endpoint_and_a_new_key_makes_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REQUEST_PATH_KEY", "sk-first-0123456789abcdef")
    async with FakeSystemOneServer() as server:
        entry = server.entry(api_key_env="REQUEST_PATH_KEY")
        client = SystemOneClient()
        try:
            first = await client.decide(_request(FIRST_CANARY), entry)
            shared = client._shared_endpoint(entry)
            second = await client.decide(_request(SECOND_CANARY), entry)
            assert client._shared_endpoint(entry) is shared
            monkeypatch.setenv("REQUEST_PATH_KEY", "sk-second-0123456789abcdef")
            await client.decide(_request(SECOND_CANARY), entry)
            assert client._shared_endpoint(entry) is not shared
        finally:
            await client.aclose()
    assert first.success
    assert second.success
    assert first.request_id == "fake-1"
    assert second.request_id == "fake-2"  # read from the reply's headers, any case
    sent = [headers["Authorization"] for headers in server.headers]
    assert sent == [
        "Bearer sk-first-0123456789abcdef",
        "Bearer sk-first-0123456789abcdef",
        "Bearer sk-second-0123456789abcdef",
    ]
    assert all(headers["Content-Type"] == "application/json" for headers in server.headers)


@pytest.mark.parametrize("status", [400, 500])
async def test_a_failure_after_a_success_is_redacted_for_its_own_request(status: int) -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry()
        client = SystemOneClient()
        try:
            await client.decide(_request(FIRST_CANARY), entry)
            server.fail_next(Fault.echo(status, "error"))
            with pytest.raises(StatusError) as caught:
                await client.decide(_request(SECOND_CANARY), entry)
        finally:
            await client.aclose()
    shown = str(caught.value)
    assert f"HTTP {status}" in shown
    assert SECOND_CANARY not in shown
    assert "[request text]" in shown
    assert caught.value.request_id is not None


async def test_a_call_that_succeeds_builds_no_redaction_and_a_failure_builds_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[DecisionRequest | None] = []
    real = Redaction.of

    def counted(request: DecisionRequest | None = None, **kw: Any) -> Redaction:
        built.append(request)
        return real(request, **kw)

    monkeypatch.setattr(Redaction, "of", staticmethod(counted))
    async with FakeSystemOneServer() as server:
        entry = server.entry()
        client = SystemOneClient()
        try:
            for _ in range(3):
                assert (await client.decide(_request(FIRST_CANARY), entry)).success
            assert built == []
            failing = _request(SECOND_CANARY)
            server.fail_next(Fault.echo(500, "error"))
            with pytest.raises(StatusError) as caught:
                await client.decide(failing, entry)
        finally:
            await client.aclose()
    assert built == [failing]
    assert SECOND_CANARY not in str(caught.value)

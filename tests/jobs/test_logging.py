"""Logging: through the stdlib under ``harness``, no handlers installed, never a key or a state."""

from __future__ import annotations

import logging

import pytest

from harness.decision import Choice, DecisionRequest, Noul
from harness.errors import ExternalServiceError, UnauthorizedError
from harness.jobs import Dispatcher, JobEvent, JobTimeoutError
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import RecordedPacing, catalog_of

KEY = "sk-canary-key-7f3a9c"
CANARY = "CANARY-STATE-a41e: the customer's secret is 4242-7717-9303"
REQUEST = DecisionRequest(
    {"ticket": CANARY},
    {"act": Choice("What now?", {"remind": None, "wait": None}), "late": Noul("Late?")},
)


def _subscriber_bug(event: JobEvent) -> None:
    raise RuntimeError("a subscriber's own bug")


async def test_no_key_and_no_state_reach_any_log_record(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG, logger="harness")
    monkeypatch.setenv("HARNESS_LOGGING_TEST_KEY", KEY)
    async with FakeSystemOneServer(api_key=KEY) as server:
        entry = server.entry(api_key_env="HARNESS_LOGGING_TEST_KEY")
        async with Dispatcher(catalog_of(entry), pacing=RecordedPacing()) as dispatcher:
            dispatcher.subscribe(_subscriber_bug)
            assert (await dispatcher.run(DecisionCall(Workflow(), REQUEST))).success
            server.fail_next(Fault.unavailable(f"echoing {KEY}"))
            assert (await dispatcher.run(DecisionCall(Workflow(), REQUEST))).success
            server.fail_next(Fault.bad_request(f"refused key {KEY}", shape="error"))
            with pytest.raises(ExternalServiceError) as refused:
                await dispatcher.run(DecisionCall(Workflow(), REQUEST))
            server.fail_next(Fault.unauthorized())
            with pytest.raises(UnauthorizedError):
                await dispatcher.run(DecisionCall(Workflow(), REQUEST))
            server.fail_next(Fault.hang())
            with pytest.raises(JobTimeoutError):
                await dispatcher.run(DecisionCall(Workflow(), REQUEST, timeout=0.2))
        assert server.headers[0]["Authorization"] == f"Bearer {KEY}"  # the key was used
    assert KEY not in str(refused.value)
    harness_records = [r for r in caplog.records if r.name.startswith("harness")]
    assert len(harness_records) >= 3  # calls, re-runs and the subscriber's bug were logged
    formatter = logging.Formatter()
    for record in caplog.records:
        text = formatter.format(record)
        for secret in (KEY, CANARY, "4242-7717-9303"):
            assert secret not in text, f"{record.name} logged a secret: {text[:300]}"
            assert secret not in repr(record.args)


def test_the_library_installs_no_handlers() -> None:

    names = [
        name
        for name in logging.root.manager.loggerDict
        if name == "harness" or name.startswith("harness.")
    ]
    assert "harness.jobs" in names
    for name in names:
        logger = logging.getLogger(name)
        assert logger.handlers == [], f"{name} has handlers {logger.handlers}"
        assert logger.propagate

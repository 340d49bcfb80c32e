"""Re-runs: the server's hint paces them (``retry-after-ms`` wins), else jittered backoff; a
spent budget names itself; a wait that would outlast the job's timeout fails at once."""

from __future__ import annotations

import random
import time

import pytest

from harness.errors import ExternalServiceError, UpstreamThrottleError
from harness.jobs import Dispatcher, EventKind, JobEvent, Pacing
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST, FakeClock, RecordedPacing, catalog_of


async def run_after(
    faults: list[Fault],
    pacing: Pacing,
    *,
    retries: int = 3,
    timeout: float = 60.0,
    clock: FakeClock | None = None,
) -> tuple[DecisionCall, FakeSystemOneServer, list[JobEvent], BaseException | None]:
    """One call against a server failing with ``faults`` first; the call, the server, the
    retry events and the failure (None when it answered)."""
    events: list[JobEvent] = []
    async with FakeSystemOneServer() as server:
        for fault in faults:
            server.fail_next(fault)
        entry = server.entry()
        now = time.monotonic if clock is None else clock
        async with Dispatcher(catalog_of(entry), pacing=pacing, clock=now) as dispatcher:
            dispatcher.subscribe(events.append, lambda event: event.kind is EventKind.RETRY)
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=retries, timeout=timeout)
            failure: BaseException | None = None
            try:
                response = await dispatcher.run(call)
                assert response.success
            except Exception as error:
                failure = error
    return call, server, events, failure


async def test_retry_after_seconds_is_the_pause() -> None:
    pacing = RecordedPacing()
    call, server, events, failure = await run_after([Fault.rate_limited(2)], pacing)
    assert failure is None
    assert pacing.slept == [2.0]
    (event,) = events
    assert (event.attempt, event.delay) == (1, 2.0)
    assert event.message is not None
    assert "HTTP 429" in event.message
    assert server.requests == 2
    assert [c.success for c in call.record] == [False, True]


async def test_retry_after_as_an_http_date_is_the_pause_until_then() -> None:
    pacing = RecordedPacing()
    _, _, _, failure = await run_after([Fault.rate_limited(3, as_date=True)], pacing)
    assert failure is None
    (pause,) = pacing.slept
    assert 1.0 <= pause <= 3.0  # an HTTP date has whole seconds


async def test_retry_after_ms_wins_over_retry_after() -> None:
    pacing = RecordedPacing()
    fault = Fault.rate_limited(5, retry_after_ms=250)
    _, _, events, failure = await run_after([fault], pacing)
    assert failure is None
    assert pacing.slept == [0.25]
    assert events[0].delay == 0.25


async def test_scale_multiplies_the_hint() -> None:
    pacing = RecordedPacing(scale=0.5)
    _, _, _, failure = await run_after([Fault.rate_limited(2)], pacing)
    assert failure is None
    assert pacing.slept == [1.0]


async def test_without_a_hint_the_pause_is_jittered_exponential_backoff_under_a_cap() -> None:
    pacing = RecordedPacing(base=0.5, cap=1.5, jitter=0.5, rng=random.Random(7))
    faults = [Fault.unavailable(), Fault.server_error(), Fault.connection_reset()]
    _, server, events, failure = await run_after(faults, pacing)
    assert failure is None
    assert server.requests == 4
    first, second, third = pacing.slept
    assert 0.25 <= first <= 0.5
    assert 0.5 <= second <= 1.0
    assert 0.75 <= third <= 1.5  # 2.0 capped at 1.5, then jittered
    assert [event.attempt for event in events] == [1, 2, 3]
    assert [event.delay for event in events] == pacing.slept


def test_pacing_is_reproducible_with_a_seeded_rng_and_validates_its_settings() -> None:
    one = Pacing(rng=random.Random(3))
    two = Pacing(rng=random.Random(3))
    assert [one.delay(i, None) for i in range(5)] == [two.delay(i, None) for i in range(5)]
    assert Pacing.immediate().delay(0, 30.0) == 0.0
    assert Pacing().delay(0, -4.0) == 0.0  # a negative hint is no pause
    with pytest.raises(ValueError, match="jitter"):
        Pacing(jitter=2.0)


@pytest.mark.parametrize("retries", [0, 2])
@pytest.mark.parametrize(
    ("fault", "error", "says"),
    [
        (Fault.rate_limited(0), UpstreamThrottleError, "HTTP 429"),
        (Fault.unavailable(), UpstreamThrottleError, "HTTP 503"),
        (Fault.overloaded(), UpstreamThrottleError, "HTTP 529"),
        (Fault.server_error(), ExternalServiceError, "HTTP 500"),
        (Fault.request_timeout(), ExternalServiceError, "HTTP 408"),
        (Fault.connection_reset(), ExternalServiceError, "could not be reached"),
    ],
    ids=["429", "503", "529", "500", "408", "reset"],
)
async def test_a_spent_budget_fails_naming_it(
    retries: int, fault: Fault, error: type[Exception], says: str
) -> None:
    pacing = RecordedPacing(scale=0.0)
    call, server, events, failure = await run_after([fault] * 5, pacing, retries=retries)
    assert type(failure) is error, failure
    assert isinstance(failure, ExternalServiceError)
    assert f"retry budget ({retries})" in failure.message
    assert says in failure.message
    assert server.requests == retries + 1
    assert len(pacing.slept) == len(events) == retries
    assert len(call.record) == retries + 1
    assert not any(c.success for c in call.record)


async def test_a_wait_that_would_outlast_the_timeout_fails_at_once_naming_the_wait() -> None:
    pacing = RecordedPacing()
    _, server, events, failure = await run_after([Fault.rate_limited(30)], pacing, timeout=5)
    assert isinstance(failure, ExternalServiceError)
    assert "a re-run was asked for after 30 s" in failure.message
    assert "would outlast" in failure.message
    assert failure.status == 429
    assert pacing.slept == []
    assert events == []
    assert server.requests == 1


async def test_pauses_count_against_the_timeout() -> None:
    clock = FakeClock()
    pacing = RecordedPacing(clock=clock)  # each pause moves the dispatcher's clock
    faults = [Fault.rate_limited(3), Fault.rate_limited(3)]
    _, server, _, failure = await run_after(faults, pacing, timeout=5, clock=clock)
    assert isinstance(failure, ExternalServiceError)
    assert "after 3 s" in failure.message
    assert "would outlast" in failure.message
    assert pacing.slept == [3.0]  # the first pause fitted; 3 s more would not
    assert server.requests == 2

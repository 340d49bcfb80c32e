"""Interop with ``laya-serve``: real fixed-window rate limits (429 with ``Retry-After: 60``).

Started with ``--host 127.0.0.1`` (it binds every address otherwise) and
``LAYA_SERVE_RATE_LIMIT_PER_MINUTE=3``: the fourth request of a 60 s window is refused. A re-run
after 60 s would outlast a job with a few seconds of timeout, so the call fails at once naming
the wait it was asked for; with a budget of 0 it fails naming the budget.
"""

from __future__ import annotations

import re

import pytest

from harness.catalog import Catalog
from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.errors import ExternalServiceError, UpstreamThrottleError
from harness.jobs import Dispatcher, EventKind, JobEvent
from harness.thinker import DecisionCall
from harness.tools import Workflow

from ..jobs.stack import RecordedPacing, eventually
from .conftest import StartPeer
from .peers import Peer, peer_entry

pytestmark = pytest.mark.interop

REQUEST = DecisionRequest(
    {"ticket": "The invoice total is wrong."},
    {
        "team": Choice("Which team?", {"billing": "money", "tech": None}),
        "urgent": Noul("Urgent?"),
        "anger": Score("How angry?", ("calm", "annoyed", "furious")),
    },
)

WINDOW = {"LAYA_SERVE_RATE_LIMIT_PER_MINUTE": "3"}


def start_laya(start_peer: StartPeer) -> Peer:
    """laya-serve on 127.0.0.1 with a window of three requests a minute."""
    return start_peer("laya-serve", env=WINDOW)


async def spend_the_window(dispatcher: Dispatcher) -> None:
    """Three answered calls: the window's whole allowance."""
    for _ in range(3):
        response = await dispatcher.run(DecisionCall(Workflow(), REQUEST, upstream_retries=0))
        assert response.success
        assert response.model == "laya-english"  # the checkpoint that answered the alias
        assert response.choice("team").probabilities == {"billing": 0.5, "tech": 0.5}
        assert response.noul("urgent").probability == 0.5
        assert response.score("anger").score == pytest.approx(1.0)
        assert response.input_tokens == 0  # laya reports zeros: tolerated


async def assert_requests(laya: Peer, expected: int) -> None:
    """laya received exactly ``expected`` decision requests (read from its access log, which
    it may write a moment after replying)."""
    line = '"POST /v1/systemone'
    await eventually(lambda: laya.log_count(line) >= expected)
    assert laya.log_count(line) == expected, laya.output()


async def test_a_window_429_whose_wait_outlasts_the_timeout_fails_at_once_naming_it(
    start_peer: StartPeer,
) -> None:
    laya = start_laya(start_peer)
    entry = peer_entry(laya.root, id="laya", tpm=1_000_000, rpm=600)
    events: list[JobEvent] = []
    pacing = RecordedPacing()  # real pacing arithmetic; a pause would be recorded here
    catalog = Catalog([entry], {"decision": "laya"})
    async with Dispatcher(catalog, pacing=pacing) as dispatcher:
        await spend_the_window(dispatcher)
        dispatcher.subscribe(events.append)
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=3, timeout=3.0)
        with pytest.raises(ExternalServiceError) as caught:
            await dispatcher.run(call)
        bucket = dispatcher.admission.bucket_for(entry)
        assert bucket.waiting == 0
        assert 0 <= bucket.level <= bucket.capacity
    # It failed at once: no pause was taken, and laya saw the three answered requests and the
    # one refused, nothing more.
    assert pacing.slept == []
    await assert_requests(laya, 4)
    error = caught.value
    assert error.status == 429
    assert re.search(r"a re-run was asked for after 6[01] s", error.message), error.message
    assert "would outlast" in error.message
    assert "Rate limit exceeded" in error.message  # read from laya's {"error": {...}} body
    (recorded,) = call.record.calls
    assert not recorded.success
    assert recorded.reason is not None
    assert "HTTP 429" in recorded.reason
    kinds = [event.kind for event in events]
    assert EventKind.RETRY not in kinds
    assert kinds[-1] is EventKind.FAILED


async def test_a_window_429_with_a_budget_of_0_fails_naming_the_budget(
    start_peer: StartPeer,
) -> None:
    laya = start_laya(start_peer)
    entry = peer_entry(laya.root, id="laya", max_concurrent=2)
    pacing = RecordedPacing()
    catalog = Catalog([entry], {"decision": "laya"})
    async with Dispatcher(catalog, pacing=pacing) as dispatcher:
        await spend_the_window(dispatcher)
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=0, timeout=30.0)
        with pytest.raises(UpstreamThrottleError) as caught:
            await dispatcher.run(call)
        gate = dispatcher.admission.gate_for(entry)
        assert (gate.in_use, gate.waiting) == (0, 0)
    assert pacing.slept == []
    await assert_requests(laya, 4)
    assert caught.value.status == 429
    assert "retry budget (0)" in caught.value.message
    assert "Rate limit exceeded" in caught.value.message
    assert len(call.record) == 1


async def test_an_unknown_model_is_a_422_read_from_laya_error_object(
    start_peer: StartPeer,
) -> None:
    laya = start_peer("laya-serve")
    entry = peer_entry(laya.root, wire_model_id="no-such-model")
    async with Dispatcher(Catalog([entry], {"decision": "peer"})) as dispatcher:
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=3)
        with pytest.raises(ExternalServiceError) as caught:
            await dispatcher.run(call)
    assert type(caught.value) is ExternalServiceError
    assert caught.value.status == 422
    assert "unknown model 'no-such-model'" in caught.value.message
    assert len(call.record) == 1

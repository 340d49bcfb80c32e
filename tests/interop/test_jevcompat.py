"""Interop with ``jevcompat``: the reference System One mock nobody here wrote.

Every call goes through the whole stack: a catalog entry with provider ``systemone``, the
dispatcher (pricing, admission, paced re-runs), :class:`DecisionCall`, the observable
:class:`SystemOneClient`. The faulty servers are ``jevcompat mock --fault NAME`` processes; the
``busy_every`` server is jevcompat's own in-process API (a thread serving 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator

import attrs
import pytest
from jevcompat.mock import MockConfig, Running

from harness.catalog import Catalog, CatalogEntry
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
)
from harness.errors import (
    ExternalServiceError,
    NotAnAnswerError,
    PermissionDeniedError,
    UnauthorizedError,
    UpstreamThrottleError,
)
from harness.jobs import Dispatcher, EventKind, JobEvent, Pacing
from harness.thinker import DecisionCall
from harness.tools import Workflow

from ..jobs.stack import RecordedPacing
from .conftest import StartPeer
from .peers import LOOPBACK, Peer, peer_entry

pytestmark = pytest.mark.interop

KEY = "jevcompat-interop-key-5c1e"
CANARY = "CANARY-STATE-0d5f: never quote me"


def every_shape(state: object) -> DecisionRequest:
    """One request asking a choice, a described and a bare noul, and a score."""
    return DecisionRequest(
        state,  # type: ignore[arg-type]  # the states below are all JSON values
        {
            "team": Choice(
                "Which team should handle this?",
                {"Billing": "invoices, charges, refunds", "Tech": None, "Sales": "new deals"},
            ),
            "urgent": Noul("Is it urgent?", when_true="the customer cannot work"),
            "polite": Noul("Is the customer polite?"),
            "anger-level": Score(
                "How angry is the customer?", ("calm", "annoyed", "furious", "livid")
            ),
        },
    )


STATES: dict[str, object] = {
    "text": "The invoice total is wrong and I was charged twice.",
    "object": {"ticket": 4711, "text": "The invoice total is wrong.", "tags": ["billing"]},
    "array": ["charged twice", "invoice 4711", {"amount": 12.5}],
}


def assert_valid(response: DecisionResponse, request: DecisionRequest) -> None:
    """Every answer has the shape asked and probabilities a conformant server gives."""
    assert response.success
    assert list(response.answers) == list(request.questions)
    for question_id, question in request.questions.items():
        answer = response.answers[question_id]
        if isinstance(question, Choice):
            assert isinstance(answer, ChoiceAnswer)
            assert list(answer.probabilities) == list(question.options)
            assert all(0.0 <= p <= 1.0 for p in answer.probabilities.values())
            assert math.fsum(answer.probabilities.values()) == pytest.approx(1.0, abs=1e-6)
            top = max(answer.probabilities, key=lambda option: answer.probabilities[option])
            assert answer.choice == top
            assert 0.0 <= answer.confidence <= 1.0
        elif isinstance(question, Noul):
            assert isinstance(answer, NoulAnswer)
            assert 0.0 < answer.probability < 1.0
        else:
            assert isinstance(question, Score)
            assert isinstance(answer, ScoreAnswer)
            assert answer.levels == question.levels
            assert math.fsum(answer.probabilities) == pytest.approx(1.0, abs=1e-6)
            expected = math.fsum(i * p for i, p in enumerate(answer.probabilities))
            assert answer.score == pytest.approx(expected, abs=1e-6)
            assert 0.0 <= answer.confidence <= 1.0


def catalog_of(entry: CatalogEntry) -> Catalog:
    """A catalog with ``entry`` pinned as the decision seat."""
    return Catalog([entry], {"decision": entry.id})


async def decide(
    entry: CatalogEntry,
    request: DecisionRequest,
    *,
    retries: int = 3,
    timeout: float = 10.0,
) -> tuple[DecisionCall, DecisionResponse | BaseException, list[JobEvent]]:
    """One decision call through a fresh dispatcher; its outcome (response or failure) and
    the events it published."""
    events: list[JobEvent] = []
    async with Dispatcher(catalog_of(entry), pacing=Pacing.immediate()) as dispatcher:
        dispatcher.subscribe(events.append)
        call = DecisionCall(Workflow(), request, upstream_retries=retries, timeout=timeout)
        try:
            outcome: DecisionResponse | BaseException = await dispatcher.run(call)
        except Exception as error:
            outcome = error
        gate = dispatcher.admission.gate_for(entry)
        assert (gate.in_use, gate.waiting) == (0, 0)
    return call, outcome, events


# -- a clean reference server ------------------------------------------------------------------


@pytest.mark.parametrize("state_name", list(STATES))
async def test_every_question_shape_is_answered_with_valid_probabilities(
    jevcompat_mock: Peer, state_name: str
) -> None:
    request = every_shape(STATES[state_name])
    entry = peer_entry(jevcompat_mock.root)
    call, outcome, events = await decide(entry, request)
    assert isinstance(outcome, DecisionResponse), outcome
    assert_valid(outcome, request)
    assert outcome.model == "jevcompat-mock-0.1"  # the server names itself, not the alias sent
    assert outcome.request_id == "req_mock"
    assert outcome.input_tokens is not None
    assert outcome.input_tokens > 0
    (recorded,) = call.record.calls
    assert recorded.success
    assert recorded.reason is None
    assert recorded.answers == outcome.answers
    assert recorded.model == "jevcompat-mock-0.1"
    assert recorded.input_tokens == outcome.input_tokens
    assert recorded.counted_input_tokens is not None
    assert recorded.counted_input_tokens > 0
    assert recorded.output_tokens == 0  # the mock reports output tokens; a decision bills none
    assert [event.kind for event in events] == [
        EventKind.SCHEDULED,
        EventKind.STARTED,
        EventKind.COMPLETED,
    ]


async def test_answers_are_deterministic_and_ignore_question_ids_and_order(
    jevcompat_mock: Peer,
) -> None:
    entry = peer_entry(jevcompat_mock.root)
    request = every_shape(STATES["text"])
    renamed = DecisionRequest(
        request.state, {f"q-{qid}": q for qid, q in reversed(list(request.questions.items()))}
    )
    _, first, _ = await decide(entry, request)
    _, again, _ = await decide(entry, request)
    _, moved, _ = await decide(entry, renamed)
    assert isinstance(first, DecisionResponse)
    assert isinstance(again, DecisionResponse)
    assert isinstance(moved, DecisionResponse)
    assert first.answers == again.answers
    assert {f"q-{qid}": a for qid, a in first.answers.items()} == dict(moved.answers)


async def test_a_one_option_choice_is_answered_locally_and_the_rest_remotely(
    jevcompat_mock: Peer,
) -> None:
    request = DecisionRequest(
        "state",
        {"only": Choice("Which?", {"Solo": None}), "yes": Noul("Yes?")},
    )
    _, outcome, _ = await decide(peer_entry(jevcompat_mock.root), request)
    assert isinstance(outcome, DecisionResponse)
    only = outcome.choice("only")
    assert (only.choice, dict(only.probabilities), only.confidence) == ("Solo", {"Solo": 1.0}, 1.0)
    assert 0.0 < outcome.noul("yes").probability < 1.0


# -- 429 every Nth request (jevcompat's Python API, served by a thread on 127.0.0.1) ----------


@pytest.fixture
def busy_mock(request: pytest.FixtureRequest) -> Iterator[tuple[Running, MockConfig]]:
    """``jevcompat.mock.Running`` answering 429 (``Retry-After: 0``) every Nth request."""
    config = MockConfig(busy_every=request.param)
    with Running(config) as running:
        assert running.url.startswith(f"http://{LOOPBACK}:")
        yield running, config


@pytest.mark.parametrize("busy_mock", [3], indirect=True)
async def test_busy_429s_are_retried_within_budget_one_call_after_another(
    busy_mock: tuple[Running, MockConfig],
) -> None:
    running, config = busy_mock
    entry = peer_entry(running.url, max_concurrent=1)
    request = every_shape(STATES["object"])
    retries: list[JobEvent] = []
    pacing = RecordedPacing()  # real pacing arithmetic; each pause is recorded, not slept
    async with Dispatcher(catalog_of(entry), pacing=pacing) as dispatcher:
        dispatcher.subscribe(retries.append, lambda event: event.kind is EventKind.RETRY)
        calls = [DecisionCall(Workflow(), request, upstream_retries=1) for _ in range(12)]
        responses = [await dispatcher.run(call) for call in calls]
    for response in responses:
        assert_valid(response, request)
    # One call after another, every third request is busy and its re-run is the next request.
    assert config.requests == 12 + len(retries)
    assert len(retries) == config.requests // 3 == 5
    assert all(event.delay == 0.0 for event in retries)  # Retry-After: 0 honoured, no backoff
    assert pacing.slept == [0.0] * 5  # each re-run paced by the hint alone: no backoff
    retried = [call for call in calls if len(call.record) == 2]
    assert len(retried) == 5
    for call in retried:
        busy, answered = call.record.calls
        assert not busy.success
        assert busy.reason is not None
        assert "HTTP 429" in busy.reason
        assert "slow down" in busy.reason
        assert answered.success


@pytest.mark.parametrize("busy_mock", [2], indirect=True)
async def test_busy_429s_under_concurrency_all_complete(
    busy_mock: tuple[Running, MockConfig],
) -> None:
    running, config = busy_mock
    entry = peer_entry(running.url, max_concurrent=8)
    request = every_shape(STATES["text"])
    async with Dispatcher(catalog_of(entry)) as dispatcher:
        calls = [DecisionCall(Workflow(), request, upstream_retries=12) for _ in range(40)]
        responses = await asyncio.gather(*(dispatcher.run(call) for call in calls))
        gate = dispatcher.admission.gate_for(entry)
        assert (gate.in_use, gate.waiting) == (0, 0)
    assert len(responses) == 40
    for response in responses:
        assert_valid(response, request)
    attempts = sum(len(call.record) for call in calls)
    assert attempts == config.requests
    assert attempts - 40 == config.requests // 2  # every busy reply cost exactly one re-run


@pytest.mark.parametrize("busy_mock", [1], indirect=True)
async def test_a_429_with_a_budget_of_0_fails_naming_the_budget(
    busy_mock: tuple[Running, MockConfig],
) -> None:
    running, config = busy_mock
    call, outcome, events = await decide(peer_entry(running.url), every_shape("state"), retries=0)
    assert isinstance(outcome, UpstreamThrottleError)
    assert "retry budget (0)" in outcome.message
    assert "HTTP 429" in outcome.message
    assert "slow down" in outcome.message
    assert outcome.status == 429
    assert config.requests == 1
    (recorded,) = call.record.calls
    assert not recorded.success
    assert [event.kind for event in events][-1] is EventKind.FAILED
    assert not any(event.kind is EventKind.RETRY for event in events)


# -- faults: `jevcompat mock --fault NAME` processes -------------------------------------------

NOT_ANSWERS = {
    "xssi-200": "not JSON",
    "first-question-only": "no answer for question 'urgent'",
    "noul-range": "not a probability in [0, 1]",
    "choice-key-case": "no probability for option",
    "score-keys-1-based": "no probability for level",
    "confidence-over": "confidence is 1.5",
}


@pytest.mark.parametrize("fault", list(NOT_ANSWERS))
async def test_a_2xx_that_is_not_an_answer_surfaces_as_itself_without_a_re_run(
    start_peer: StartPeer, fault: str
) -> None:
    peer = start_peer("jevcompat", "mock", "--fault", fault)
    call, outcome, events = await decide(peer_entry(peer.root), every_shape(CANARY), retries=3)
    assert isinstance(outcome, NotAnAnswerError), outcome
    assert outcome.status == 200
    assert "not an answer" in outcome.message
    assert NOT_ANSWERS[fault] in outcome.message
    assert len(call.record) == 1  # terminal: the budget of 3 is not touched
    assert not any(event.kind is EventKind.RETRY for event in events)


REFUSALS = {
    # fault(s) -> (status, the server's message as our error must carry it)
    ("reject-jev-latest",): (404, "Model not served: jev-latest"),  # detail{} shape
    ("strict-ids",): (422, "body.questions.anger-level: Question id must match"),  # detail[]
    ("strict-ids", "validation-400"): (400, "Question id must match [A-Za-z0-9_]+"),  # error: str
    ("strict-ids", "text-errors"): (422, "Question id must match [A-Za-z0-9_]+"),  # plain text
    ("no-null-description",): (422, "body.questions.team.choice.criteria.Tech"),
    ("wrong-route",): (404, "No route /v1/systemone"),
}


@pytest.mark.parametrize("faults", list(REFUSALS), ids=["+".join(f) for f in REFUSALS])
async def test_a_4xx_surfaces_as_itself_with_the_servers_message_and_no_re_run(
    start_peer: StartPeer, faults: tuple[str, ...]
) -> None:
    flags = [arg for fault in faults for arg in ("--fault", fault)]
    peer = start_peer("jevcompat", "mock", *flags)
    call, outcome, events = await decide(peer_entry(peer.root), every_shape(CANARY), retries=3)
    status, message = REFUSALS[faults]
    assert type(outcome) is ExternalServiceError, outcome
    assert outcome.status == status
    assert f"answered HTTP {status}: " in outcome.message
    assert message in outcome.message
    assert CANARY not in outcome.message
    assert len(call.record) == 1
    assert call.record.calls[0].reason == outcome.message
    assert not any(event.kind is EventKind.RETRY for event in events)


async def test_a_host_serving_another_path_is_reached_through_the_entrys_path(
    start_peer: StartPeer,
) -> None:
    peer = start_peer("jevcompat", "mock", "--fault", "wrong-route")
    request = every_shape("state")
    _, outcome, _ = await decide(peer_entry(peer.root, path="/v1/evaluate"), request)
    assert isinstance(outcome, DecisionResponse), outcome
    assert_valid(outcome, request)


@pytest.mark.parametrize("fault", ["extra-answer", "nan", "unprefixed-extra", "no-usage"])
async def test_tolerated_deviations_still_answer(start_peer: StartPeer, fault: str) -> None:
    peer = start_peer("jevcompat", "mock", "--fault", fault)
    request = every_shape("state")
    call, outcome, _ = await decide(peer_entry(peer.root), request)
    assert isinstance(outcome, DecisionResponse), outcome
    assert_valid(outcome, request)
    assert "__extra__" not in outcome.answers
    (recorded,) = call.record.calls
    assert recorded.success
    if fault == "no-usage":
        assert recorded.input_tokens is None  # nothing billed was reported ...
        assert recorded.counted_input_tokens is not None  # ... our own count remains


async def test_keys_are_sent_as_bearer_and_refusals_are_auth_failures(
    start_peer: StartPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = start_peer("jevcompat", "mock", "--key", KEY)
    entry = peer_entry(peer.root, api_key_env="JEVCOMPAT_INTEROP_KEY")
    request = every_shape("state")

    monkeypatch.delenv("JEVCOMPAT_INTEROP_KEY", raising=False)
    _, missing, _ = await decide(entry, request)
    assert isinstance(missing, PermissionDeniedError), missing
    assert missing.status == 403
    assert "Must supply an API key!" in missing.message
    assert "no key was sent" in missing.message
    assert "JEVCOMPAT_INTEROP_KEY" in missing.message

    monkeypatch.setenv("JEVCOMPAT_INTEROP_KEY", "not-the-key")
    call, wrong, _ = await decide(entry, request)
    assert isinstance(wrong, UnauthorizedError), wrong
    assert wrong.status == 401
    assert "Cannot authenticate with the server." in wrong.message
    assert "not-the-key" not in wrong.message
    assert len(call.record) == 1  # an auth failure is never re-run

    monkeypatch.setenv("JEVCOMPAT_INTEROP_KEY", KEY)
    _, answered, _ = await decide(entry, request)
    assert isinstance(answered, DecisionResponse), answered
    assert_valid(answered, request)


async def test_a_plain_text_401_is_read_as_an_auth_failure(start_peer: StartPeer) -> None:
    peer = start_peer("jevcompat", "mock", "--key", KEY, "--fault", "auth-plain")
    _, outcome, _ = await decide(peer_entry(peer.root), every_shape("state"))
    assert isinstance(outcome, UnauthorizedError), outcome
    assert "HTTP 401" in outcome.message
    assert "Unauthorized" in outcome.message
    assert "names no api_key_env" in outcome.message


# -- no answer at all: a peer that is down, then comes back on the same port ------------------


async def test_a_peer_that_is_down_is_retried_within_budget_then_named(
    start_peer: StartPeer,
) -> None:
    peer = start_peer("jevcompat", "mock")
    peer.stop()  # the port is known and nothing listens there now
    call, outcome, events = await decide(peer_entry(peer.root), every_shape("state"), retries=2)
    assert type(outcome) is ExternalServiceError, outcome
    assert "could not be reached" in outcome.message
    assert "retry budget (2)" in outcome.message
    assert len(call.record) == 3
    assert [event.attempt for event in events if event.kind is EventKind.RETRY] == [1, 2]


@attrs.frozen
class _RevivingPacing(Pacing):
    """Pacing that starts a stopped peer again on its port during the first pause."""

    revive: Peer | None = attrs.field(default=None, eq=False)

    async def sleep(self, seconds: float) -> None:
        """Start the peer (same port) unless it runs, then pause as usual."""
        if self.revive is not None and not self.revive.running:
            await asyncio.to_thread(self.revive.start)
        await super().sleep(seconds)


async def test_a_peer_that_comes_back_on_its_port_answers_the_re_run(
    start_peer: StartPeer,
) -> None:
    first = start_peer("jevcompat", "mock")
    first.stop()
    peer = Peer("jevcompat", ("mock",), port=first.port)
    entry = peer_entry(first.root)
    request = every_shape("state")
    pacing = _RevivingPacing(scale=0.0, revive=peer)
    try:
        async with Dispatcher(catalog_of(entry), pacing=pacing) as dispatcher:
            call = DecisionCall(Workflow(), request, upstream_retries=1, timeout=30)
            response = await dispatcher.run(call)
    finally:
        peer.stop()
    assert_valid(response, request)
    down, answered = call.record.calls
    assert not down.success
    assert down.reason is not None
    assert "could not be reached" in down.reason
    assert answered.success

"""Servers that quote the request back: neither the key nor the state ever comes out.

An echoing fake server answers every status class with every error-body shape, quoting the
``Authorization`` header (whole, URL-encoded, cut, upper-cased) and the whole request body. A
canary sits in the key and one in the state. Through the whole stack (dispatcher, decision call,
observable client, the System One and OpenAI clients) neither canary, nor any 8-character piece
of the key, may appear in an exception (its chain included), a log record (DEBUG on), an event,
or the job's record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from harness.catalog import Catalog
from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.errors import HarnessError
from harness.jobs import Dispatcher, JobEvent, Pacing
from harness.providers._redact import KEY_MASK, TEXT_MASK, Redaction
from harness.testing import ECHO_SHAPES, EchoShape, FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

KEY_CANARY = "KEYCANARY"
KEY = f"sk-live-{KEY_CANARY}-9f2c4e7a1b3d5f60a8c2e4f6b8d0a1c3"
STATE_CANARY = "STATECANARY-5be1"
KEY_ENV = "ECHO_TEST_KEY"

STATUSES = (200, 400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 529)
"""Every status class: 2xx (a body that is not an answer), 4xx, 408/429, 5xx."""

REQUEST = DecisionRequest(
    {"ticket": f"my card was charged twice {STATE_CANARY}", "tags": ["billing", STATE_CANARY]},
    {
        "tone": Choice("What tone does the customer take?", {"calm": "polite", "angry": None}),
        "q1": Noul("Does the customer want a refund?", when_true="asks for money back"),
        "anger": Score("How angry is the customer?", ("calm", "annoyed", "livid")),
    },
)


def key_pieces() -> set[str]:
    return {KEY[i : i + 8] for i in range(len(KEY) - 7)}


def leaks(text: str) -> list[str]:
    """What of the secrets ``text`` shows (compared case-insensitively)."""
    lowered = text.lower()
    found = [s for s in (KEY_CANARY, STATE_CANARY) if s.lower() in lowered]
    found += [piece for piece in key_pieces() if piece.lower() in lowered]
    return found


def chain(error: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def shown(error: BaseException) -> list[str]:
    texts = [str(error), repr(error), *map(str, error.args)]
    if isinstance(error, HarnessError):
        texts.append(error.message)
        texts.append(error.explain_to_llm())
    return texts


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.mark.parametrize("provider", ["systemone", "openai"])
async def test_no_echoing_server_makes_harness_show_the_key_or_the_state(
    provider: str, debug_logs: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    texts: list[str] = []
    outcomes: list[str] = []
    async with FakeSystemOneServer() as server:
        entry = server.entry(id=f"echo-{provider}", provider=provider, api_key_env=KEY_ENV)
        catalog = Catalog([entry], {"decision": entry.id})
        events: list[JobEvent] = []
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            dispatcher.subscribe(events.append)
            for status in STATUSES:
                for shape in ECHO_SHAPES:
                    server.fail_next(Fault.echo(status, shape))
                    call = DecisionCall(Workflow(), REQUEST, upstream_retries=0, timeout=10)
                    with pytest.raises(HarnessError) as failed:
                        await dispatcher.run(call)
                    for error in chain(failed.value):
                        texts.extend(shown(error))
                    (made,) = call.record.calls
                    assert not made.success
                    texts.extend([repr(made), str(made.reason)])
                    outcomes.append(f"{status}/{shape}: {failed.value}")
        assert server.requests == len(STATUSES) * len(ECHO_SHAPES)
        # The server really did echo the secrets (else the test proves nothing).
        assert all(KEY in headers.get("Authorization", "") for headers in server.headers)
    for event in events:
        texts.append(repr(event))
        if event.message is not None:
            texts.append(event.message)
        if event.error is not None:
            texts.extend(t for error in chain(event.error) for t in shown(error))
    for record in debug_logs.records:
        texts.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            texts.extend(t for error in chain(record.exc_info[1]) for t in shown(error))
    assert len(outcomes) == len(STATUSES) * len(ECHO_SHAPES)
    leaked = {text[:300]: leaks(text) for text in texts if leaks(text)}
    assert leaked == {}
    # The messages stay useful: status named, masks visible, field paths kept.
    joined = "\n".join(outcomes)
    assert KEY_MASK in joined
    assert TEXT_MASK in joined
    for status in STATUSES[1:]:
        assert f"HTTP {status}" in joined
    detail_list = [o for o in outcomes if o.startswith("422/detail_list")]
    assert "body.questions.q1.criteria" in detail_list[0]


@pytest.mark.parametrize("shape", ECHO_SHAPES)
async def test_the_client_alone_never_shows_them_either(
    shape: EchoShape, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.providers import SystemOneClient

    monkeypatch.setenv(KEY_ENV, KEY)
    client = SystemOneClient()
    async with FakeSystemOneServer() as server:
        entry = server.entry(api_key_env=KEY_ENV)
        try:
            for status in (200, 401, 422, 503):
                server.fail_next(Fault.echo(status, shape))
                with pytest.raises(HarnessError) as failed:
                    await client.decide(REQUEST, entry)
                for error in chain(failed.value):
                    for text in shown(error):
                        assert leaks(text) == [], text
        finally:
            await client.aclose()


@pytest.mark.parametrize(
    "form",
    [
        KEY,
        KEY[:39],
        KEY[12:],
        KEY[5:13],
        KEY.upper(),
        f"Bearer {KEY}",
        KEY.replace("-", "%2D"),
        "sk-live-KEYCANARY-9f2c4e7a1b3d5f60a8c2e4f6b8d0a1c3".lower(),
    ],
)
def test_the_key_is_masked_in_any_form(form: str) -> None:
    redaction = Redaction.of(key=KEY)
    for text in (form, f"x{form}y", f"the key {form} was refused"):
        out = redaction.apply(text)
        assert leaks(out) == [], out
        assert KEY_MASK in out


def test_request_text_is_masked_and_field_paths_kept() -> None:
    redaction = Redaction.of(REQUEST, key=KEY)
    said = (
        "answers.tone: field required; body.questions.q1.criteria: the customer wants "
        f"it; input was my card was charged twice {STATE_CANARY} for What tone does the "
        "customer take?"
    )
    out = redaction.apply(said)
    assert leaks(out) == []
    assert out.startswith("answers.tone: field required; body.questions.q1.criteria:")
    assert "What tone does" not in out
    assert "charged twice" not in out
    assert TEXT_MASK in out


def test_redaction_runs_before_the_cut() -> None:
    redaction = Redaction.of(key=KEY)
    for offset in range(150, 210):
        text = "x" * offset + KEY
        out = redaction.message(text)
        assert leaks(out) == [], (offset, out)
        assert len(out) <= 200


def test_a_large_state_is_masked_wherever_the_echo_cuts_it() -> None:
    state = "".join(f"line {n} of a long ticket; " for n in range(40_000)) + STATE_CANARY
    redaction = Redaction.of(DecisionRequest({"doc": state}, {"q": Noul("Long?")}), key=KEY)
    for start in (0, 123_457, len(state) - 500):
        said = f"refused input {state[start : start + 700]} with key {KEY[3:20]}"
        out = redaction.message(said)
        assert leaks(out) == []
        assert "of a long ticket" not in out
        assert out.startswith("refused input")
        assert out.endswith("with key ***")
        assert TEXT_MASK in out

"""The embedded provider: sparrow-decider in-process behind the DecisionClient protocol."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import AsyncIterator, Mapping

import pytest
from sparrow_decider import Decider

from harness.catalog import CatalogEntry
from harness.decision import Choice, ChoiceAnswer, DecisionRequest, Noul, Score, systemone
from harness.errors import ExternalServiceError, InvalidInputError, TransientError
from harness.providers import DecisionClient, _embedded
from harness.providers._embedded import INLINE_BYTES, NOUL_AS_CHOICE, EmbeddedDecisionClient

HANG_GUARD = 30.0
"""Seconds after which a broken client fails the test instead of hanging it."""

STATE = "Ticket: I was charged twice for my Pro plan this month and want the money back."


def entry(**overrides: object) -> CatalogEntry:
    fields: dict[str, object] = {
        "id": "embedded",
        "provider": "embedded",
        "wire_model_id": "sparrow-decider",
        "max_context_tokens": 32768,
        "max_concurrent": 2,
    }
    fields.update(overrides)
    return CatalogEntry(**fields)  # type: ignore[arg-type]  # keyword fields of the entry


@pytest.fixture
async def client() -> AsyncIterator[EmbeddedDecisionClient]:
    embedded = EmbeddedDecisionClient()
    yield embedded
    await embedded.aclose()


def test_it_is_a_decision_client_and_its_default_follows_the_measurement() -> None:
    embedded: DecisionClient = EmbeddedDecisionClient()
    assert isinstance(embedded, EmbeddedDecisionClient)
    assert EmbeddedDecisionClient().noul_as_choice is NOUL_AS_CHOICE is False
    with pytest.raises(ValueError, match="max_workers must be >= 1"):
        EmbeddedDecisionClient(max_workers=0)


async def test_choice_noul_and_score_are_answered_with_valid_probabilities(
    client: EmbeddedDecisionClient,
) -> None:
    request = DecisionRequest(
        STATE,
        {
            "intent": Choice(
                "What does the customer want?",
                {"refund": "money back", "bug": None, "sales": "buy more"},
            ),
            "refund": Noul("Is the customer asking for money back?"),
            "urgency": Score(
                "How urgent is the ticket?", ["not urgent", "soon", "now", "immediately"]
            ),
        },
    )
    response = await client.decide(request, entry())
    assert response.success
    assert response.input_tokens is None  # sparrow reports zeros: billed tokens unknown
    assert response.model == "sparrow-nano-general-v1.1"
    assert response.latency > 0
    choice = response.choice("intent")
    assert list(choice.probabilities) == ["refund", "bug", "sales"]
    assert math.isclose(sum(choice.probabilities.values()), 1.0, abs_tol=1e-3)
    assert choice.choice == max(choice.probabilities, key=choice.probabilities.__getitem__)
    assert all(0 <= p <= 1 for p in choice.probabilities.values())
    assert 0 <= choice.confidence <= 1
    assert 0 <= response.noul("refund").probability <= 1
    score = response.score("urgency")
    assert len(score.probabilities) == 4
    assert math.isclose(sum(score.probabilities), 1.0, abs_tol=1e-3)
    assert math.isclose(
        score.score, sum(i * p for i, p in enumerate(score.probabilities)), abs_tol=1e-3
    )
    assert 0 <= score.score <= 3


async def test_answers_are_the_models_own_both_ways_of_asking_a_noul() -> None:
    noul = Noul(
        "Is the customer asking for money back?", when_true="a refund", when_false="no refund"
    )
    request = DecisionRequest(STATE, {"refund": noul})
    model = Decider.load()
    as_noul = EmbeddedDecisionClient(noul_as_choice=False)
    as_choice = EmbeddedDecisionClient(noul_as_choice=True)
    try:
        p_noul = (await as_noul.decide(request, entry())).noul("refund").probability
        p_choice = (await as_choice.decide(request, entry())).noul("refund").probability
    finally:
        await as_noul.aclose()
        await as_choice.aclose()
    wire_noul = {
        "type": "noul",
        "instructions": noul.instructions,
        "criteria": {"true": "a refund", "false": "no refund"},
    }
    assert p_noul == model.ask(STATE, {"q": wire_noul})["q"]["noul"]
    wire_choice = {
        "type": "choice",
        "instructions": noul.instructions,
        "criteria": {"yes": "a refund", "no": "no refund"},
    }
    assert p_choice == model.ask(STATE, {"q": wire_choice})["q"]["probabilities"]["yes"]
    assert p_noul != p_choice


async def test_a_one_option_choice_is_answered_locally_with_certainty(
    client: EmbeddedDecisionClient,
) -> None:
    only = DecisionRequest(STATE, {"next": Choice("What next?", {"finish": "stop here"})})
    response = await client.decide(only, entry())
    answer = response.choice("next")
    assert (answer.choice, dict(answer.probabilities), answer.confidence) == (
        "finish",
        {"finish": 1.0},
        1.0,
    )
    assert response.latency == 0.0
    assert response.input_tokens == 0
    mixed = DecisionRequest(
        STATE, {"next": Choice("What next?", {"finish": None}), "refund": Noul("Refund?")}
    )
    both = await client.decide(mixed, entry())
    assert both.choice("next").probabilities == {"finish": 1.0}
    assert list(both.answers) == ["next", "refund"]
    # Answered here or by the model, a response names the same served model: the loaded one.
    assert response.model == both.model == "sparrow-nano-general-v1.1"


async def test_a_locally_answered_request_names_the_loaded_model_and_loads_it() -> None:
    only = DecisionRequest(STATE, {"next": Choice("What next?", {"finish": None})})
    fresh = EmbeddedDecisionClient()
    try:
        # A named sparrow model, even when nothing needs asking, is the model the response names.
        robot = await fresh.decide(only, entry(wire_model_id="nano-robot"))
        assert robot.model == Decider.load("nano-robot").name
        # A model that does not exist fails on first use, whatever the question.
        with pytest.raises(ExternalServiceError, match=r"entry 'odd': .*no model 'no-such-model'"):
            await fresh.decide(only, entry(id="odd", wire_model_id="no-such-model"))
    finally:
        await fresh.aclose()


async def test_limits_are_refused_before_asking(client: EmbeddedDecisionClient) -> None:
    options = Choice("Which?", {"a": None, "b": None, "c": None, "d": None})
    with pytest.raises(
        InvalidInputError, match=r"'pick' 4: entry 'embedded' accepts at most 3 options"
    ):
        await client.decide(DecisionRequest(STATE, {"pick": options}), entry(max_options=3))
    levels = Score("How much?", ["1", "2", "3", "4"])
    with pytest.raises(
        InvalidInputError, match=r"'rate' 4: entry 'embedded' accepts at most 3 levels"
    ):
        await client.decide(DecisionRequest(STATE, {"rate": levels}), entry(max_levels=3))
    eleven = Score("How much?", [str(i) for i in range(11)])
    with pytest.raises(InvalidInputError, match=r"'wide' 11: .*at most 10 levels"):
        await client.decide(DecisionRequest(STATE, {"wide": eleven}), entry())


async def test_a_refusal_of_the_limits_is_raised_when_decide_is_awaited_as_an_async_def_would(
    client: EmbeddedDecisionClient,
) -> None:
    options = Choice("Which?", {"a": None, "b": None, "c": None, "d": None})
    asked = client.decide(DecisionRequest(STATE, {"pick": options}), entry(max_options=3))
    assert asyncio.iscoroutine(asked)  # made without raising: gather() may take it
    outcomes = await asyncio.gather(asked, return_exceptions=True)
    assert isinstance(outcomes[0], InvalidInputError)
    assert "accepts at most 3 options" in str(outcomes[0])


async def test_the_model_reads_the_questions_of_encode_request_made_once_per_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request = DecisionRequest(
        STATE,
        {
            "pick": Choice("Which?", {"a": "the first", "b": None}),
            "yes": Noul("Sure?", when_true="it is"),
            "rate": Score("How much?", ["1", "2", "3"]),
        },
    )
    read: list[Mapping[str, object]] = []
    real = _embedded._ask

    def ask(model: Decider, chosen: CatalogEntry, body: Mapping[str, object]) -> dict[str, object]:
        read.append(body)
        return real(model, chosen, body)  # type: ignore[arg-type]  # sparrow's own model

    monkeypatch.setattr(_embedded, "_ask", ask)
    fresh = EmbeddedDecisionClient(noul_as_choice=False)
    try:
        first = await fresh.decide(request, entry())
        second = await fresh.decide(request, entry())
    finally:
        await fresh.aclose()
    body = systemone.encode_request(request, "sparrow-decider")
    assert [dict(b) for b in read] == [{"state": body["state"], "questions": body["questions"]}] * 2
    assert read[0]["questions"] is read[1]["questions"]  # made once, for this request
    assert first.answers == second.answers


async def test_an_unknown_model_fails_naming_the_entry_and_the_fix(
    client: EmbeddedDecisionClient,
) -> None:
    request = DecisionRequest(STATE, {"refund": Noul("Refund?")})
    with pytest.raises(
        ExternalServiceError,
        match=r"entry 'odd': sparrow-decider has no model 'no-such-model'.*'sparrow-decider'",
    ):
        await client.decide(request, entry(id="odd", wire_model_id="no-such-model"))


async def test_large_decisions_run_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # The model's round trip is held on its thread until the event loop lets it go: a decide
    # that ran on the loop could never see the release, and would fail at the guard instead.
    entered = threading.Event()
    release = threading.Event()
    threads: list[threading.Thread] = []
    real_ask = _embedded._ask

    def held_ask(
        model: _embedded._Decider, entry: CatalogEntry, body: Mapping[str, object]
    ) -> dict[str, object]:
        threads.append(threading.current_thread())
        entered.set()
        if not release.wait(HANG_GUARD):
            raise AssertionError("the event loop never ran while the model was asked")
        return real_ask(model, entry, body)

    monkeypatch.setattr(_embedded, "_ask", held_ask)
    client = EmbeddedDecisionClient()
    request = DecisionRequest(STATE * 20, {"refund": Noul("Refund?")})  # past INLINE_BYTES
    assert len(systemone.encode_body(request, "sparrow-decider")) > INLINE_BYTES
    deciding = asyncio.create_task(client.decide(request, entry()))
    loop_turns = 0
    while not entered.is_set():  # the loop keeps turning while the model is being asked
        await asyncio.sleep(0.001)
        loop_turns += 1
        assert loop_turns < HANG_GUARD * 1000, "the model was never asked"
    assert not deciding.done()
    release.set()
    response = await deciding
    await client.aclose()
    assert 0 <= response.noul("refund").probability <= 1
    (thread,) = threads
    assert thread is not threading.current_thread()
    assert thread.name.startswith("harness-embedded")


async def test_small_decisions_are_answered_on_the_loops_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[threading.Thread] = []
    real_ask = _embedded._ask

    def seen_ask(
        model: _embedded._Decider, entry: CatalogEntry, body: Mapping[str, object]
    ) -> dict[str, object]:
        threads.append(threading.current_thread())
        return real_ask(model, entry, body)

    monkeypatch.setattr(_embedded, "_ask", seen_ask)
    request = DecisionRequest(STATE, {"refund": Noul("Refund?")})
    small = EmbeddedDecisionClient()
    workers_only = EmbeddedDecisionClient(inline_bytes=0)
    inline = await small.decide(request, entry())
    pooled = await workers_only.decide(request, entry())
    await small.aclose()
    await workers_only.aclose()
    assert threads[0] is threading.current_thread()
    assert threads[1] is not threading.current_thread()
    assert inline.noul("refund").probability == pooled.noul("refund").probability
    with pytest.raises(ValueError, match="inline_bytes must be >= 0"):
        EmbeddedDecisionClient(inline_bytes=-1)


async def test_concurrent_decides_all_complete(client: EmbeddedDecisionClient) -> None:
    requests = [
        DecisionRequest(
            f"{STATE} (copy {i})", {"intent": Choice("Intent?", {"refund": None, "bug": None})}
        )
        for i in range(40)
    ]
    responses = await asyncio.gather(*(client.decide(r, entry()) for r in requests))
    assert [r.request for r in responses] == requests
    assert all(r.choice("intent").choice in {"refund", "bug"} for r in responses)


async def test_a_spent_deadline_is_a_transient_signal_and_close_is_idempotent() -> None:
    embedded = EmbeddedDecisionClient(max_workers=1)
    request = DecisionRequest(STATE, {"refund": Noul("Refund?")})
    with pytest.raises(TransientError, match="gave no answer within 0 s"):
        await embedded.decide(request, entry(), timeout=0)
    with pytest.raises(TransientError, match="gave no answer within 0 s"):  # the pool's way
        await EmbeddedDecisionClient(inline_bytes=0).decide(request, entry(), timeout=0)
    await embedded.aclose()
    await embedded.aclose()
    again = await embedded.decide(request, entry())  # a closed client starts a new pool
    assert 0 <= again.noul("refund").probability <= 1
    await embedded.aclose()


async def test_limits_are_refused_in_the_order_of_the_checks_whatever_the_questions_order(
    client: EmbeddedDecisionClient,
) -> None:
    # The entry's limits (any question) are refused before sparrow's own (any question).
    wide = Score("How much?", [str(n) for n in range(12)])
    options = Choice("Which?", {"a": None, "b": None, "c": None})
    request = DecisionRequest(STATE, {"wide": wide, "pick": options})
    with pytest.raises(InvalidInputError, match=r"'pick' 3: entry 'embedded' accepts at most 2"):
        await client.decide(request, entry(max_options=2))
    with pytest.raises(InvalidInputError, match=r"'wide' 12: .*at most 10 levels"):
        await client.decide(request, entry(max_options=3))
    with pytest.raises(InvalidInputError, match=r"'wide' 12: entry 'embedded' accepts at most 11"):
        await client.decide(request, entry(max_levels=11))
    # answer() is the provider's own step: sparrow's limit, not the entry's.
    with pytest.raises(InvalidInputError, match=r"'wide' 12: .*at most 10 levels"):
        await client.answer(request, entry(max_options=2), None)
    only = DecisionRequest(STATE, {"only": Choice("Which?", {"a": None}), "pick": options})
    answered = await client.answer(only, entry(max_options=2), None)
    assert answered.answers["only"] == ChoiceAnswer(
        choice="a", probabilities={"a": 1.0}, confidence=1.0
    )

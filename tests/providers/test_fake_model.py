"""FakeDecisionModel: policies, scripts, recording, validation, the answer builders."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest

from harness.catalog import CatalogEntry
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    RefusedAnswer,
    Score,
    ScoreAnswer,
)
from harness.decision import systemone as systemone_codec
from harness.errors import InvalidInputError, NotAnAnswerError, OverloadedError
from harness.providers._client import DecisionClient
from harness.providers._fake import (
    FakeDecisionModel,
    ScriptExhaustedError,
    answer_by_kind,
    choose,
    default_answers,
    rate,
    yes,
)

from .wire_cases import sample_request

TEAM = Choice("Which team?", {"billing": "Invoices", "tech": None, "sales": None})
ANGER = Score("How angry?", ["calm", "annoyed", "furious"])


def entry(**overrides: object) -> CatalogEntry:
    fields: dict[str, object] = {
        "id": "fake",
        "provider": "fake",
        "wire_model_id": "fake-decider",
        "max_context_tokens": 4096,
        "max_concurrent": 1,
    }
    fields.update(overrides)
    return CatalogEntry(**fields)  # type: ignore[arg-type]


def test_it_is_a_decision_client() -> None:
    client: DecisionClient = FakeDecisionModel()
    assert isinstance(client, FakeDecisionModel)


def test_choose_puts_the_mass_on_the_key_and_spreads_the_rest() -> None:
    answer = choose(TEAM, "tech")
    assert answer.choice == "tech"
    assert list(answer.probabilities) == ["billing", "tech", "sales"]
    assert answer.probabilities["tech"] == pytest.approx(0.97)
    assert answer.probabilities["billing"] == pytest.approx(0.015)
    assert math.fsum(answer.probabilities.values()) == pytest.approx(1.0)
    assert answer.confidence == pytest.approx((0.97 - 1 / 3) / (1 - 1 / 3))
    assert choose(Choice("Only?", ["x"]), "x") == ChoiceAnswer("x", {"x": 1.0}, 1.0)
    with pytest.raises(ValueError, match="'nope' is not an option"):
        choose(TEAM, "nope")


def test_yes_and_rate() -> None:
    assert yes() == NoulAnswer(1.0)
    assert yes(0.25).probability == 0.25
    with pytest.raises(ValueError, match="outside"):
        yes(1.5)
    high = rate(ANGER, 2, probability=0.8)
    assert high.probabilities == pytest.approx((0.1, 0.1, 0.8))
    assert high.score == pytest.approx(0.1 + 1.6)
    assert high.levels == ANGER.levels
    with pytest.raises(ValueError, match="level 3"):
        rate(ANGER, 3)


def test_the_default_answers() -> None:
    request = DecisionRequest("s", {"t": TEAM, "n": Noul("Ok?"), "a": ANGER})
    answers = default_answers(request)
    team = answers["t"]
    assert isinstance(team, ChoiceAnswer)
    assert team.choice == "billing"
    assert team.probabilities["billing"] == pytest.approx(0.9)
    assert answers["n"] == NoulAnswer(0.5)
    assert rate(ANGER, 1) == answers["a"]


def test_answer_by_kind_walks_the_questions_in_order_by_kind() -> None:
    request = DecisionRequest("s", {"n": Noul("Ok?"), "t": TEAM, "a": ANGER, "m": Noul("Mm?")})
    walked: list[tuple[str, str]] = []

    def noul(qid: str, question: Noul) -> NoulAnswer:
        walked.append((qid, question.kind))
        return yes(0.25 if qid == "n" else 0.75)

    def choice(qid: str, question: Choice) -> ChoiceAnswer:
        walked.append((qid, question.kind))
        return choose(question, "tech")

    def score(qid: str, question: Score) -> ScoreAnswer:
        walked.append((qid, question.kind))
        return rate(question, 2)

    answers = answer_by_kind(request, choice=choice, noul=noul, score=score)
    assert walked == [("n", "noul"), ("t", "choice"), ("a", "score"), ("m", "noul")]
    assert list(answers) == ["n", "t", "a", "m"]
    assert answers == {
        "n": yes(0.25),
        "t": choose(TEAM, "tech"),
        "a": rate(ANGER, 2),
        "m": yes(0.75),
    }


async def test_the_default_policy_answers_and_everything_is_recorded() -> None:
    model = FakeDecisionModel()
    request = sample_request()
    response = await model.decide(request, entry(wire_model_id="jev-latest"))
    assert response.success
    assert response.choice("team").choice == "billing"
    assert response.noul("urgent").probability == 0.5
    assert response.score("anger").score == pytest.approx(1.0)
    assert model.requests == [request]
    assert model.bodies == [systemone_codec.encode_body(request, "jev-latest")]
    assert response.input_tokens == math.ceil(len(model.bodies[0]) / 4)
    assert response.model == "jev-latest"
    assert response.request_id == "fake-1"
    assert response.output_tokens == 0


async def test_an_installed_policy_and_a_swapped_one() -> None:
    def pick_tech(request: DecisionRequest) -> Mapping[str, Answer]:
        return {"t": choose(TEAM, "tech")}

    async def pick_sales(request: DecisionRequest) -> Mapping[str, Answer]:
        return {"t": choose(TEAM, "sales")}

    model = FakeDecisionModel(pick_tech, model="served-1")
    request = DecisionRequest("s", {"t": TEAM})
    first = await model.decide(request, entry())
    assert first.choice("t").choice == "tech"
    assert first.model == "served-1"
    model.policy = pick_sales
    assert (await model.decide(request, entry())).choice("t").choice == "sales"
    assert len(model.requests) == 2


async def test_a_script_answers_in_order_raises_its_exceptions_then_runs_out() -> None:
    request = DecisionRequest("s", {"t": TEAM})
    overloaded = OverloadedError("System One server answered HTTP 503: loading", status=503)
    model = FakeDecisionModel.scripted(
        [{"t": choose(TEAM, "sales")}, overloaded, {"t": choose(TEAM, "tech")}]
    )
    assert model.remaining == 3
    assert (await model.decide(request, entry())).choice("t").choice == "sales"
    with pytest.raises(OverloadedError) as caught:
        await model.decide(request, entry())
    assert caught.value is overloaded
    assert (await model.decide(request, entry())).choice("t").choice == "tech"
    assert model.remaining == 0
    with pytest.raises(ScriptExhaustedError, match="ran out after 3 requests"):
        await model.decide(request, entry())
    assert len(model.requests) == 4


async def test_answers_a_server_could_not_send_are_not_answers() -> None:
    request = DecisionRequest("s", {"t": TEAM, "n": Noul("Ok?")})
    missing = FakeDecisionModel(lambda r: {"t": choose(TEAM, "tech")})
    with pytest.raises(NotAnAnswerError, match="no answer for 'n'"):
        await missing.decide(request, entry())
    other = Choice("Other?", ["x", "y"])
    wrong_choice = FakeDecisionModel(lambda r: {"t": choose(other, "x"), "n": yes(0.1)})
    with pytest.raises(NotAnAnswerError):
        await wrong_choice.decide(request, entry())
    wrong_shape = FakeDecisionModel(lambda r: {"t": yes(0.3), "n": yes(0.1)})
    with pytest.raises(NotAnAnswerError):
        await wrong_shape.decide(request, entry())


async def test_a_refusal_is_kept() -> None:
    request = DecisionRequest("s", {"t": TEAM, "n": Noul("Ok?")})
    model = FakeDecisionModel(lambda r: {"t": RefusedAnswer("policy"), "n": yes(0.7)})
    response = await model.decide(request, entry())
    assert response.answers["t"] == RefusedAnswer("policy")
    assert response.noul("n").probability == pytest.approx(0.7)


async def test_the_entry_limits_apply() -> None:
    model = FakeDecisionModel()
    with pytest.raises(InvalidInputError, match="at most 2 options"):
        await model.decide(DecisionRequest("s", {"t": TEAM}), entry(max_options=2))
    assert model.requests == []
    await model.aclose()
    await model.aclose()
    assert model.closed

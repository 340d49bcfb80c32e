"""DecisionResponseTest (CONTRACT.md "Response"): answers are read by the shape asked."""

from __future__ import annotations

import pytest

from harness.decision import (
    Answer,
    AnswerReadError,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    RefusedAnswer,
    Score,
    ScoreAnswer,
)

REQUEST = DecisionRequest(
    "a ticket",
    {
        "team": Choice("Which team?", ["billing", "tech"]),
        "refund": Noul("Refund?"),
        "anger": Score("How angry?", ["calm", "angry", "furious"]),
    },
)
ANSWERS: dict[str, Answer] = {
    "team": ChoiceAnswer("tech", {"billing": 0.2, "tech": 0.8}, 0.6),
    "refund": NoulAnswer(0.9),
    "anger": ScoreAnswer(1.0, ("calm", "angry", "furious"), (0.1, 0.8, 0.1), 0.8),
}


def answered() -> DecisionResponse:
    return DecisionResponse(
        request=REQUEST,
        answers=ANSWERS,
        input_tokens=42,
        model="jev-1.13.0",
        request_id="req_1",
        latency=0.015,
    )


def test_answers_are_read_by_the_shape_asked() -> None:
    response = answered()
    assert response.success
    assert response.choice("team").choice == "tech"
    assert response.noul("refund").probability == 0.9
    assert response.score("anger").score == 1.0
    assert (response.input_tokens, response.model, response.request_id) == (
        42,
        "jev-1.13.0",
        "req_1",
    )
    assert response.latency == 0.015


def test_output_tokens_are_zero() -> None:
    assert answered().output_tokens == 0
    assert DecisionResponse.failed(REQUEST, "down").output_tokens == 0


def test_a_choice_read_as_a_score_is_refused_naming_the_id_and_choice() -> None:
    with pytest.raises(AnswerReadError) as caught:
        answered().score("team")
    message = str(caught.value)
    assert "'team'" in message
    assert "asked as a choice, not a score" in message


def test_a_noul_read_as_a_choice_is_refused_naming_its_shape() -> None:
    with pytest.raises(AnswerReadError, match="'refund' was asked as a noul, not a choice"):
        answered().choice("refund")


def test_an_id_never_asked_is_refused_naming_it_and_the_ids_asked() -> None:
    with pytest.raises(AnswerReadError) as caught:
        answered().noul("urgent")
    message = str(caught.value)
    assert "'urgent' was never asked" in message
    assert "'team', 'refund', 'anger'" in message
    assert isinstance(caught.value, LookupError)


def test_a_failed_call_refuses_every_read_quoting_its_reason() -> None:
    reason = "jev at http://127.0.0.1:9/v1/systemone could not be reached"
    failed = DecisionResponse.failed(REQUEST, reason, latency=0.5, model="jev-latest")
    assert not failed.success
    assert failed.failure == reason
    assert dict(failed.answers) == {}
    assert (failed.input_tokens, failed.latency, failed.model) == (None, 0.5, "jev-latest")
    for read, question_id in (
        (failed.choice, "team"),
        (failed.noul, "refund"),
        (failed.score, "anger"),
        (failed.noul, "never-asked"),
    ):
        with pytest.raises(AnswerReadError) as caught:
            read(question_id)
        assert reason in str(caught.value)
        assert repr(question_id) in str(caught.value)


def test_a_refused_question_is_refused_naming_it() -> None:
    response = DecisionResponse(REQUEST, {**ANSWERS, "refund": RefusedAnswer("policy")})
    assert response.success
    with pytest.raises(AnswerReadError, match=r"refused question 'refund' \(policy\)"):
        response.noul("refund")
    assert response.choice("team").choice == "tech"


def test_answers_are_read_only() -> None:
    response = answered()
    with pytest.raises(TypeError):
        response.answers["team"] = NoulAnswer(0.1)  # type: ignore[index]
    assert list(response.answers) == ["team", "refund", "anger"]


@pytest.mark.parametrize(
    ("answers", "rule"),
    [
        ({**ANSWERS, "extra": NoulAnswer(0.5)}, "answers no question asked"),
        (
            {**ANSWERS, "refund": ChoiceAnswer("a", {"a": 1.0}, 1.0)},
            "asked as a noul but answered as a choice",
        ),
        ({"team": ANSWERS["team"]}, "answers every question"),
        (
            {**ANSWERS, "team": ChoiceAnswer("tech", {"tech": 1.0}, 1.0)},
            "one probability per option",
        ),
        (
            {**ANSWERS, "anger": ScoreAnswer(0.0, ("a", "b", "c"), (1.0, 0.0, 0.0), 1.0)},
            "the question's levels",
        ),
    ],
)
def test_a_response_must_answer_what_was_asked(answers: dict[str, object], rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        DecisionResponse(REQUEST, answers)  # type: ignore[arg-type]


def test_a_failed_response_has_a_reason_and_no_answers() -> None:
    with pytest.raises(ValueError, match="must not be blank"):
        DecisionResponse.failed(REQUEST, " ")
    with pytest.raises(ValueError, match="carries no answers"):
        DecisionResponse(REQUEST, ANSWERS, failure="down")
    with pytest.raises(ValueError, match="input_tokens"):
        DecisionResponse(REQUEST, ANSWERS, input_tokens=-1)
    with pytest.raises(ValueError, match="latency"):
        DecisionResponse(REQUEST, ANSWERS, latency=-0.1)

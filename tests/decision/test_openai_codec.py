"""The OpenAI Decisions codec: exact request bytes, every refusal of a reply, the server side."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    RefusedAnswer,
    RequestValidationError,
    Score,
    ScoreAnswer,
    WireReply,
    openai,
)
from harness.errors import NotAnAnswerError

from .strategies import CANARY

REQUEST = DecisionRequest(
    {"ticket": CANARY},
    {
        "team": Choice("Which team?", {"billing": "Invoices", "tech": None}),
        "refund": Noul("Refund?"),
        "anger": Score("How angry?", ["calm", "angry", "furious"]),
    },
)


def reply() -> list[dict[str, Any]]:  # JSON edited freely by the tests
    """The answers of a valid reply to REQUEST, in question order."""
    return [
        {
            "type": "choice",
            "name": "team",
            "choice": "tech",
            "probabilities": [
                {"value": "billing", "probability": 0.25},
                {"value": "tech", "probability": 0.75},
            ],
            "confidence": 0.5,
        },
        {"type": "predicate", "name": "refund", "probability": 0.9},
        {
            "type": "score",
            "name": "anger",
            "score": 1.1,
            "probabilities": [
                {"value": 0, "label": "calm", "probability": 0.1},
                {"value": 1, "label": "angry", "probability": 0.7},
                {"value": 2, "label": "furious", "probability": 0.2},
            ],
            "confidence": 0.6,
        },
    ]


def body(answers: object) -> dict[str, object]:
    return {
        "id": "dec_1",
        "object": "decision",
        "model": "gpt-6-luna-2026",
        "answers": answers,
        "usage": {
            "input_tokens": 40,
            "output_tokens": 0,
            "input_tokens_details": {"cached_tokens": 32},
        },
    }


# ------------------------------------------------------------------ encoding, one shape a test


def test_encode_a_choice() -> None:
    request = DecisionRequest(
        "tickét", {"team": Choice("Which team?", {"billing": "Invoices", "tech": None})}
    )
    assert (
        openai.encode_body(request, "gpt-6-luna")
        == (
            '{"model":"gpt-6-luna","input":"tickét","questions":[{"type":"choice","name":"team",'
            '"instructions":"Which team?","choices":[{"value":"billing","description":"Invoices"},'
            '{"value":"tech"}]}]}'
        ).encode()
    )


def test_encode_a_noul_as_a_predicate() -> None:
    request = DecisionRequest({"a": [1]}, {"refund": Noul("Refund?")})
    assert openai.encode_body(request, "m") == (
        b'{"model":"m","input":"{\\"a\\":[1]}","questions":[{"type":"predicate","name":"refund",'
        b'"instructions":"Refund?"}]}'
    )


def test_encode_a_noul_with_sides_in_its_instructions() -> None:
    request = DecisionRequest(
        "s", {"refund": Noul("Refund?", when_true="money back", when_false="no")}
    )
    assert openai.encode_body(request, "m") == (
        b'{"model":"m","input":"s","questions":[{"type":"predicate","name":"refund",'
        b'"instructions":"Refund?\\n\\nTrue: money back\\nFalse: no"}]}'
    )


def test_encode_a_score() -> None:
    request = DecisionRequest("s", {"anger": Score("How angry?", ["calm", "furious"])})
    assert openai.encode_body(request, None) == (
        b'{"input":"s","questions":[{"type":"score","name":"anger","instructions":"How angry?",'
        b'"levels":[{"label":"calm"},{"label":"furious"}]}]}'
    )


def test_ids_that_are_not_identifiers_get_positional_names() -> None:
    request = DecisionRequest("s", {"ok_id": Noul("A?"), "not an id": Noul("B?"), "q0": Noul("C?")})
    assert openai.question_names(request) == ("q0", "q1", "q2")
    assert openai.question_names(REQUEST) == ("team", "refund", "anger")
    questions: Any = openai.encode_request(request, "m")["questions"]
    assert [q["name"] for q in questions] == ["q0", "q1", "q2"]


# ------------------------------------------------------------------ decoding


def test_decode_a_reply() -> None:
    assert openai.decode_reply(REQUEST, body(reply())) == WireReply(
        answers={
            "team": ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5),
            "refund": NoulAnswer(0.9),
            "anger": ScoreAnswer(1.1, ("calm", "angry", "furious"), (0.1, 0.7, 0.2), 0.6),
        },
        model="gpt-6-luna-2026",
        input_tokens=40,
        output_tokens=0,
    )


def test_decode_maps_positional_names_back_to_ids() -> None:
    request = DecisionRequest("s", {"a b": Noul("A?"), "c-d": Noul("B?")})
    payload = body(
        [
            {"type": "predicate", "name": "q0", "probability": 0.1},
            {"type": "predicate", "name": "q1", "probability": 0.2},
        ]
    )
    assert dict(openai.decode_reply(request, payload).answers) == {
        "a b": NoulAnswer(0.1),
        "c-d": NoulAnswer(0.2),
    }


def test_a_refusal_is_a_refused_answer() -> None:
    answers = reply()
    answers[1] = {"type": "refusal", "name": "refund", "refusal": "I can't help with that."}
    decoded = openai.decode_reply(REQUEST, body(answers))
    assert decoded.answers["refund"] == RefusedAnswer("I can't help with that.")
    assert decoded.answers["team"] == ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5)
    answers[1] = {"type": "refusal", "name": "refund"}
    assert openai.decode_reply(REQUEST, body(answers)).answers["refund"] == RefusedAnswer(None)


def test_decode_is_lenient_on_extras() -> None:
    answers = reply()
    answers.append({"type": "predicate", "name": "extra", "probability": 9})
    answers[0]["probabilities"].append({"value": "other", "probability": "junk"})
    del answers[0]["confidence"]
    del answers[1]["name"]
    decoded = openai.decode_reply(REQUEST, {"answers": answers})
    assert decoded.answers["team"] == ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5)
    assert (decoded.model, decoded.input_tokens) == (None, None)


def refused(answers: object, payload: object = None) -> str:
    with pytest.raises(NotAnAnswerError) as caught:
        openai.decode_reply(REQUEST, body(answers) if payload is None else payload)
    message = str(caught.value)
    assert CANARY not in message
    assert message.startswith("not an answer: ")
    return message


def edited(change: Callable[[list[Any]], object]) -> list[Any]:
    answers = reply()
    change(answers)
    return answers


def test_refuse_a_body_that_is_not_an_object() -> None:
    assert "the reply body is a string, not a JSON object" in refused(None, CANARY)


def test_refuse_a_reply_without_an_answers_array() -> None:
    assert "no 'answers' array" in refused({"team": {}})


def test_refuse_a_missing_answer_naming_the_id() -> None:
    message = refused(edited(lambda a: a.pop()))
    assert "no answer for question 'anger': 2 answers for 3 questions" in message


def test_refuse_an_answer_out_of_order() -> None:
    message = refused(edited(lambda a: a.reverse()))
    assert "answer 0 (question 'team') is not named 'team'" in message


def test_refuse_a_missing_option_probability() -> None:
    message = refused(edited(lambda a: a[0]["probabilities"].pop()))
    assert "answer 0 (question 'team') has no probability for option 'tech'" in message


def test_refuse_a_missing_level_probability() -> None:
    message = refused(edited(lambda a: a[2]["probabilities"].pop(0)))
    assert "answer 2 (question 'anger') has no probability for level 0" in message


def test_refuse_a_choice_not_offered() -> None:
    message = refused(edited(lambda a: a[0].update(choice=CANARY)))
    assert "answer 'team' chose a value that is not one of its options" in message


def test_refuse_a_probability_outside_0_1() -> None:
    message = refused(edited(lambda a: a[1].update(probability=-0.25)))
    assert (
        "answer 1 (question 'refund').probability is -0.25, not a probability in [0, 1]" in message
    )


def test_refuse_a_nan_probability() -> None:
    message = refused(edited(lambda a: a[0]["probabilities"][1].update(probability=float("nan"))))
    assert "probabilities['tech'] is nan, not a probability" in message


def test_refuse_a_wrong_answer_type() -> None:
    message = refused(edited(lambda a: a[1].update(type="noul")))
    assert "has type 'noul', but question 'refund' was asked as a predicate" in message
    message = refused(edited(lambda a: a[1].update(type=CANARY)))
    assert "has type an unrecognised type (a string)" in message


def test_refuse_a_predicate_without_its_probability() -> None:
    assert "answer 1 (question 'refund').probability is missing" in refused(
        edited(lambda a: a[1].pop("probability"))
    )


def test_refuse_an_answer_that_is_not_an_object() -> None:
    assert "answer 1 (question 'refund') is a string, not an object" in refused(
        edited(lambda a: a.__setitem__(1, CANARY))
    )


def test_no_refusal_quotes_what_the_server_put_in_an_answer() -> None:
    """(Keys never reach the codec; the client tests pin that no key is quoted.)"""
    assert CANARY not in refused(edited(lambda a: a[0].update(choice=CANARY, name=CANARY)))


# ------------------------------------------------------------------ the server side


def test_decode_request_reads_what_encode_request_wrote() -> None:
    request = DecisionRequest(
        "s", {"team": REQUEST.questions["team"], "anger": REQUEST.questions["anger"]}
    )
    assert openai.decode_request(json.loads(openai.encode_body(request, "m"))) == (request, "m")


def test_decode_request_reads_predicates_and_level_descriptions() -> None:
    request, model = openai.decode_request(
        {
            "model": "m",
            "input": [{"role": "user", "content": "hi"}],
            "safety_identifier": "x",
            "questions": [
                {"type": "predicate", "name": "p", "instructions": "P?"},
                {
                    "type": "score",
                    "name": "s",
                    "instructions": "S?",
                    "levels": [{"label": "low", "description": "calm"}, {"label": "high"}],
                },
            ],
        }
    )
    assert model == "m"
    assert request.state == [{"role": "user", "content": "hi"}]
    assert dict(request.questions) == {"p": Noul("P?"), "s": Score("S?", ["low: calm", "high"])}


def test_decode_request_lists_every_problem_with_its_location() -> None:
    with pytest.raises(RequestValidationError) as caught:
        openai.decode_request(
            {
                "model": "m",
                "input": 3,
                "questions": [
                    {
                        "type": "choice",
                        "name": "c",
                        "instructions": "C?",
                        "choices": [{"value": "only"}],
                    },
                    {"type": "predicate", "name": "not a name", "instructions": "P?"},
                    {"type": "noul", "name": "n"},
                    {"type": "predicate", "name": "p"},
                ],
            }
        )
    assert [loc for loc, _ in caught.value.problems] == [
        ("body", "input"),
        ("body", "questions", 0, "choices"),
        ("body", "questions", 1, "name"),
        ("body", "questions", 2, "type"),
        ("body", "questions", 3, "instructions"),
    ]


def test_decode_request_refuses_duplicate_names_and_values() -> None:
    question = {"type": "predicate", "name": "p", "instructions": "P?"}
    duplicated = {
        "type": "choice",
        "name": "c",
        "instructions": "C?",
        "choices": [{"value": "a"}, {"value": "a"}],
    }
    with pytest.raises(RequestValidationError) as caught:
        openai.decode_request(
            {"model": "m", "input": "s", "questions": [question, question, duplicated]}
        )
    assert caught.value.problems == [
        (("body", "questions", 1, "name"), "question names must be unique"),
        (("body", "questions", 2, "choices"), "choice values must be unique"),
    ]


def test_encode_reply_writes_a_list_in_order_with_refusals() -> None:
    assert openai.encode_reply(
        {
            "team": ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5),
            "refund": RefusedAnswer("policy"),
            "anger": ScoreAnswer(1.0, ("calm", "angry"), (0.0, 1.0), 1.0),
            "p": NoulAnswer(0.5),
        },
        model="fake-1",
        input_tokens=9,
    ) == {
        "object": "decision",
        "model": "fake-1",
        "answers": [
            {
                "type": "choice",
                "name": "team",
                "choice": "tech",
                "probabilities": [
                    {"value": "billing", "probability": 0.25},
                    {"value": "tech", "probability": 0.75},
                ],
                "confidence": 0.5,
            },
            {"type": "refusal", "name": "refund", "refusal": "policy"},
            {
                "type": "score",
                "name": "anger",
                "score": 1.0,
                "probabilities": [
                    {"value": 0, "label": "calm", "probability": 0.0},
                    {"value": 1, "label": "angry", "probability": 1.0},
                ],
                "confidence": 1.0,
            },
            {"type": "predicate", "name": "p", "probability": 0.5},
        ],
        "usage": {
            "input_tokens": 9,
            "output_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
        },
    }


def test_a_reply_with_only_distributions_gets_its_choice_and_score_derived() -> None:
    answers = reply()
    del answers[0]["choice"]
    del answers[2]["score"]
    decoded = openai.decode_reply(REQUEST, body(answers)).answers
    team, anger = decoded["team"], decoded["anger"]
    assert isinstance(team, ChoiceAnswer)
    assert team.choice == "tech"
    assert isinstance(anger, ScoreAnswer)
    assert anger.score == pytest.approx(0 * 0.1 + 1 * 0.7 + 2 * 0.2)


def test_a_derived_choice_takes_the_first_option_on_a_tie() -> None:
    answers = reply()
    del answers[0]["choice"]
    for entry in answers[0]["probabilities"]:
        entry["probability"] = 0.5
    team = openai.decode_reply(REQUEST, body(answers)).answers["team"]
    assert isinstance(team, ChoiceAnswer)
    assert team.choice == "billing"

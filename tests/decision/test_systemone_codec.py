"""The System One codec: exact request bytes, every refusal of a reply, the server side."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from jevcompat.mock import FAULTS, MockConfig, respond, validate_request

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
    systemone,
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


def reply() -> dict[str, Any]:  # JSON edited freely by the tests
    """A valid reply to REQUEST, as the reference server writes it."""
    payload: dict[str, Any] = json.loads(
        json.dumps(
            {
                "model": "jev-1.13.0",
                "answers": {
                    "team": {
                        "type": "choice",
                        "choice": "tech",
                        "probabilities": {"billing": 0.25, "tech": 0.75},
                        "confidence": 0.5,
                    },
                    "refund": {"type": "noul", "noul": 0.9},
                    "anger": {
                        "type": "score",
                        "score": 1.1,
                        "legend": {"0": "calm", "1": "angry", "2": "furious"},
                        "probabilities": {"0": 0.1, "1": 0.7, "2": 0.2},
                        "confidence": 0.6,
                    },
                },
                "usage": {"input_tokens": 31, "output_tokens": 6},
            }
        )
    )
    return payload


# ------------------------------------------------------------------ encoding, one shape a test


def test_encode_a_choice() -> None:
    request = DecisionRequest(
        "tickét", {"team": Choice("Which team?", {"billing": "Invoices", "tech": None})}
    )
    assert (
        systemone.encode_body(request, "jev-latest")
        == (
            '{"model":"jev-latest","state":"tickét","questions":{"team":'
            '{"instructions":"Which team?","type":"choice","criteria":{"billing":"Invoices",'
            '"tech":null}}}}'
        ).encode()
    )


def test_encode_a_noul_without_sides() -> None:
    request = DecisionRequest({"a": [1, 2.5]}, {"refund": Noul("Refund?")})
    assert systemone.encode_body(request, "jev-latest") == (
        b'{"model":"jev-latest","state":{"a":[1,2.5]},"questions":{"refund":'
        b'{"instructions":"Refund?","type":"noul"}}}'
    )


def test_encode_a_noul_with_its_described_sides_only() -> None:
    one = DecisionRequest("s", {"r": Noul("Refund?", when_false="no money")})
    both = DecisionRequest("s", {"r": Noul("Refund?", when_true="money back", when_false="no")})
    assert systemone.encode_body(one, "m") == (
        b'{"model":"m","state":"s","questions":{"r":{"instructions":"Refund?","type":"noul",'
        b'"criteria":{"false":"no money"}}}}'
    )
    assert systemone.encode_body(both, "m") == (
        b'{"model":"m","state":"s","questions":{"r":{"instructions":"Refund?","type":"noul",'
        b'"criteria":{"true":"money back","false":"no"}}}}'
    )


def test_encode_a_score() -> None:
    request = DecisionRequest(["x"], {"anger": Score("How angry?", ["calm", "furious"])})
    assert systemone.encode_body(request, "m") == (
        b'{"model":"m","state":["x"],"questions":{"anger":{"instructions":"How angry?",'
        b'"type":"score","criteria":["calm","furious"]}}}'
    )


def test_encode_without_a_model_leaves_it_out_and_keeps_field_order() -> None:
    body = systemone.encode_request(REQUEST, None)
    assert list(body) == ["state", "questions"]
    assert list(systemone.encode_request(REQUEST, "m")) == ["model", "state", "questions"]
    assert list(body["questions"]) == ["team", "refund", "anger"]  # type: ignore[arg-type]


def test_the_reference_server_accepts_the_encoded_request() -> None:
    body = json.loads(systemone.encode_body(REQUEST, "jev-latest"))
    assert validate_request(body, MockConfig()) == []


# ------------------------------------------------------------------ decoding a good reply


def test_decode_a_reply() -> None:
    decoded = systemone.decode_reply(REQUEST, reply())
    assert decoded == WireReply(
        answers={
            "team": ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5),
            "refund": NoulAnswer(0.9),
            "anger": ScoreAnswer(1.1, ("calm", "angry", "furious"), (0.1, 0.7, 0.2), 0.6),
        },
        model="jev-1.13.0",
        input_tokens=31,
        output_tokens=6,
    )
    assert list(decoded.answers) == ["team", "refund", "anger"]


def test_decode_is_lenient_on_extra_fields_answers_and_usage() -> None:
    payload = reply()
    payload["latency_ms"] = 3
    payload["usage"] = {"input_tokens": 0, "output_tokens": 0}
    answers = payload["answers"]
    assert isinstance(answers, dict)
    answers["never-asked"] = {"type": "noul", "noul": 7}
    answers["team"]["x_top"] = [1, 2]
    answers["team"]["probabilities"]["other"] = "junk"
    del answers["anger"]["confidence"]
    decoded = systemone.decode_reply(REQUEST, payload)
    assert set(decoded.answers) == {"team", "refund", "anger"}
    assert (decoded.input_tokens, decoded.output_tokens) == (0, 0)
    anger = decoded.answers["anger"]
    assert isinstance(anger, ScoreAnswer)
    assert anger.confidence == pytest.approx(1 - (0.1 + 0.2) / (2 / 3))  # the reference formula
    del payload["usage"]
    del payload["model"]
    bare = systemone.decode_reply(REQUEST, payload)
    assert (bare.model, bare.input_tokens, bare.output_tokens) == (None, None, None)


def test_decode_what_the_reference_server_answers() -> None:
    body = json.loads(systemone.encode_body(REQUEST, "jev-latest"))
    decoded = systemone.decode_reply(REQUEST, respond(MockConfig(), body))
    assert decoded.model == "jevcompat-mock-0.1"
    assert isinstance(decoded.input_tokens, int)
    assert [answer.kind for answer in decoded.answers.values()] == ["choice", "noul", "score"]


@pytest.mark.parametrize(
    "fault",
    ["noul-range", "confidence-over", "score-keys-1-based", "boolean-type", "first-question-only"],
)
def test_the_reference_servers_faults_are_not_answers(fault: str) -> None:
    assert fault in FAULTS
    body = json.loads(systemone.encode_body(REQUEST, "jev-latest"))
    with pytest.raises(NotAnAnswerError, match="not an answer") as caught:
        systemone.decode_reply(REQUEST, respond(MockConfig(faults=frozenset({fault})), body))
    assert CANARY not in str(caught.value)


# ------------------------------------------------------------------ refusals, one case a test


def refused(payload: object) -> str:
    with pytest.raises(NotAnAnswerError) as caught:
        systemone.decode_reply(REQUEST, payload)
    message = str(caught.value)
    assert CANARY not in message
    assert message.startswith("not an answer: ")
    return message


def edited(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    payload = reply()
    answers = payload["answers"]
    assert isinstance(answers, dict)
    change(answers)
    return payload


def test_refuse_a_body_that_is_not_an_object() -> None:
    assert "the reply body is an array, not a JSON object" in refused([reply()])


def test_refuse_a_reply_without_an_answers_object() -> None:
    assert "no 'answers' object" in refused({"model": "m", "answers": [1]})


def test_refuse_a_missing_answer_naming_the_id() -> None:
    message = refused(edited(lambda a: a.pop("refund")))
    assert "no answer for question 'refund'" in message
    assert "'team', 'refund', 'anger'" in message


def test_refuse_a_missing_option_probability_naming_id_and_option() -> None:
    message = refused(edited(lambda a: a["team"]["probabilities"].pop("billing")))
    assert "answer 'team' has no probability for option 'billing'" in message


def test_refuse_a_missing_level_probability() -> None:
    message = refused(edited(lambda a: a["anger"]["probabilities"].pop("2")))
    assert "answer 'anger' has no probability for level '2'" in message


def test_refuse_a_choice_not_offered() -> None:
    message = refused(edited(lambda a: a["team"].update(choice=CANARY)))
    assert (
        "answer 'team' chose a value that is not one of its options ('billing', 'tech')" in message
    )


def test_refuse_a_probability_outside_0_1() -> None:
    message = refused(edited(lambda a: a["team"]["probabilities"].update(tech=1.5)))
    assert "answer 'team'.probabilities['tech'] is 1.5, not a probability in [0, 1]" in message


def test_refuse_a_nan_probability() -> None:
    message = refused(edited(lambda a: a["refund"].update(noul=float("nan"))))
    assert "answer 'refund'.noul is nan, not a probability in [0, 1]" in message


def test_refuse_a_value_that_is_not_a_number() -> None:
    message = refused(edited(lambda a: a["refund"].update(noul=CANARY)))
    assert "answer 'refund'.noul is a string, not a probability" in message


def test_refuse_a_confidence_outside_0_1() -> None:
    message = refused(edited(lambda a: a["team"].update(confidence=-0.5)))
    assert "answer 'team'.confidence is -0.5" in message


def test_refuse_a_wrong_answer_type() -> None:
    message = refused(edited(lambda a: a["refund"].update(type="boolean")))
    assert "answer 'refund' has type an unrecognised type (a string)" in message
    assert "asked as a noul" in message
    message = refused(edited(lambda a: a["team"].update(type="score")))
    assert "answer 'team' has type 'score', but question 'team' was asked as a choice" in message


def test_refuse_an_answer_that_is_not_an_object() -> None:
    assert "answer 'refund' is a number, not an object" in refused(
        edited(lambda a: a.update(refund=0.9))
    )


def test_refuse_a_missing_value() -> None:
    assert "answer 'team'.choice is missing" in refused(edited(lambda a: a["team"].pop("choice")))
    assert "answer 'refund'.noul is missing" in refused(edited(lambda a: a["refund"].pop("noul")))


def test_refuse_a_score_off_its_scale() -> None:
    message = refused(edited(lambda a: a["anger"].update(score=2.5)))
    assert "answer 'anger' has score 2.5, outside its scale [0, 2]" in message


def test_no_refusal_quotes_what_the_server_put_in_an_answer() -> None:
    """(Keys never reach the codec; the client tests pin that no key is quoted.)"""
    payloads: tuple[object, ...] = (
        [],
        {"answers": {}},
        edited(lambda a: a["team"].update(choice=CANARY)),
    )
    for payload in payloads:
        assert CANARY not in refused(payload)


# ------------------------------------------------------------------ the server side


def test_decode_request_reads_what_encode_request_wrote() -> None:
    body = json.loads(systemone.encode_body(REQUEST, "jev-latest"))
    assert systemone.decode_request(body) == (REQUEST, "jev-latest")


def test_decode_request_reads_structured_text_and_a_noul_without_instructions() -> None:
    request, model = systemone.decode_request(
        {
            "model": "jev-latest",
            "state": "s",
            "seed": 7,
            "questions": {
                "n": {"type": "noul", "criteria": {"true": "threat", "false": ["none"]}},
                "c": {
                    "type": "choice",
                    "instructions": ["Route.", "One team."],
                    "criteria": {"B": {"owns": 1}},
                },
                "s": {
                    "type": "score",
                    "instructions": {"scale": "x"},
                    "criteria": [{"label": "Calm"}, "Angry"],
                },
            },
        }
    )
    assert model == "jev-latest"
    assert request.questions["n"] == Noul(
        'true: threat; false: ["none"]', when_true="threat", when_false='["none"]'
    )
    assert request.questions["c"] == Choice('["Route.","One team."]', {"B": '{"owns":1}'})
    assert request.questions["s"] == Score('{"scale":"x"}', ['{"label":"Calm"}', "Angry"])


def test_decode_request_lists_every_problem_with_its_location() -> None:
    with pytest.raises(RequestValidationError) as caught:
        systemone.decode_request(
            {
                "state": 5,
                "questions": {
                    "t": {"type": "boolean"},
                    "c": {"type": "choice", "instructions": "C?", "criteria": {}},
                    "s": {"type": "score", "instructions": "S?", "criteria": ["only"]},
                    "n": {"type": "noul"},
                },
            }
        )
    assert caught.value.problems == [
        (("body", "model"), "Field required"),
        (("body", "state"), "state must be a string, an object or an array"),
        (("body", "questions", "t", "type"), "type must be 'noul', 'choice' or 'score'"),
        (
            ("body", "questions", "c", "choice", "criteria"),
            "choice criteria must be an object of option -> description, at least one",
        ),
        (
            ("body", "questions", "s", "score"),
            "a score needs at least two levels (lowest first), got 1",
        ),
        (
            ("body", "questions", "n", "noul", "instructions"),
            "a noul needs instructions or criteria",
        ),
    ]
    assert caught.value.detail()[0] == {
        "loc": ["body", "model"],
        "msg": "Field required",
        "type": "value_error",
    }
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "payload",
    [
        [1],
        {"model": "m", "state": "s"},
        {"model": "m", "state": "s", "questions": {}},
        {
            "model": "m",
            "state": "s",
            "questions": {"q": {"type": "choice", "instructions": " ", "criteria": ["a"]}},
        },
        {"model": "m", "state": "s", "questions": {"q": {"type": "score", "criteria": ["a", "b"]}}},
        {"model": "m", "state": "s", "questions": {"q": {"type": "noul", "instructions": 3}}},
    ],
)
def test_decode_request_refuses_what_the_spec_refuses(payload: object) -> None:
    with pytest.raises(RequestValidationError) as caught:
        systemone.decode_request(payload)
    assert caught.value.problems
    assert all(loc[0] == "body" for loc, _ in caught.value.problems)


def test_decode_request_never_quotes_the_state() -> None:
    with pytest.raises(RequestValidationError) as caught:
        systemone.decode_request(
            {
                "model": "m",
                "state": [CANARY, float("nan")],
                "questions": {"q": {"type": "noul", "instructions": "Q?"}},
            }
        )
    assert caught.value.problems[0][0] == ("body",)
    assert "non-finite" in str(caught.value)
    assert CANARY not in str(caught.value)


def test_encode_reply_writes_each_type_as_the_reference_does() -> None:
    reply_body = systemone.encode_reply(
        {
            "team": ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5),
            "refund": NoulAnswer(0.9),
            "anger": ScoreAnswer(1.0, ("calm", "angry"), (0.0, 1.0), 1.0),
        },
        model="fake-1",
        input_tokens=12,
    )
    assert reply_body == {
        "model": "fake-1",
        "answers": {
            "team": {
                "type": "choice",
                "choice": "tech",
                "probabilities": {"billing": 0.25, "tech": 0.75},
                "confidence": 0.5,
            },
            "refund": {"type": "noul", "noul": 0.9},
            "anger": {
                "type": "score",
                "score": 1.0,
                "legend": {"0": "calm", "1": "angry"},
                "probabilities": {"0": 0.0, "1": 1.0},
                "confidence": 1.0,
            },
        },
        "usage": {"input_tokens": 12, "output_tokens": 0},
    }


def test_encode_reply_refuses_a_refusal() -> None:
    with pytest.raises(ValueError, match="System One has no refusal: answer question 'q'"):
        systemone.encode_reply({"q": RefusedAnswer()}, model="m", input_tokens=0)

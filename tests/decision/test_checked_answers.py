"""Checked once: a response to the very request a wire codec decoded its answers for
takes them as they are; any other request, or answers from anywhere else, are checked as ever."""

from __future__ import annotations

import pytest

import harness.decision
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
    WireReply,
    openai,
    systemone,
)

from . import test_openai_codec

REQUEST = DecisionRequest(
    "a ticket",
    {
        "team": Choice("Which team?", {"billing": None, "tech": None}),
        "refund": Noul("Refund?"),
        "anger": Score("How angry?", ["calm", "angry", "furious"]),
    },
)

REPLY = {
    "model": "m",
    "answers": {
        "team": {
            "type": "choice",
            "choice": "tech",
            "probabilities": {"billing": 0.2, "tech": 0.8},
        },
        "refund": {"type": "noul", "noul": 0.9},
        "anger": {"type": "score", "score": 1.0, "probabilities": {"0": 0.1, "1": 0.8, "2": 0.1}},
    },
}


def _decoded() -> list[tuple[DecisionRequest, WireReply]]:
    openai_request = test_openai_codec.REQUEST
    openai_reply = test_openai_codec.body(test_openai_codec.reply())
    return [
        (REQUEST, systemone.decode_reply(REQUEST, REPLY)),
        (openai_request, openai.decode_reply(openai_request, openai_reply)),
    ]


@pytest.mark.parametrize(("request_", "wire"), _decoded(), ids=["systemone", "openai"])
def test_a_response_to_the_decoded_request_takes_the_codec_s_answers_as_they_are(
    request_: DecisionRequest, wire: WireReply
) -> None:
    response = DecisionResponse(request_, wire.answers, model=wire.model)
    assert response.answers is wire.answers  # neither copied nor checked a second time
    assert response.answers == dict(wire.answers)
    assert list(response.answers) == list(request_.questions)


def test_the_codec_s_answers_for_another_request_are_checked_as_ever() -> None:
    wire = systemone.decode_reply(REQUEST, REPLY)
    reordered = DecisionRequest(
        REQUEST.state,
        {**REQUEST.questions, "team": Choice("Which team?", {"tech": None, "billing": None})},
    )
    with pytest.raises(ValueError, match="in the question's order"):
        DecisionResponse(reordered, wire.answers)
    more = DecisionRequest(REQUEST.state, {**REQUEST.questions, "late": Noul("Late?")})
    with pytest.raises(ValueError, match="no answer for 'late'"):
        DecisionResponse(more, wire.answers)
    fewer = DecisionRequest(REQUEST.state, {"refund": Noul("Refund?")})
    with pytest.raises(ValueError, match="answers no question asked"):
        DecisionResponse(fewer, wire.answers)
    # An equal request that is another object is checked too (and passes: the answers fit it).
    twin = DecisionRequest(REQUEST.state, dict(REQUEST.questions))
    assert DecisionResponse(twin, wire.answers).noul("refund").probability == 0.9


def test_answers_from_anywhere_else_are_checked_and_a_failure_carries_none() -> None:
    with pytest.raises(ValueError, match="asked as a noul but answered as a choice"):
        DecisionResponse(
            REQUEST,
            {
                "team": ChoiceAnswer("tech", {"billing": 0.2, "tech": 0.8}, 0.6),
                "refund": ChoiceAnswer("tech", {"billing": 0.2, "tech": 0.8}, 0.6),
                "anger": NoulAnswer(0.5),
            },
        )
    wire = systemone.decode_reply(REQUEST, REPLY)
    with pytest.raises(ValueError, match="a failed response carries no answers"):
        DecisionResponse(REQUEST, wire.answers, failure="it broke")


def test_the_trusted_path_is_no_public_name() -> None:
    assert not hasattr(harness.decision, "checked_answers")
    assert "checked_answers" not in harness.decision.__all__

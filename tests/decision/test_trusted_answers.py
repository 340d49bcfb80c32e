"""The answers' trusted constructors make what the public constructors make: for any
values their callers owe, the two are equal, hash alike, print alike and read alike; so does
the response made of checked answers (``answered_response``) and the decoded reply
(``decoded_reply``)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    ScoreAnswer,
)
from harness.decision._frozen_map import FrozenMap
from harness.decision._internal import (
    answered_response,
    checked_answers,
    trusted_choice,
    trusted_noul,
    trusted_score,
)
from harness.decision._wire import WireReply, decoded_reply

from .strategies import probabilities, texts


@st.composite
def choice_values(draw: st.DrawFn) -> tuple[str, dict[str, float], float]:
    table = draw(st.dictionaries(texts, probabilities, min_size=1, max_size=6))
    return draw(st.sampled_from(sorted(table))), table, draw(probabilities)


@given(choice_values())
def test_a_trusted_choice_is_the_public_one(values: tuple[str, dict[str, float], float]) -> None:
    choice, table, confidence = values
    public = ChoiceAnswer(choice, table, confidence)
    trusted = trusted_choice(choice, dict(table), confidence)
    assert trusted == public
    assert hash(trusted) == hash(public)
    assert repr(trusted) == repr(public)
    assert list(trusted.probabilities.items()) == list(public.probabilities.items())
    assert trusted.probabilities == public.probabilities


@given(probabilities)
def test_a_trusted_noul_is_the_public_one(probability: float) -> None:
    assert trusted_noul(probability) == NoulAnswer(probability)
    assert repr(trusted_noul(probability)) == repr(NoulAnswer(probability))


@st.composite
def score_values(draw: st.DrawFn) -> tuple[float, tuple[str, ...], tuple[float, ...], float]:
    levels = tuple(draw(st.lists(texts, min_size=1, max_size=6)))
    table = tuple(draw(st.lists(probabilities, min_size=len(levels), max_size=len(levels))))
    score = draw(st.floats(min_value=0.0, max_value=float(len(levels) - 1)))
    return score, levels, table, draw(probabilities)


@given(score_values())
def test_a_trusted_score_is_the_public_one(
    values: tuple[float, tuple[str, ...], tuple[float, ...], float],
) -> None:
    score, levels, table, confidence = values
    public = ScoreAnswer(score, levels, table, confidence)
    trusted = trusted_score(score, levels, table, confidence)
    assert trusted == public
    assert hash(trusted) == hash(public)
    assert repr(trusted) == repr(public)


def test_a_trusted_answer_is_as_frozen_as_a_public_one() -> None:
    answer = trusted_choice("a", {"a": 1.0}, 1.0)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        answer.choice = "b"  # type: ignore[misc]
    with pytest.raises(TypeError):
        answer.probabilities["a"] = 0.0  # type: ignore[index]


@given(st.floats(min_value=0.0, max_value=1e6), st.sampled_from([None, "sparrow", "m-1"]))
def test_an_answered_response_is_the_constructors(latency: float, model: str | None) -> None:
    request = DecisionRequest("a ticket", {"refund": Noul("Refund?")})
    checked = checked_answers(request, {"refund": NoulAnswer(0.25)})
    public = DecisionResponse(request, checked, input_tokens=None, model=model, latency=latency)
    made = answered_response(request, checked, model, latency)
    assert made == public
    assert repr(made) == repr(public)
    assert made.answers is checked
    assert (made.request_id, made.failure, made.reading, made.input_tokens) == (None,) * 4


def test_an_answered_response_of_unchecked_values_is_checked_by_the_constructor() -> None:
    request = DecisionRequest("a ticket", {"refund": Noul("Refund?")})
    other = DecisionRequest("a ticket", {"refund": Noul("Refund?")})
    checked = checked_answers(other, {"refund": NoulAnswer(0.25)})
    assert answered_response(request, checked, None, 0.5).answers == {"refund": NoulAnswer(0.25)}
    with pytest.raises(ValueError, match="latency must not be negative"):
        answered_response(request, checked_answers(request, {}), None, -1.0)
    with pytest.raises(ValueError, match="answers no question asked"):
        answered_response(request, checked_answers(other, {"x": NoulAnswer(0.5)}), None, 0.5)


@given(st.sampled_from([None, "m-1"]), st.sampled_from([None, 0, 812]), st.sampled_from([None, 3]))
def test_a_decoded_reply_is_the_constructors(
    model: str | None, input_tokens: int | None, output_tokens: int | None
) -> None:
    answers: FrozenMap[str, Answer] = FrozenMap([("refund", NoulAnswer(0.25))])
    made = decoded_reply(answers, model, input_tokens, output_tokens)
    public = WireReply(answers, model, input_tokens, output_tokens)
    assert made == public
    assert repr(made) == repr(public)
    assert made.answers is answers
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.model = "other"  # type: ignore[misc]  # frozen, as the public one

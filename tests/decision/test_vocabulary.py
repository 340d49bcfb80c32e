"""Construction rules of the decision vocabulary (ARCHITECTURE.md section 3)."""

from __future__ import annotations

import math

import pytest

from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    RefusedAnswer,
    Score,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)

from .strategies import CANARY


def test_choice_keeps_options_in_order_read_only() -> None:
    choice = Choice("Which team?", {"tech": "Bugs", "billing": None, "sales": "Pricing"})
    assert list(choice.options) == ["tech", "billing", "sales"]
    assert choice.options["billing"] is None
    assert choice.kind == "choice"
    with pytest.raises(TypeError):
        choice.options["tech"] = "x"  # type: ignore[index]


def test_choice_accepts_a_sequence_of_keys() -> None:
    choice = Choice("Which colour?", ["red", "green"])
    assert dict(choice.options) == {"red": None, "green": None}


def test_choice_equality_follows_option_order() -> None:
    assert Choice("c?", ["a", "b"]) == Choice("c?", {"a": None, "b": None})
    assert Choice("c?", ["a", "b"]) != Choice("c?", ["b", "a"])
    assert hash(Choice("c?", ["a", "b"])) == hash(Choice("c?", ["a", "b"]))


def test_a_one_option_choice_is_valid() -> None:
    assert len(Choice("Only?", ["only"]).options) == 1


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        ({}, "at least one option"),
        ([], "at least one option"),
        ({" ": None}, "must not be blank"),
        (["a", "a"], "must be unique"),
        ("ab", "not a single str"),
        ({"a": 3}, "must be a str or None"),
    ],
)
def test_bad_choice_options_are_refused_naming_the_rule(options: object, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        Choice("Which?", options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "make", [Noul, lambda text: Choice(text, ["a"]), lambda text: Score(text, ["a", "b"])]
)
@pytest.mark.parametrize("instructions", ["", "   \n"])
def test_blank_instructions_are_refused(make: object, instructions: str) -> None:
    with pytest.raises(ValueError, match="instructions must not be blank"):
        make(instructions)  # type: ignore[operator]


def test_noul_sides_are_optional() -> None:
    noul = Noul("Refund?", when_false="no money back")
    assert (noul.when_true, noul.when_false, noul.kind) == (None, "no money back", "noul")


def test_score_needs_two_levels_lowest_first() -> None:
    assert Score("Angry?", ["calm", "furious"]).levels == ("calm", "furious")
    assert Score("Angry?", ["calm", "furious"]).kind == "score"
    with pytest.raises(ValueError, match="at least two levels"):
        Score("Angry?", ["calm"])
    with pytest.raises(ValueError, match="level 1 must not be blank"):
        Score("Angry?", ["calm", " "])


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, math.inf, "0.5", True])
def test_every_probability_is_in_0_1_and_not_nan(bad: object) -> None:
    with pytest.raises(ValueError, match="probability"):
        NoulAnswer(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="option 'a'"):
        ChoiceAnswer("a", {"a": bad}, 0.5)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="level 1"):
        ScoreAnswer(0.5, ("lo", "hi"), (0.5, bad), 0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence"):
        ChoiceAnswer("a", {"a": 1.0}, bad)  # type: ignore[arg-type]


def test_answers_keep_their_values() -> None:
    choice = ChoiceAnswer("b", {"a": 0.25, "b": 0.75}, 0.5)
    assert (choice.choice, dict(choice.probabilities), choice.confidence) == (
        "b",
        {"a": 0.25, "b": 0.75},
        0.5,
    )
    score = ScoreAnswer(1, ["lo", "mid", "hi"], [0.0, 1.0, 0.0], 1.0)
    assert (score.score, score.levels, score.probabilities) == (
        1.0,
        ("lo", "mid", "hi"),
        (0.0, 1.0, 0.0),
    )
    assert RefusedAnswer().reason is None
    assert {a.kind for a in (choice, score, NoulAnswer(0.5), RefusedAnswer("x"))} == {
        "choice",
        "score",
        "noul",
        "refused",
    }


def test_answer_shape_rules() -> None:
    with pytest.raises(ValueError, match="chosen option 'c'"):
        ChoiceAnswer("c", {"a": 0.5, "b": 0.5}, 0.0)
    with pytest.raises(ValueError, match="one probability per level"):
        ScoreAnswer(0.5, ("lo", "hi"), (1.0,), 0.5)
    with pytest.raises(ValueError, match=r"score must be a level position in \[0, 1\]"):
        ScoreAnswer(1.5, ("lo", "hi"), (0.5, 0.5), 0.5)
    with pytest.raises(ValueError, match="finite"):
        ScoreAnswer(math.nan, ("lo", "hi"), (0.5, 0.5), 0.5)


def test_choice_confidence_reference_definition() -> None:
    assert choice_confidence({"a": 1.0}) == 1.0
    assert choice_confidence([0.5, 0.5]) == 0.0
    assert choice_confidence([1.0, 0.0, 0.0]) == 1.0
    assert choice_confidence({"a": 0.7, "b": 0.2, "c": 0.1}) == pytest.approx(
        (0.7 - 1 / 3) / (2 / 3)
    )


def test_score_confidence_reference_definition() -> None:
    assert score_confidence([0.0, 0.0, 1.0]) == 1.0
    assert score_confidence([0.5, 0.5]) == 0.0
    # mode 1, spread 0.25 + 0.25 = 0.5, uniform spread (1 + 0 + 1) / 3
    assert score_confidence([0.25, 0.5, 0.25]) == pytest.approx(1 - 0.5 / (2 / 3))
    assert score_confidence([0.5, 0.0, 0.5]) == 0.0  # clamped at 0


def test_request_keeps_questions_in_order_and_the_state() -> None:
    request = DecisionRequest(
        {"ticket": ("a", "b")},
        {"z": Noul("Z?"), "a b": Choice("A?", ["x"]), "🎯": Score("S?", ["l", "h"])},
    )
    assert list(request.questions) == ["z", "a b", "🎯"]
    assert request.state == {"ticket": ["a", "b"]}  # copied into plain JSON
    assert DecisionRequest("plain text", {"q": Noul("Q?")}).state == "plain text"


def test_request_needs_a_question_with_a_non_empty_id() -> None:
    with pytest.raises(ValueError, match="at least one question"):
        DecisionRequest("s", {})
    with pytest.raises(ValueError, match="non-empty"):
        DecisionRequest("s", {"": Noul("Q?")})
    with pytest.raises(ValueError, match="must be a Choice, Noul or Score"):
        DecisionRequest("s", {"q": "Q?"})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("state", "named"),
    [
        ({CANARY: {1, 2}}, "set"),
        ([CANARY, math.nan], "non-finite"),
        ({CANARY: {1: CANARY}}, "key of type int"),
        (object(), "object"),
    ],
)
def test_a_state_that_is_not_json_is_refused_without_quoting_it(state: object, named: str) -> None:
    with pytest.raises(ValueError, match=named) as caught:
        DecisionRequest(state, {"q": Noul("Q?")})  # type: ignore[arg-type]
    assert CANARY not in str(caught.value)
    assert "state" in str(caught.value)


def test_a_cyclic_state_is_refused() -> None:
    cycle: list[object] = [CANARY]
    cycle.append(cycle)
    with pytest.raises(ValueError, match="cycle") as caught:
        DecisionRequest(cycle, {"q": Noul("Q?")})  # type: ignore[arg-type]
    assert CANARY not in str(caught.value)


@pytest.mark.parametrize("state", [None, 5, 2.5, True])
def test_a_bare_scalar_state_is_refused_naming_the_rule(state: object) -> None:
    with pytest.raises(ValueError, match="must be a string, an object or an array"):
        DecisionRequest(state, {"q": Noul("Q?")})  # type: ignore[arg-type]

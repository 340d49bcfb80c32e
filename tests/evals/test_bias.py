"""Position bias: fake models whose probabilities follow place, content or both by a known
amount, re-asked in cyclic orders; the figures against an independent computation."""

from __future__ import annotations

import pytest

from harness.decision import Choice, ChoiceAnswer, DecisionRequest, Noul, NoulAnswer
from harness.evals._bias import cyclic_orders, position_bias
from harness.testing import FakeDecisionModel

PLACE = (0.55, 0.25, 0.1, 0.1)
"""A model reading place only: what it puts on the first, second, ... option shown."""
CONTENT = {"billing": 0.7, "technical": 0.1, "account": 0.1, "shipping": 0.1}
"""A model reading content only: what it puts on each option wherever it is shown."""


def requests(count: int) -> list[DecisionRequest]:
    options = {key: None for key in CONTENT}
    return [
        DecisionRequest(
            {"ticket": index},
            {"team": Choice("Which team?", options), "refund": Noul("Refund?")},
        )
        for index in range(count)
    ]


def mixed(weight: float) -> FakeDecisionModel:
    """``weight`` of place, ``1 - weight`` of content."""

    def policy(request: DecisionRequest) -> dict[str, ChoiceAnswer | NoulAnswer]:
        question = request.questions["team"]
        assert isinstance(question, Choice)
        probabilities = {
            option: weight * PLACE[place] + (1 - weight) * CONTENT[option]
            for place, option in enumerate(question.options)
        }
        top = max(probabilities, key=lambda o: probabilities[o])
        return {
            "team": ChoiceAnswer(top, probabilities, confidence=0.5),
            "refund": NoulAnswer(0.5),
        }

    return FakeDecisionModel(policy)


def expected_share(weight: float) -> float:
    """Independently: over the four cyclic orders every option visits every place once, so the
    place means are weight * PLACE + (1 - weight) / 4 and the option means are
    (1 - weight) * CONTENT + weight / 4."""
    n = len(PLACE)
    position = sum((weight * p + (1 - weight) / n - 1 / n) ** 2 for p in PLACE)
    content = sum(((1 - weight) * c + weight / n - 1 / n) ** 2 for c in CONTENT.values())
    return position / (position + content)


def test_cyclic_orders_rotate_and_spread() -> None:
    assert cyclic_orders(["a", "b", "c", "d"], 4) == [
        ["a", "b", "c", "d"],
        ["b", "c", "d", "a"],
        ["c", "d", "a", "b"],
        ["d", "a", "b", "c"],
    ]
    assert cyclic_orders(["a", "b", "c", "d"], 2) == [["a", "b", "c", "d"], ["c", "d", "a", "b"]]
    assert len(cyclic_orders(["a", "b"], 5)) == 2  # at most one order per option
    with pytest.raises(ValueError, match="at least 1"):
        cyclic_orders(["a"], 0)


@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0])
def test_the_share_that_follows_position_is_what_the_model_was_built_with(weight: float) -> None:
    model = mixed(weight)
    report = position_bias(requests(6), model=model, orderings=4, resamples=50)
    assert report.position_share.value == pytest.approx(expected_share(weight), abs=1e-9)
    assert len(report.questions) == 6  # the choices only: the noul is not permuted
    assert len(model.requests) == 6 * 4
    means = report.place_means[4]
    for place, mean in enumerate(means):
        assert mean == pytest.approx(weight * PLACE[place] + (1 - weight) / 4)
    stable = report.stable_top.value
    assert stable == (1.0 if weight < 0.5 else 0.0)  # content wins the top until place does
    assert any("position rather than content" in line for line in report.lines())


def test_a_model_without_choices_has_no_figure() -> None:
    only_nouls = [DecisionRequest("s", {"refund": Noul("Refund?")})]
    report = position_bias(only_nouls, model=mixed(0.5), orderings=3, resamples=10)
    assert report.questions == ()
    assert report.position_share.value is None
    assert report.position_share.undefined is not None

"""Position bias: fake models whose probabilities follow place, content or both by a known
amount, re-asked in cyclic orders; the figures against an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.decision import Choice, ChoiceAnswer, DecisionRequest, Noul, NoulAnswer
from harness.evals import load_report
from harness.evals._bias import position_bias, rotated_options
from harness.testing import FakeDecisionModel, override

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


def test_rotated_options_rotate_and_spread() -> None:
    assert rotated_options(["a", "b", "c", "d"], 4) == [
        ["a", "b", "c", "d"],
        ["b", "c", "d", "a"],
        ["c", "d", "a", "b"],
        ["d", "a", "b", "c"],
    ]
    assert rotated_options(["a", "b", "c", "d"], 2) == [["a", "b", "c", "d"], ["c", "d", "a", "b"]]
    assert len(rotated_options(["a", "b"], 5)) == 2  # at most one order per option
    with pytest.raises(ValueError, match="at least 1"):
        rotated_options(["a"], 0)


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


def write_pack(path: Path, count: int) -> Path:
    request = {
        "state": {"ticket": "{index}"},
        "questions": {
            "team": {
                "type": "choice",
                "instructions": "Which team?",
                "criteria": {key: key for key in CONTENT},
            },
            "refund": {"type": "noul", "instructions": "Refund?"},
        },
    }
    rows = [
        json.dumps(
            {
                "name": f"ticket-{index}",
                "request": json.loads(json.dumps(request).replace("{index}", str(index))),
                "labels": {"team": "billing", "refund": False},
            }
        )
        for index in range(count)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("weight", [0.0, 0.6])
def test_harness_eval_pack_reports_the_position_bias_of_a_model_built_with_it(
    weight: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = write_pack(tmp_path / "pack.jsonl", 5)
    model = mixed(weight)
    common = ["eval", "pack", str(pack), "--resamples", "30", "--position-bias", "4"]
    with override(model=model):
        code = main([*common, "--out", str(tmp_path / "out")])
    shown = capsys.readouterr().out
    assert code == 0
    assert len(model.requests) == 5 + 5 * 4  # the eval's asking, then four orders of each
    share = expected_share(weight)
    assert f"share of probability following position rather than content: {share:.3f}" in shown
    means = ", ".join(f"{weight * p + (1 - weight) / 4:.3f}" for p in PLACE)
    assert f"4 options: mean probability by place {means}" in shown
    written = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    figure = written["position_bias"]
    assert figure["orderings"] == 4
    assert figure["choices"] == 5
    assert figure["position_share"]["value"] == pytest.approx(share, abs=1e-6)
    assert figure["stable_top"]["value"] == (1.0 if weight < 0.5 else 0.0)
    assert load_report(tmp_path / "out").metric("team.accuracy").value == 1.0  # still a report

    with override(model=mixed(weight)):
        code = main([*common, "--json", "--out", str(tmp_path / "again")])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["position_bias"] == figure
    assert printed["metrics"] == written["metrics"]


def test_position_bias_is_refused_where_it_cannot_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = write_pack(tmp_path / "pack.jsonl", 1)
    assert main(["eval", "pack", str(pack), "--position-bias", "1"]) == 2
    assert "K >= 2" in capsys.readouterr().err
    thinker = "harness.evals.example:KeepRefunds"
    assert main(["eval", thinker, str(pack), "--position-bias", "3"]) == 2
    assert "harness eval pack" in capsys.readouterr().err

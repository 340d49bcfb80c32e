"""Decision packs: labelled single requests asked through the dispatcher and scored per role."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.cli import main
from harness.decision import Answer, DecisionRequest
from harness.evals import DecisionPack, evaluate_pack, metrics
from harness.testing import FakeDecisionModel, choose, rate, yes

REQUEST = {
    "state": {"ticket": "{ticket}"},
    "questions": {
        "refund": {"type": "noul", "instructions": "Does the customer want a refund?"},
        "team": {
            "type": "choice",
            "instructions": "Which team?",
            "criteria": {"billing": "money", "ops": "delivery", "tech": "the app"},
        },
        "anger": {
            "type": "score",
            "instructions": "How angry?",
            "criteria": ["calm", "cross", "furious"],
        },
    },
}

ROWS = [
    ("a", "refund please, I am furious", {"refund": True, "team": "billing", "anger": "furious"}),
    ("b", "where is my parcel", {"refund": False, "team": "ops", "anger": "calm"}),
    ("c", "the app crashes", {"refund": False, "team": "tech", "anger": "cross"}),
    ("d", "money back now", {"refund": True, "team": "billing", "anger": "cross"}),
]


def write_pack(path: Path) -> Path:
    lines = []
    for name, ticket, labels in ROWS:
        request = json.loads(json.dumps(REQUEST).replace("{ticket}", ticket))
        lines.append(json.dumps({"name": name, "request": request, "labels": labels}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def policy(request: DecisionRequest) -> dict[str, Answer]:
    """Says yes to a refund at 0.8 when the ticket says "refund", else 0.3; always billing
    (0.6); always the middle level."""
    ticket = str(request.state)
    questions = request.questions
    return {
        "refund": yes(0.8 if "refund" in ticket else 0.3),
        "team": choose(questions["team"], "billing", probability=0.6),  # type: ignore[arg-type]  # a Choice
        "anger": rate(questions["anger"], 1, probability=0.5),  # type: ignore[arg-type]  # a Score
    }


def test_a_pack_is_scored_per_question_against_a_computation_by_hand(tmp_path: Path) -> None:
    pack = DecisionPack.load(write_pack(tmp_path / "pack.jsonl"))
    report = evaluate_pack(pack, model=FakeDecisionModel(policy), resamples=100)
    assert [c.status for c in report.cases] == ["completed"] * 4
    assert "recall" not in report.metrics  # no runs, no answers to match
    p_yes = [0.8, 0.3, 0.3, 0.3]
    truth = [True, False, False, True]
    assert report.metric("refund.accuracy").value == pytest.approx(3 / 4)
    assert report.metric("refund.brier").value == pytest.approx(
        sum(2 * (p - t) ** 2 for p, t in zip(p_yes, truth, strict=True)) / 4
    )
    assert report.metric("refund.auc").value == pytest.approx(
        metrics.auc(p_yes, truth)  # the positives 0.8 and 0.3 against the negatives 0.3, 0.3
    )
    assert report.metric("refund.auc").value == pytest.approx((1 + 1 + 0.5 + 0.5) / 4)
    team = [0.6, 0.2, 0.2, 0.6]  # the probability given to the right team
    assert report.metric("team.accuracy").value == pytest.approx(2 / 4)
    assert report.metric("team.log_loss").value == pytest.approx(
        -sum(math.log(p) for p in team) / 4
    )
    dist = (0.25, 0.5, 0.25)
    levels = [2, 0, 1, 1]
    expected_rps = (
        sum(
            sum((sum(dist[: k + 1]) - (1.0 if lv <= k else 0.0)) ** 2 for k in range(2)) / 2
            for lv in levels
        )
        / 4
    )
    assert report.metric("anger.rps").value == pytest.approx(expected_rps)
    assert report.baselines["answer_key"]["team.accuracy"].value == 1.0
    assert report.baselines["uniform"]["team.brier"].value == pytest.approx(2 / 3)


async def test_the_blocking_pack_eval_refuses_in_a_loop_and_the_async_one_scores_the_same(
    tmp_path: Path,
) -> None:
    import inspect

    from harness.errors import SyncRunInLoopError
    from harness.evals import evaluate_pack_async

    assert inspect.signature(evaluate_pack) == inspect.signature(evaluate_pack_async)
    pack = DecisionPack.load(write_pack(tmp_path / "pack.jsonl"))
    with pytest.raises(SyncRunInLoopError, match=r"await evaluate_pack_async\(\.\.\.\)"):
        evaluate_pack(pack, model=FakeDecisionModel(policy))
    report = await evaluate_pack_async(pack, model=FakeDecisionModel(policy), resamples=100)
    assert report.metric("refund.accuracy").value == pytest.approx(3 / 4)


def test_harness_eval_pack_prints_the_table_and_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_pack(tmp_path / "pack.jsonl")
    code = main(
        [
            "eval",
            "pack",
            str(path),
            "--model",
            "embedded",
            "--resamples",
            "50",
            "--min-accuracy",
            "0.0",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "team.accuracy" in out
    assert (tmp_path / "out" / "report.json").exists()


def test_a_report_says_when_choices_follow_position(tmp_path: Path) -> None:
    from harness.evals import render_report_text

    pack = DecisionPack.load(write_pack(tmp_path / "pack.jsonl"))
    first = evaluate_pack(pack, model=FakeDecisionModel(policy), resamples=50)
    # the policy always answers billing, the first listed team; billing is right in 2 of 4
    assert first.metric("team.first_chosen").value == pytest.approx(1.0)
    assert first.metric("team.first_chosen").n == 4
    assert first.metric("team.first_right").value == pytest.approx(0.5)
    assert "anger.first_chosen" not in first.metrics  # scores (ordered levels) are no choice
    text = render_report_text(first)
    assert (
        "warning: team: the first option was chosen in 4 of 4 choices (1.00), where it was right "
        "in 0.50: the model's choices follow position"
    ) in text

    def reader(request: DecisionRequest) -> dict[str, Answer]:
        ticket = str(request.state)
        team = "tech" if "app" in ticket else "ops" if "parcel" in ticket else "billing"
        return {**policy(request), "team": choose(request.questions["team"], team)}  # type: ignore[arg-type]  # a Choice

    right = evaluate_pack(pack, model=FakeDecisionModel(reader), resamples=50)
    assert right.metric("team.first_chosen").value == pytest.approx(0.5)
    assert "warning:" not in render_report_text(right)
    # a comparison says which side's choices follow position: its McNemar may be of place alone
    from harness.evals import compare, render_comparison

    compared = render_comparison(compare(right, first))
    assert "B: warning: team: the first option was chosen in 4 of 4 choices" in compared
    assert "A: warning:" not in compared
    # the report's JSON keeps each choice's place, and reads back the same
    from harness.evals import load_report

    right.write_json(tmp_path / "report.json")
    again = load_report(tmp_path / "report.json")
    assert [c.placed for c in again.cases] == [c.placed for c in right.cases]
    assert [p.right for c in again.cases for p in c.placed] == [0, 1, 2, 0]


def test_orderings_is_refused_for_a_model_that_reads_no_logits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_pack(tmp_path / "pack.jsonl")
    assert main(["eval", "pack", str(path), "--model", "embedded", "--orderings", "3"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "harness eval: error: orderings 3: entry 'embedded' (embedded) reads no logits, so it "
        "cannot ask a choice in other orders; use an entry of llama, openai-chat, "
        "openai-completions"
    ]
    cases = Path(__file__).parent / "cases.jsonl"
    assert main(["eval", "tests.evals.thinkers:KeepSentences", str(cases), "--orderings", "0"]) == 2
    assert "--orderings K needs K >= 1" in capsys.readouterr().err

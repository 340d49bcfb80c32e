"""Comparing two evals: every change of answer is a flip (a candidate kept in one eval and not
in the other, whether the other dropped it or never reached it), and the gate says which."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.evals import (
    Candidate,
    CaseResult,
    EvalReport,
    ScoredDecision,
    check_gates,
    compare,
    render_comparison,
    score,
    write_junit,
)


def _case(name: str, expected: tuple[str, ...], seen: dict[str, float]) -> CaseResult:
    """A run's case whose candidates are ``seen`` (key -> selection probability), kept at 0.5."""
    candidates = tuple(
        Candidate(
            ref=f"item#{key}", value={"text": key}, key=key, probability=p, expected=key in expected
        )
        for key, p in seen.items()
    )
    decisions = tuple(
        ScoredDecision(
            case=name,
            question=f"select_{c.ref}",
            kind="noul",
            options=("yes", "no"),
            probabilities=(c.probability, 1 - c.probability),
            chosen=0 if c.probability >= 0.5 else 1,
            label=0 if c.expected else 1,
            threshold=0.5,
        )
        for c in candidates
    )
    answered = tuple(c.key for c in candidates if c.probability >= 0.5)
    return CaseResult(name, (), "completed", expected, answered, candidates, decisions)


def _report(cases: list[CaseResult]) -> EvalReport:
    return score(cases, subject="m:T", dataset="d", model="embedded", resamples=20)


A = _report(
    [
        _case("same", ("x",), {"x": 0.9, "y": 0.1}),
        _case("moved", ("a",), {"a": 0.8, "b": 0.7, "c": 0.6}),
    ]
)
B = _report(
    [
        _case("same", ("x",), {"x": 0.9, "y": 0.1}),
        _case("moved", ("a",), {"d": 0.8, "e": 0.9, "b": 0.2}),  # a, c gone; b dropped; d, e new
    ]
)


def test_a_changed_answer_counts_every_kept_candidate_that_changed_as_a_flip() -> None:
    comparison = compare(A, B)
    (change,) = comparison.changes
    assert set(change.added) == {"d", "e"}
    assert set(change.removed) == {"a", "b", "c"}
    flipped = {(s.case, s.decision, s.chosen_a, s.chosen_b) for s in comparison.flips}
    assert flipped == {
        ("moved", "select a", "yes", "absent"),
        ("moved", "select b", "yes", "no"),
        ("moved", "select c", "yes", "absent"),
        ("moved", "select d", "absent", "yes"),
        ("moved", "select e", "absent", "yes"),
    }
    assert len(comparison.flips) == len(change.added) + len(change.removed)
    text = render_comparison(comparison)
    assert "5 decision(s) flipped" in text


def test_max_flips_zero_fails_when_an_answer_changed_and_junit_names_the_flips(
    tmp_path: Path,
) -> None:
    comparison = compare(A, B)
    (gate,) = check_gates(B, comparison=comparison, max_flips=0)
    assert not gate.passed
    assert gate.message.startswith("max_flips: 5 decision(s) flipped")
    assert "FAILED" in gate.message
    root = ET.parse(write_junit(tmp_path / "j.xml", B, [gate])).getroot()
    (element,) = [c for c in root.findall("testcase") if c.get("classname") == "eval.gate"]
    failure = element.find("failure")
    assert failure is not None
    assert failure.text is not None
    assert "moved / select a: yes 0.800 -> absent" in failure.text
    assert "moved / select d: absent -> yes 0.800" in failure.text
    (same,) = check_gates(A, comparison=compare(A, A), max_flips=0)
    assert same.passed


def test_the_largest_shift_says_none_when_nothing_moved() -> None:
    text = render_comparison(compare(A, A))
    assert "largest probability shift: none" in text
    assert "same /" not in text.split("largest probability shift")[1].splitlines()[0]


def test_the_cli_compare_fails_max_flips_zero_when_an_answer_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    A.write_json(tmp_path / "a.json")
    B.write_json(tmp_path / "b.json")
    junit = tmp_path / "j.xml"
    args = ["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    assert main([*args, "--max-flips", "0", "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "answers changed in 1 case(s)" in out
    assert "max_flips: 5 decision(s) flipped (answers changed in 1 case(s)) <= 0: FAILED" in out
    assert ET.parse(junit).getroot().get("failures") == "2"  # the case "moved" and the gate
    assert main([*args, "--max-flips", "5"]) == 0

"""The checker's bounds and comparisons on their own: the wall-clock guard, the decision bound of
``report_run``, the byte comparison of two runs, and ``assert_invariants``' second run."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Mapping
from types import FrameType

import pytest

from harness.decision import Answer, DecisionRequest
from harness.providers import default_answers
from harness.testing import InvariantKind, InvariantViolation
from harness.testing._wall_clock import RunHung, guarded
from harness.testing.invariants import (
    RunBytes,
    assert_invariants,
    first_difference,
    invariant_problems,
    report_run,
    reproducibility_problems,
)
from harness.tools import Workflow

from ..thinker.notes import Note, Triage
from .test_planted_bugs import ReasksOnFinish, TracesItsRequests, finishes_when_it_can


def _spin() -> None:
    while True:
        pass


def test_the_guard_interrupts_blocking_code_in_the_main_thread() -> None:
    with pytest.raises(RunHung), guarded(0.05):
        time.sleep(3600)


def test_the_guard_interrupts_a_busy_loop_in_another_thread() -> None:
    outcome: list[str] = []

    def work() -> None:
        try:
            with guarded(0.05):
                _spin()
        except RunHung:
            outcome.append("interrupted")

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(120)  # a liveness bound, not a timing assertion
    assert outcome == ["interrupted"]


def test_the_guard_gives_back_the_previous_handler_and_timer() -> None:
    calls: list[int] = []

    def previous(signum: int, frame: FrameType | None) -> None:
        calls.append(signum)

    before = signal.signal(signal.SIGALRM, previous)
    signal.setitimer(signal.ITIMER_REAL, 600.0)
    try:
        with guarded(5.0):
            pass
        assert signal.getsignal(signal.SIGALRM) is previous
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < left <= 600.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, before)
    assert calls == []


def test_the_guard_refuses_a_limit_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="must be positive"), guarded(0):
        pass


async def test_a_runaway_run_is_stopped_at_the_decision_past_the_budget() -> None:
    thinker = ReasksOnFinish(Workflow())
    report = await report_run(thinker, Note("alpha is due; beta"), finishes_when_it_can)
    assert report.runaway
    assert report.error is None
    assert len(report.requests) == thinker.max_turns + 2
    assert len(report.answers) == thinker.max_turns + 1  # the last one was refused
    problems = invariant_problems(report)
    assert problems[0].kind == InvariantKind.TERMINATION
    assert "stopped the run" in problems[0]


async def test_a_run_waiting_past_its_timeout_is_reported_with_where_it_waited() -> None:
    async def waits(request: DecisionRequest) -> Mapping[str, Answer]:
        await asyncio.Event().wait()
        return {}

    report = await report_run(Triage(Workflow()), Note("alpha"), waits, run_timeout=0.2)
    assert report.hang is not None
    assert report.hang.during == "the model's policy answering request 1"
    assert "in waits" in report.hang.stack
    assert [p.kind for p in invariant_problems(report)] == [InvariantKind.HANG]


async def test_assert_invariants_runs_the_example_again_on_a_fresh_thinker() -> None:
    report = await assert_invariants(
        Triage(Workflow()), Note("alpha is due; beta"), default_answers, again=Triage(Workflow())
    )
    assert report.answer is not None
    with pytest.raises(InvariantViolation) as raised:
        await assert_invariants(
            TracesItsRequests(Workflow()),
            Note("alpha"),
            default_answers,
            again=TracesItsRequests(Workflow()),
        )
    assert raised.value.kind == InvariantKind.REPRODUCIBILITY


def _bytes(*bodies: bytes, outcome: str = "answered []", obs: str | None = "[]") -> RunBytes:
    return RunBytes(
        bodies=bodies, turns="[]", obs_turns=obs, world=("note#1 (note): x",), outcome=outcome
    )


def test_first_difference_names_the_byte() -> None:
    assert first_difference(b"abc", b"abc") is None
    assert first_difference(b"abc", b"abd") == 2
    assert first_difference(b"ab", b"abc") == 2


def test_equal_runs_have_no_reproducibility_problem() -> None:
    assert reproducibility_problems(_bytes(b"{}"), _bytes(b"{}")) == ([], "")


def test_runs_asking_a_different_number_of_decisions_are_not_reproducible() -> None:
    problems, _ = reproducibility_problems(_bytes(b"{}"), _bytes(b"{}", b"{}"))
    assert problems == [
        "not reproducible: run 1 asked 1 decisions, run 2 2, with the same answers to the same "
        "requests"
    ]
    assert problems[0].kind == InvariantKind.REPRODUCIBILITY


def test_a_different_outcome_is_shown_as_a_diff() -> None:
    problems, details = reproducibility_problems(
        _bytes(b"{}", outcome="answered [verdict#1]"),
        _bytes(b"{}", outcome="answered [verdict#2]"),
        ("here", "there"),
    )
    assert "the outcome differs between here and there (first at byte 18)" in problems[0]
    assert "-answered [verdict#1]" in details
    assert "+answered [verdict#2]" in details


def test_run_bytes_travel_as_json() -> None:
    sent = _bytes('{"s":"é"}'.encode(), b"\x00\xff", obs=None)
    assert RunBytes.from_json(sent.to_json()) == sent

"""What a broken run raises: :class:`InvariantViolation`, its problems and their kinds."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.testing._run_facts import RunReport

__all__ = ["InvariantKind", "InvariantViolation", "Problem"]


class InvariantKind(enum.StrEnum):
    """Which promise a problem breaks (a ``str``: ``kind == "termination"`` works)."""

    TERMINATION = "termination"
    """More decisions than ``max_turns + 1`` or than the legal pairs + 1."""
    HANG = "hang"
    """A run outlived the wall-clock limit (a tool, the policy or the thinker never returned)."""
    REPRODUCIBILITY = "reproducibility"
    """The same example ran twice (or in two interpreters) gave different bytes."""
    MOVES = "moves"
    """An illegal move offered or taken, a question too many or missing."""
    ANSWER = "answer"
    """The answer is not exactly the selected candidates, or a non-candidate was offered."""
    RECORD = "record"
    """The turns, ``OBS_TURNS`` or the ``done`` lines do not say what happened."""
    STATE = "state"
    """A request's state is not the documented object (keys, objective, artifact lines)."""
    CRASH = "crash"
    """The run failed with an error the test did not expect."""


class Problem(str):
    """One broken invariant: its text (this string) and its :class:`InvariantKind`."""

    kind: InvariantKind

    def __new__(cls, kind: InvariantKind, text: str) -> Problem:
        """A problem of ``kind`` reading ``text``."""
        made = super().__new__(cls, text)
        made.kind = kind
        return made

    def __reduce__(self) -> tuple[type[Problem], tuple[InvariantKind, str]]:
        return (Problem, (self.kind, str(self)))


class InvariantViolation(AssertionError):
    """A run broke the thinker's invariants.

    ``problems`` says which (each a :class:`Problem` with its ``kind``), ``kind`` is the first
    problem's kind, ``report`` the run (``None`` when the run could not be recorded), ``details``
    what the problems point to (a traceback, a diff of two requests).
    """

    def __init__(
        self, problems: Sequence[Problem], report: RunReport | None, *, details: str = ""
    ) -> None:
        if not problems:
            raise ValueError("an InvariantViolation needs at least one problem")
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.report = report
        self.details = details
        listed = "\n".join(f"- [{problem.kind}] {problem}" for problem in self.problems)
        parts = [f"the run broke {len(self.problems)} invariant(s):\n{listed}"]
        if details:
            parts.append(details)
        if report is not None:
            parts.append(report.render())
        super().__init__("\n\n".join(parts))

    @property
    def kind(self) -> InvariantKind:
        """The kind of the first problem."""
        return self.problems[0].kind

    @property
    def kinds(self) -> frozenset[InvariantKind]:
        """Every kind among the problems."""
        return frozenset(problem.kind for problem in self.problems)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuilt, (self.problems, self.details, str(self)))


def _rebuilt(problems: tuple[Problem, ...], details: str, text: str) -> InvariantViolation:
    """An unpickled violation: its problems and text (the report stays behind: it holds live
    classes and a thinker)."""
    violation = InvariantViolation.__new__(InvariantViolation)
    AssertionError.__init__(violation, text)
    violation.problems = problems
    violation.report = None
    violation.details = details
    return violation

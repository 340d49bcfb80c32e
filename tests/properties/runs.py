"""Shared by the property tests: run a scenario and read its requests back.

``takes`` is the invariant checker's own (:func:`harness.testing.invariants.takes`), re-exported
so the tests and the checker agree on which artifact a tool takes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Never

from harness.artifacts import Artifact
from harness.decision import Choice, DecisionRequest
from harness.providers._fake import Policy
from harness.testing.invariants import RunReport, report_run, takes
from harness.testing.strategies import Scenario
from harness.thinker import FINISH
from harness.tools import ClassToolProvider, Workflow

__all__ = ["offered_tools", "options", "providers", "run", "seen_world", "takes"]


def run(scenario: Scenario, policy: Policy) -> RunReport:
    """One run of the scenario's thinker under ``policy``, recorded."""
    return asyncio.run(report_run(scenario.thinker(Workflow()), scenario.input, policy))


def seen_world(report: RunReport, request: DecisionRequest) -> Sequence[tuple[str, Artifact]]:
    """The world as ``request`` saw it: the prefix its state's artifact lines cover."""
    state = request.state
    assert isinstance(state, dict)
    lines = state["artifacts"]
    assert isinstance(lines, list)
    assert len(lines) <= len(report.world)
    return report.world[: len(lines)]


def options(request: DecisionRequest, question_id: str) -> list[str]:
    """The options of a choice question of ``request``."""
    question = request.questions[question_id]
    assert isinstance(question, Choice), f"{question_id} is not a choice"
    return list(question.options)


def offered_tools(request: DecisionRequest) -> list[str]:
    """The tools ``next`` offers (finish aside); none on a selection-only request."""
    if "next" not in request.questions:
        return []
    return [o for o in options(request, "next") if o != FINISH]


def providers(report: RunReport) -> dict[str, ClassToolProvider[Never, Artifact]]:
    """The thinker's palette by tool name."""
    return {p.name: p for p in (ClassToolProvider(cls) for cls in report.thinker.palette)}

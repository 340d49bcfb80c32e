"""Shared by the property tests: run a scenario and read its requests back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Never

from harness.artifacts import Artifact, ListArtifact, conforms
from harness.deciding import FINISH
from harness.decision import Choice, DecisionRequest
from harness.llm._fake import Policy
from harness.testing.invariants import RunReport, record_run
from harness.testing.strategies import Scenario
from harness.tools import ClassToolProvider, Workflow, runtime_class


def run(scenario: Scenario, policy: Policy) -> RunReport:
    """One run of the scenario's thinker under ``policy``, recorded."""
    return asyncio.run(record_run(scenario.thinker(Workflow()), scenario.input, policy))


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


def takes(provider: ClassToolProvider[Never, Artifact], artifact: Artifact) -> bool:
    """Whether ``provider``'s tool takes ``artifact`` (a list only when it takes a list)."""
    takes_list = issubclass(runtime_class(provider.input_type), ListArtifact)
    if isinstance(artifact, ListArtifact) and not takes_list:
        return False
    return conforms(artifact, provider.input_type)

"""One thinker run through the dispatcher against a fake model, recorded for the invariants.

:func:`record_run` runs a thinker on an input with a policy (through a real
:class:`~harness.jobs.Dispatcher`, a :class:`~harness.llm.FakeDecisionModel` and upstream retries
0, so every decision is asked exactly once) and returns a :class:`RunReport`: every request, the
answers the policy gave, the wire bodies, the turns, ``OBS_TURNS``, the world, and the answer or
the error. :meth:`RunReport.render` shows it as text.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.deciding import OBS_TURNS, DecisionThinker, DecisionTurn, ThinkerRun
from harness.decision import Answer, Choice, ChoiceAnswer, DecisionRequest, NoulAnswer
from harness.jobs import Dispatcher, Pacing
from harness.llm import FakeDecisionModel
from harness.llm._fake import Policy
from harness.models import Catalog, CatalogEntry
from harness.tools import Workflow

__all__ = ["RunReport", "World", "record_run", "ref_of", "run_digest"]

World = tuple[tuple[str, Artifact], ...]
"""A run's world: ``(ref, artifact)`` pairs in the order things came to be."""

_ENTRY = CatalogEntry(
    id="fake",
    provider="fake",
    wire_model_id="fake-decider",
    max_context_tokens=1_000_000,
    max_concurrent=1,
)


@attrs.frozen
class RunReport:
    """What one run did, for the invariants and for a person reading a failure."""

    thinker: DecisionThinker[Any, Any]  # any thinker: the checker reads its public attributes
    input: Artifact
    requests: tuple[DecisionRequest, ...]
    answers: tuple[Mapping[str, Answer], ...]  # what the policy answered, request by request
    bodies: tuple[bytes, ...]
    turns: tuple[DecisionTurn, ...]
    obs_turns: str | None
    world: World
    answer: ListArtifact[Artifact] | None
    error: Exception | None

    @property
    def world_before_answer(self) -> World:
        """The world as the run's last decision saw it: everything before the answer list was
        adopted (the whole world when there is no registered answer). Legal moves and
        candidates are counted over this, never over the answer itself."""
        for index, (_, artifact) in enumerate(self.world):
            if artifact is self.answer:
                return self.world[:index]
        return self.world

    def digest(self) -> str:
        """The sha256 of the wire bodies and ``OBS_TURNS``: equal for byte-identical runs."""
        hasher = hashlib.sha256()
        for body in self.bodies:
            hasher.update(len(body).to_bytes(8, "big") + body)
        hasher.update((self.obs_turns or "").encode("utf-8"))
        return hasher.hexdigest()

    def render(self) -> str:
        """The run as text: outcome, world, each request with its answers, each turn."""
        name = type(self.thinker).__qualname__
        if self.error is not None:
            outcome = f"failed with {type(self.error).__qualname__}: {self.error}"
        elif self.answer is not None:
            refs = [ref_of(self.world, item) for item in self.answer.iterands]
            outcome = f"answered [{', '.join(refs)}]"
        else:
            outcome = "did not finish"
        lines = [
            f"run of {name} (max_turns {self.thinker.max_turns}, threshold "
            f"{self.thinker.selection_threshold}): {outcome}",
            "world:",
        ]
        lines += [f"  {ref}: {type(a).__qualname__} {_short(a)}" for ref, a in self.world]
        for number, request in enumerate(self.requests, 1):
            lines.append(f"request {number}:")
            given = self.answers[number - 1] if number <= len(self.answers) else {}
            for qid, question in request.questions.items():
                lines.append(f"  {qid}: {_asked(question)} -> {_answered(given.get(qid))}")
        for turn in self.turns:
            lines.append(f"turn {turn.turn}: {_turn_text(turn)}")
        return "\n".join(lines)


def ref_of(world: Sequence[tuple[str, Artifact]], artifact: Artifact) -> str:
    """The ref of ``artifact`` (by identity) in ``world``, else ``"<unregistered ...>"``."""
    return next((ref for ref, a in world if a is artifact), f"<unregistered {artifact!r}>")


def _short(artifact: Artifact) -> str:
    text = repr(artifact)
    return text if len(text) <= 100 else text[:97] + "..."


def _asked(question: object) -> str:
    if isinstance(question, Choice):
        return f"choice [{', '.join(question.options)}]"
    return type(question).__name__.lower()


def _answered(answer: Answer | None) -> str:
    if isinstance(answer, ChoiceAnswer):
        return f"{answer.choice} ({answer.probabilities[answer.choice]:g})"
    if isinstance(answer, NoulAnswer):
        return f"{answer.probability:g}"
    return "(no answer)" if answer is None else repr(answer)


def _turn_text(turn: DecisionTurn) -> str:
    if turn.artifact is None:
        selection = ", ".join(f"{ref} {p:g}" for ref, p in turn.selection.items())
        asked = "" if turn.next is not None else " (selection only)"
        return f"{turn.tool}{asked}, selection {{{selection}}}"
    outcome = f"failed: {turn.failure}" if turn.failure is not None else f"-> {turn.result}"
    return f"{turn.tool} on {turn.artifact} {outcome}"


async def record_run(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
) -> RunReport:
    """Run ``thinker`` on ``input`` with the fake model answering by ``policy``; never raises
    for the run's own failure (it is the report's ``error``)."""
    given: list[Mapping[str, Answer]] = []

    async def recording(request: DecisionRequest) -> Mapping[str, Answer]:
        produced = policy(request)
        answers = await produced if inspect.isawaitable(produced) else produced
        given.append(answers)
        return answers

    model = FakeDecisionModel(recording)
    catalog = Catalog([_ENTRY], {"decision": _ENTRY.id})
    job = ThinkerRun(Workflow(), thinker, input, upstream_retries=0)
    answer: ListArtifact[Artifact] | None = None
    error: Exception | None = None
    async with Dispatcher(catalog, clients={_ENTRY.id: model}, pacing=Pacing.immediate()) as d:
        try:
            result = await d.run(job)
            answer = result
        except Exception as failure:  # the run's own failure goes on the report
            error = failure
    obs = job.metadata.get(OBS_TURNS)
    return RunReport(
        thinker=thinker,
        input=input,
        requests=tuple(model.requests),
        answers=tuple(given),
        bodies=tuple(model.bodies),
        turns=tuple(thinker.turns()),
        obs_turns=obs if isinstance(obs, str) else None,
        world=tuple(thinker.registry.world()),
        answer=answer,
        error=error,
    )


async def run_digest(thinker: DecisionThinker[Any, Any], input: Artifact, policy: Policy) -> str:
    """The :meth:`RunReport.digest` of one run (compare it across runs and interpreters)."""
    return (await record_run(thinker, input, policy)).digest()

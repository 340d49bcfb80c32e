"""Each recorded move's tool run again on the artifact the record names, for the invariants.

Tools are deterministic by contract, so what a tool makes of an artifact can be re-derived
without trusting the thinker: :func:`rerun_moves` takes each tool turn's ``(tool, artifact)``
from the record, looks the artifact up in the run's world by its ref and the tool up in the
palette by its name, and runs the tool again (twice, in a dispatcher of its own whose model
answers nothing). The invariants then compare the product and the readable failure with what
the world holds and what the turn and the next ``done`` line say (a thinker that ran the tool on
another artifact, or reworded its failure, is caught there).

A move is left unchecked, saying why, when it cannot be re-derived: its tool or artifact is not
found (the record's problem, reported elsewhere), the tool asks the model (its answers are the
run's, not re-playable here), it fails unreadably, or its two re-runs disagree (a tool that is
not deterministic: the reproducibility check names it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar, Never

import attrs

from harness.artifacts import (
    Artifact,
    ListArtifact,
    TextFormatterRegistry,
    digest_words,
    to_json,
)
from harness.catalog import Catalog, CatalogEntry
from harness.decision import DecisionRequest, DecisionResponse
from harness.errors import HarnessError
from harness.jobs import Dispatcher, Job, JobContext, Pacing
from harness.providers import FakeDecisionModel
from harness.thinker import FINISH, DecisionThinker, DecisionTurn
from harness.tools import ClassToolProvider, Workflow

__all__ = ["Rerun", "outcome_text", "rerun_moves"]


@attrs.frozen
class Rerun:
    """What a recorded move's tool made of the recorded artifact when run again.

    Exactly one of ``product`` and ``failure`` is set unless ``unchecked`` says why the move
    could not be re-derived; ``explained`` is the failure as the model is told it.
    """

    turn: int
    tool: str
    ref: str
    product: Artifact | None = None
    failure: str | None = None
    explained: str | None = None
    unchecked: str | None = None


class _AsksTheModel(Exception):
    """A re-run tool asked the model: its answers were the run's and cannot be re-played."""


class _NoAnswers(FakeDecisionModel):
    """A model that answers nothing: a tool asking it cannot be re-derived."""

    def __init__(self) -> None:
        super().__init__(lambda request: {})

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Refuse: the re-run of a tool never reaches a model."""
        raise _AsksTheModel


class _Move(Job[Artifact]):
    """One tool on one artifact, the tool built as the thinker builds it (``Tool(context)``)."""

    kind: ClassVar[str] = "rerun"

    def __init__(self, provider: ClassToolProvider[Never, Artifact], artifact: Artifact) -> None:
        super().__init__(Workflow(), upstream_retries=0, timeout=None)
        self.provider = provider
        self.artifact = artifact

    async def run(self, context: JobContext) -> Artifact:
        """Execute the tool on the artifact."""
        tool: Any = self.provider.create(context)  # Any: its input type is checked by takes()
        product: Artifact = await tool.execute(self.artifact, context)
        return product


def outcome_text(
    product: Artifact | None, failure: str | None, formatters: TextFormatterRegistry
) -> str:
    """A move's outcome as text, for comparing two runs of it: the product's alias and all it
    holds (never its ref), else the failure.

    What a product holds is its whole JSON, a list's item by item, not its digest words: those
    are what the model reads, cut short, and a list's are only its count and alias, so two
    lists of as many verdicts on different notes would compare equal and a move run on another
    artifact than its record names would pass whenever the two products had the same length.
    An artifact with no JSON form is compared by its formatter's whole text (else its words)."""
    if product is not None:
        return f"({type(product).alias}): {_held(product, formatters)}"
    return f"failed: {failure}"


def _held(artifact: Artifact, formatters: TextFormatterRegistry) -> str:
    """All ``artifact`` holds, as text: its JSON, a list's items' in order."""
    if isinstance(artifact, ListArtifact):
        return "[" + ", ".join(_held(item, formatters) for item in artifact.iterands) + "]"
    try:
        return to_json(artifact)
    except TypeError:  # no JSON form: the whole text the application registered for it
        text = formatters.format(artifact)
        return text if text is not None else digest_words(artifact, formatters)


async def _once(
    dispatcher: Dispatcher, provider: ClassToolProvider[Never, Artifact], artifact: Artifact
) -> tuple[Artifact | None, str | None, str | None, str | None]:
    """(product, failure, explained, unchecked) of one re-run."""
    try:
        product = await dispatcher.run(_Move(provider, artifact))
    except HarnessError as failure:
        if _asked_the_model(failure):
            return None, None, None, "the tool asks the model (its answers were the run's)"
        if not failure.llm_readable:
            return None, None, None, f"the tool fails unreadably ({type(failure).__name__})"
        return None, failure.message, failure.explain_to_llm(), None
    except _AsksTheModel:
        return None, None, None, "the tool asks the model (its answers were the run's)"
    except Exception as error:  # the run's own check reports a crash; here it is unchecked
        return None, None, None, f"the tool raised {type(error).__name__}"
    return product, None, None, None


def _asked_the_model(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, _AsksTheModel):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def rerun_moves(
    thinker: DecisionThinker[Any, Any],  # any thinker: its palette and formatters are read
    turns: Sequence[DecisionTurn],
    world: Sequence[tuple[str, Artifact]],
    *,
    timeout: float | None = None,
) -> tuple[Rerun, ...]:
    """Run each tool turn's tool again, twice, on the artifact its record names."""
    providers = {p.name: p for p in (ClassToolProvider(cls) for cls in thinker.palette)}
    refs = dict(world)
    entry = CatalogEntry.fake("rerun")
    catalog = Catalog([entry], {"decision": entry.id})
    out: list[Rerun] = []
    async with Dispatcher(
        catalog, clients={entry.id: _NoAnswers()}, pacing=Pacing.immediate()
    ) as dispatcher:
        for turn in turns:
            if turn.tool == FINISH or turn.artifact is None:
                continue
            provider, artifact = providers.get(turn.tool), refs.get(turn.artifact)
            if provider is None or artifact is None:
                missing = "tool" if provider is None else "artifact"
                out.append(
                    Rerun(turn.turn, turn.tool, turn.artifact, unchecked=f"no such {missing}")
                )
                continue
            runs = []
            for _ in range(2):
                try:
                    runs.append(
                        await asyncio.wait_for(_once(dispatcher, provider, artifact), timeout)
                    )
                except TimeoutError:
                    runs.append((None, None, None, "the re-run did not return in time"))
            (product, failure, explained, unchecked), again = runs
            if unchecked is None and again[3] is None:
                first = outcome_text(product, failure, thinker.formatters)
                if first != outcome_text(again[0], again[1], thinker.formatters):
                    unchecked = "the tool is not deterministic (two re-runs differ)"
            elif unchecked is None:
                unchecked = again[3]
            out.append(
                Rerun(turn.turn, turn.tool, turn.artifact, product, failure, explained, unchecked)
                if unchecked is None
                else Rerun(turn.turn, turn.tool, turn.artifact, unchecked=unchecked)
            )
    return tuple(out)

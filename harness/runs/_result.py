"""What one run returns: the typed answer with its refs, the turns, the usage, the record."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Generic, TypeVar

import attrs

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    ListArtifact,
    TextFormatterRegistry,
    artifact_converter,
)
from harness.catalog import CatalogEntry
from harness.jobs import ModelCall
from harness.record import (
    IN_PROCESS_PROVIDERS,
    NOT_BILLED,
    RecordedAnswer,
    RecordedCall,
    RunRecord,
    billed_text,
)
from harness.thinker import FINISH, DecisionTurn

__all__ = ["RunResult", "Usage"]

O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type


@attrs.frozen
class Usage:
    """What a run spent on decisions.

    * ``decisions``: model calls made (re-runs included; a call refused by a budget is not made);
    * ``retries``: of those, the re-runs after a 429, a 5xx or no answer;
    * ``input_tokens``: what the servers billed, ``None`` when none reported a count;
    * ``counted_input_tokens``: harness's own count of the wire bodies (what budgets charge);
    * ``cost``: in the catalog's currency, ``None`` when the entry has no price;
    * ``model_seconds``: time spent waiting on the model; ``wall_seconds``: the whole run.
    """

    decisions: int
    retries: int
    input_tokens: int | None
    counted_input_tokens: int
    cost: float | None
    model_seconds: float
    wall_seconds: float
    reported_calls: int | None = None
    """Of ``decisions``, the calls whose server reported a billed count (``None``: unknown)."""
    in_process_calls: int = 0
    """Of ``decisions``, the calls an in-process model answered: nothing is billed for them."""

    @classmethod
    def of(cls, calls: tuple[ModelCall, ...], *, retries: int, wall_seconds: float) -> Usage:
        """The usage of ``calls`` (a run's model calls); the calls of an in-process model bill
        nothing, so they count neither as billed nor as reported."""
        local = sum(1 for c in calls if c.provider in IN_PROCESS_PROVIDERS)
        billed = [
            c.input_tokens
            for c in calls
            if c.input_tokens is not None and c.provider not in IN_PROCESS_PROVIDERS
        ]
        costs = [c.cost for c in calls if c.cost is not None]
        priced = bool(costs) or any(c.cost is not None for c in calls)
        return cls(
            decisions=len(calls),
            retries=retries,
            input_tokens=sum(billed) if billed else None,
            counted_input_tokens=sum(c.counted_input_tokens or 0 for c in calls),
            cost=sum(costs) if priced else None,
            model_seconds=sum(c.latency for c in calls),
            wall_seconds=wall_seconds,
            reported_calls=len(billed),
            in_process_calls=local,
        )

    @property
    def cost_text(self) -> str:
        """The cost as text: ``"$0.000034"``, or ``"no price"`` when the entry has none."""
        return "no price" if self.cost is None else f"${self.cost:.6f}"

    def __str__(self) -> str:
        reported = self.reported_calls
        if reported is None:  # built by hand: all or nothing
            reported = 0 if self.input_tokens is None else self.decisions
        billed = billed_text(
            self.decisions, reported, self.input_tokens or 0, in_process=self.in_process_calls
        )
        billed = "not billed: an in-process model" if billed == NOT_BILLED else f"billed: {billed}"
        return (
            f"{self.decisions} decision{'' if self.decisions == 1 else 's'} "
            f"({self.retries} retr{'y' if self.retries == 1 else 'ies'}), "
            f"{self.counted_input_tokens} input tokens counted ({billed}), "
            f"cost {self.cost_text}, model {self.model_seconds:.3f} s, "
            f"wall {self.wall_seconds:.3f} s"
        )


@attrs.frozen(repr=False)
class RunResult(Generic[O]):
    """One run of a thinker: the answer, each item's ref, the turns, the usage and the record.

    ``answer`` is the thinker's ``ListArtifact[O]`` (``items`` its tuple); ``ref(item)`` names an
    item as the model saw it (``"verdict#2"``). A failed run's result (carried by
    :class:`RunFailedError`) has an empty answer and ``failure`` set.
    """

    answer: ListArtifact[O]
    turns: tuple[DecisionTurn, ...]
    usage: Usage
    calls: tuple[ModelCall, ...]
    entry: CatalogEntry
    thinker: str
    objective: str | None
    input: Artifact
    registry: ArtifactRegistry = attrs.field(eq=False)
    formatters: TextFormatterRegistry = attrs.field(eq=False)
    failure: str | None = None
    bodies: tuple[object, ...] | None = attrs.field(default=None, eq=False)
    """Each call's wire body (JSON), in ``calls`` order, when the run kept them."""
    replies: tuple[object, ...] | None = attrs.field(default=None, eq=False)
    """Each call's reply (JSON, as a cassette holds it) beside its body, so ``harness replay``
    can answer the run again from its record."""
    model_change: str | None = None
    threshold: float | None = None
    """The thinker's selection threshold in this run (``None`` for a plain tool)."""
    replayed: int = attrs.field(default=0, eq=False)
    """How many turns a resumed run replayed from its journal (the model not asked again)."""
    """Set when a resumed run accepted a model other than its journal's: the journalled one."""
    settings: Mapping[str, object] = attrs.field(factory=dict, eq=False)
    """The thinker's settings (``max_turns``, ``selection_threshold``, ``question_scheme``): the
    record keeps them so a replay builds the thinker as it ran."""

    @property
    def items(self) -> tuple[O, ...]:
        """The answer's items, in world order."""
        return self.answer.iterands

    @property
    def refs(self) -> tuple[str, ...]:
        """Each item's ref, in the answer's order."""
        return tuple(self.ref(item) for item in self.items)

    def ref(self, item: Artifact) -> str:
        """The ref ``item`` had in the run (``"verdict#2"``); an artifact the run never saw is
        refused, naming it."""
        if item not in self.registry:
            raise KeyError(
                f"{type(item).__qualname__} {item!r} is not an artifact of this run: pass an item "
                "of result.items"
            )
        return self.registry.ref(item)

    @property
    def selection(self) -> Mapping[str, float]:
        """Each output candidate's probability of belonging in the answer (the finishing
        turn's), by ref; empty when the run never finished."""
        return next((t.selection for t in reversed(self.turns) if t.tool == FINISH), {})

    @property
    def artifacts(self) -> Mapping[str, Artifact]:
        """Every artifact of the run's world by ref, in the order they came to be."""
        return dict(self.registry.world())

    def record(self, *, command: str = "api") -> RunRecord:
        """The run as a :class:`~harness.record.RunRecord` (what ``harness record`` reads)."""
        selection = self.selection
        answer = tuple(RecordedAnswer.of(self.ref(item), item, selection) for item in self.items)
        bodies = self.bodies if self.bodies is not None else (None,) * len(self.calls)
        replies = self.replies if self.replies is not None else (None,) * len(self.calls)
        calls = tuple(
            RecordedCall.of(c, body, reply)
            for c, body, reply in zip(self.calls, bodies, replies, strict=True)
        )
        entry = self.entry
        return RunRecord(
            command=command,
            thinker=self.thinker,
            objective=self.objective,
            entry={
                **RunRecord.entry_of(entry),
                **({} if self.model_change is None else {"journalled_with": self.model_change}),
            },
            input_alias=type(self.input).alias,
            input_value=artifact_converter.unstructure(self.input),
            artifacts=RunRecord.artifacts_of(self.registry, self.formatters),
            turns=self.turns,
            answer=answer,
            calls=calls,
            wall_seconds=self.usage.wall_seconds,
            model_seconds=self.usage.model_seconds,
            failure=self.failure,
            threshold=self.threshold
            if self.threshold is not None
            else _threshold(self.settings.get("selection_threshold")),
            settings=self.settings,
        )

    def write_record(self, path: str | os.PathLike[str], *, command: str = "api") -> Path:
        """Write the run's record as JSON to ``path`` (read it with ``harness record PATH``);
        returns the path written."""
        written = Path(path)
        self.record(command=command).write(written)
        return written

    def __repr__(self) -> str:
        shown = ", ".join(self.refs)
        state = "" if self.failure is None else f", failure={self.failure!r}"
        return (
            f"RunResult({self.thinker} on {self.entry.id}: answer [{shown}], "
            f"{len(self.turns)} turns, {self.usage}{state})"
        )


def _threshold(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None

"""One process's share of a batch: a catalog, its clients and one admission, running inputs.

Every engine runs inputs through a :class:`BatchWorker`: the local engine holds one in the
driver; the Ray engine holds one in each task. Each input runs as its own recorded run (a
dispatcher per run, sharing the worker's clients and admission, so the entry's limits hold
across the runs of a process, and across processes when the admission is shared through Redis).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

import attrs

from harness.admission import AdaptiveAdmission, Admission
from harness.artifacts import Artifact, artifact_converter
from harness.batch._inputs import clipped, input_from
from harness.catalog import DECISION, Catalog, CatalogEntry, load_catalog
from harness.decision import DecisionRequest, DecisionResponse
from harness.errors import RateLimitedError
from harness.providers import DecisionClient, client_for
from harness.record import RunFailedError, RunRecord, record_run
from harness.runs import build_target, import_target, seat_for, target_input_type
from harness.thinker import FINISH, DecisionThinker
from harness.tools import DecisionTool

__all__ = ["CONTEXT_PROVIDERS", "BatchSpec", "BatchWorker", "with_contexts"]

CONTEXT_PROVIDERS: Final = frozenset({"llama"})
"""Providers whose entry runs its model in this process on ``max_concurrent`` contexts (each a
worker thread and its own KV cache over the one loaded model)."""


@attrs.frozen
class BatchSpec:
    """What every process of a batch needs to run its inputs (plain values: it is pickled)."""

    target: str
    catalog_path: str | None = None
    entry_id: str | None = None
    admission_url: str | None = None
    records_dir: str | None = None
    concurrency: int = 8
    upstream_retries: int = 3
    candidates: bool = False
    """Add the thinker's threshold and each output candidate (ref, probability, value) to the
    result line (evals label them)."""
    journals_dir: str | None = None
    """Journal each input's run here (``line-N.journal``): a run cut short resumes mid-run."""
    allow_extra: bool = False
    """Drop the keys of an input line that are not fields of the input class (by default such a
    line is ``invalid``, naming them)."""
    contexts: int | None = None
    """The calls an entry that runs its model in this process (provider ``llama``) makes at
    once, each on a context of its own over the one loaded model, in every process of the
    batch (see :func:`with_contexts`); ``None`` keeps the entry's ``max_concurrent``."""


def with_contexts(catalog: Catalog, contexts: int | None) -> Catalog:
    """``catalog`` (a copy) with its decision entry running ``contexts`` contexts, when that entry
    runs its model in this process (:data:`CONTEXT_PROVIDERS`); else ``catalog`` itself.

    The entry's ``max_concurrent`` becomes ``contexts``: it is both the number of contexts the
    provider makes over the one loaded model and the capacity of the entry's gate, so admission
    lets as many calls through at once as there are contexts, and no more. A remote entry's
    ``max_concurrent`` is the server's bound, not the batch's to change."""
    if contexts is not None and contexts < 1:
        raise ValueError(f"contexts must be at least 1, not {contexts}")
    entry = catalog.pinned(DECISION)
    if contexts is None or entry.provider not in CONTEXT_PROVIDERS:
        return catalog
    scaled = attrs.evolve(entry, max_concurrent=contexts)
    entries = [scaled if e.id == entry.id else e for e in catalog.entries.values()]
    return Catalog(entries, catalog.pins, source=catalog.source)


class _Adapting:
    """A client that tells the admission of each 429 and each answer (adaptive entries)."""

    def __init__(self, inner: DecisionClient, admission: Any) -> None:  # Any: either admission
        self.inner = inner
        self.admission = admission

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        try:
            response = await self.inner.decide(request, entry, timeout=timeout)
        except RateLimitedError:
            await self.admission.throttled(entry)
            raise
        await self.admission.succeeded(entry)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _admission_for(spec: BatchSpec) -> Admission:
    if spec.admission_url is None:
        return AdaptiveAdmission()
    from harness.admission import RedisAdmission

    return RedisAdmission(spec.admission_url)


class BatchWorker:
    """Runs inputs of one batch in this process, ``spec.concurrency`` at a time."""

    def __init__(
        self,
        spec: BatchSpec,
        *,
        catalog: Catalog | None = None,
        clients: Mapping[str, DecisionClient] | None = None,
    ) -> None:
        self.spec = spec
        self.tool_class: type[DecisionTool[Any, Artifact]] = import_target(spec.target)
        self.input_type = target_input_type(self.tool_class, spec.target)
        base = catalog if catalog is not None else load_catalog(spec.catalog_path)
        # an entry id or a model string ("llama:<package>"), on a copy of the catalog
        seat = seat_for(spec.entry_id, base)
        self.catalog = with_contexts(seat.catalog, spec.contexts)
        self.entry = self.catalog.pinned(DECISION)
        self.admission = _admission_for(spec)
        given = dict(clients or {})
        inner = given.get(self.entry.id) or client_for(self.entry)
        self._owned = self.entry.id not in given
        self._inner = inner
        self.clients: dict[str, DecisionClient] = {self.entry.id: inner}
        if self.entry.adaptive:
            self.clients[self.entry.id] = _Adapting(inner, self.admission)
        self._slots = asyncio.Semaphore(spec.concurrency) if spec.concurrency > 0 else None
        if spec.journals_dir is not None:
            Path(spec.journals_dir).mkdir(parents=True, exist_ok=True)

    async def run_line(self, number: int, text: str) -> dict[str, object]:
        """Run the input on line ``number``; its result line (never raises: a run that fails,
        or a thinker that cannot be built for this input, is a ``failed`` result)."""
        try:
            if self._slots is None:
                return await self._run(number, text)
            async with self._slots:
                return await self._run(number, text)
        except Exception as error:  # not the run's own failure (that is recorded): say which
            return {"line": number, "status": "failed", "error": clipped(str(error), 500)}

    async def _run(self, number: int, text: str) -> dict[str, object]:
        try:
            given = input_from(self.input_type, text, allow_extra=self.spec.allow_extra)
        except (TypeError, ValueError) as error:
            return {"line": number, "status": "invalid", "error": clipped(str(error), 200)}
        tool = build_target(self.tool_class, self.spec.target)
        if self.spec.journals_dir is not None:
            return await self._run_journalled(number, tool, given)
        try:
            outcome = await record_run(
                tool,
                given,
                catalog=self.catalog,
                command="batch",
                clients=self.clients,
                admission=self.admission,
                upstream_retries=self.spec.upstream_retries,
            )
        except RunFailedError as failed:
            result = self._result(number, "failed", failed.record, error=str(failed))
        else:
            result = self._result(number, "completed", outcome.record)
        if self.spec.candidates and isinstance(tool, DecisionThinker):
            result["threshold"] = tool.selection_threshold
            result["candidates"] = _candidates(tool)
        return result

    async def _run_journalled(
        self, number: int, tool: DecisionTool[Any, Artifact], given: Artifact
    ) -> dict[str, object]:
        """Run (or resume, when its journal is there) the input on line ``number``."""
        from harness.runs import (
            JournalError,
            PausedResult,
            RunResult,
            Seat,
            ThinkerFactory,
            run_journalled,
        )
        from harness.runs import RunFailedError as RunApiFailedError

        folder = Path(str(self.spec.journals_dir))
        factory = cast("ThinkerFactory[Artifact, Artifact]", self.tool_class)  # any tool
        try:
            result: RunResult[Artifact] = await run_journalled(
                factory,
                given,
                folder / f"line-{number:08d}.journal",
                seat=Seat(self.catalog, self.clients),
                admission=self.admission,
                upstream_retries=self.spec.upstream_retries,
            )
        except RunApiFailedError as failed:
            record = failed.result.record(command="batch")
            return self._result(number, "failed", record, error=str(failed))
        except JournalError as error:  # JournalMismatchError too: another run's journal
            return {"line": number, "status": "failed", "error": clipped(str(error), 500)}
        if isinstance(result, PausedResult) and result.pending is not None:
            record = result.record(command="batch")
            return self._result(number, "failed", record, error=result.pending.question())
        line = self._result(number, "completed", result.record(command="batch"))
        if self.spec.candidates and result.threshold is not None:
            line["threshold"] = result.threshold
            line["candidates"] = [
                {"ref": ref, "probability": p, "value": artifact_converter.unstructure(a)}
                for ref, p in result.selection.items()
                for a in (result.artifacts[ref],)
            ]
        return line

    def _result(
        self, number: int, status: str, record: RunRecord, *, error: str | None = None
    ) -> dict[str, object]:
        calls = record.calls
        answered = [call for call in calls if call.success]
        billed = [call.input_tokens for call in calls if call.input_tokens is not None]
        counted = [c.counted_input_tokens for c in calls if c.counted_input_tokens is not None]
        cost = None
        if self.entry.input_price_per_million is not None:
            cost = sum(
                self.entry.cost(
                    call.input_tokens
                    if call.input_tokens is not None
                    else call.counted_input_tokens or 0
                )
                or 0.0
                for call in answered
            )
        result: dict[str, object] = {
            "line": number,
            "status": status,
            "answer": [item.value for item in record.answer],
            "refs": [item.ref for item in record.answer],
            "usage": {
                "decisions": len(answered),
                "calls": len(calls),
                "retries": len(calls) - len(answered) if status == "completed" else None,
                "billed_input_tokens": sum(billed) if billed else None,
                "billed_calls": len(billed),  # of "calls", those that reported a billed count
                # of "calls", those an in-process model answered: they bill nothing
                "in_process_calls": len(calls) if self.entry.in_process else 0,
                "counted_input_tokens": sum(counted),
                "cost": cost,
                "model_seconds": round(record.model_seconds, 6),
                "wall_seconds": round(record.wall_seconds, 6),
            },
        }
        if error is not None:
            result["error"] = clipped(error, 500)
        if self.spec.records_dir is not None:
            folder = Path(self.spec.records_dir)
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"line-{number:08d}.json"
            record.write(path)
            result["record"] = str(path)
        return result

    async def aclose(self) -> None:
        """Close the clients this worker made and the admission's connection."""
        if self._owned:
            await self._inner.aclose()
        closing = getattr(self.admission, "aclose", None)
        if closing is not None:
            await closing()


def _candidates(tool: DecisionThinker[Any, Artifact]) -> list[dict[str, object]]:
    """Each output candidate of the thinker's last run: its ref, selection probability and value
    (JSON), in world order (none when the run never finished)."""
    selection = next((t.selection for t in reversed(tool.turns()) if t.tool == FINISH), {})
    world = tool.registry
    return [
        {"ref": ref, "probability": p, "value": artifact_converter.unstructure(world.get(ref))}
        for ref, p in selection.items()
    ]

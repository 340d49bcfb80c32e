"""Running an eval: a thinker over a dataset's cases through the batch engine, then scored.

The cases' inputs go to ``<out>/inputs.jsonl`` and run as a batch (:mod:`harness.batch`): each
case is a recorded run through a dispatcher, ``concurrency`` at a time (or on Ray), its result a
line of ``<out>/results.jsonl`` written once. Started again on the same folder, an eval runs only
the cases without a result, so a killed eval resumes where it stopped and counts each case once.
Each result line carries the thinker's output candidates with their selection probabilities and
values, which the dataset's key labels: every run yields labelled ``select_`` decisions.

One concern, past 400 lines: an eval from its cases to its scored report (running, resuming,
scoring, and scoring again at another threshold), one path that every eval command and function
takes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import types
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final, ParamSpec, TextIO, TypeVar, cast

import attrs

from harness.artifacts import Artifact, artifact_converter
from harness.batch import BatchError, BatchSpec, run_batch, run_batch_async
from harness.catalog import DECISION, Catalog, CatalogEntry
from harness.decision import JsonValue
from harness.evals import metrics as m
from harness.evals._dataset import Dataset
from harness.evals._drawn import refuse_drawn
from harness.evals._folder import (
    RESCORED_SOURCE,
    EvalError,
    case_result,
    model_identity,
    model_seconds,
    prepare,
    read_results,
    threshold_source,
)
from harness.evals._position import position_figures
from harness.evals._report import CaseResult, EvalReport
from harness.evals._score import baseline_figures, figures, reliability_bins
from harness.evals._selections import SelectionKeeper, keep_selections
from harness.providers import client_for
from harness.runs import ModelChoice, TargetError, build_target, import_target, seat_for
from harness.runs._internal import blocking
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool

__all__ = [
    "ORDERING_PROVIDERS",
    "EvalError",
    "evaluate",
    "evaluate_async",
    "import_thinker",
    "target_of",
    "with_orderings",
]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

P = ParamSpec("P")
R = TypeVar("R")

Thinker = type[DecisionTool[Any, Any]] | str  # Any: any thinker's types; or its MODULE:CLASS


def selections_dataset(
    target: str, path: str | os.PathLike[str]
) -> Dataset[Any, Any]:  # Any: the thinker's own input and item types, read at run time
    """The labelled cases at ``path`` for the thinker ``MODULE:CLASS`` whose selections they
    label: read as its input type and the items of its answer (``harness examples`` and
    ``harness fit`` draw from such a thinker's runs). A thinker whose types cannot be read, or
    that answers no list of items (it has no selections), is refused naming it."""
    from harness.tools import list_iterand, runtime_class, tool_types

    thinker = import_thinker(target)
    try:
        input_type, output_type = tool_types(thinker)
    except (TypeError, ValueError) as error:
        raise EvalError(f"{target}: cannot read its types: {error}") from None
    item_type = list_iterand(output_type)
    if item_type is None:
        raise EvalError(f"{target} does not answer a list of items: it has no selections")
    return Dataset.load(path, runtime_class(input_type), item_type)


def import_thinker(target: str) -> type[DecisionTool[Any, Artifact]]:  # any thinker's types
    """The thinker class ``MODULE:CLASS`` names (the one importer every command shares)."""
    try:
        return import_target(target)
    except TargetError as error:  # the same line as harness run, batch and replay say
        raise EvalError(str(error)) from None


def target_of(thinker: Thinker, *, local: bool = True) -> str:
    """``MODULE:CLASS`` of a thinker class, or the string given (checked importable).

    A class not importable by its name (defined in ``__main__``, a notebook or a function) is
    registered under a module of its own for this process when ``local`` (the local engine
    runs in this process); on Ray it is refused, naming the fix."""
    if isinstance(thinker, str):
        import_thinker(thinker)
        return thinker
    module = getattr(thinker, "__module__", None) or "__main__"
    qualname = getattr(thinker, "__qualname__", "") or repr(thinker)
    if "<locals>" not in qualname and module != "__main__":
        target = f"{module}:{qualname}"
        try:
            if import_thinker(target) is thinker:
                return target
        except EvalError:
            pass
    if not local:
        raise EvalError(
            f"{qualname} is not importable by name (defined in {module}): on Ray each worker "
            "imports the thinker, so define it at the top level of a module on the path"
        )
    name = "harness_eval_local_" + "".join(
        c if c.isalnum() else "_" for c in f"{module}.{qualname}"
    )
    holder = sys.modules.get(name)
    if holder is None:
        holder = types.ModuleType(name, f"{qualname}, registered by harness.evals")
        sys.modules[name] = holder
    holder.Thinker = thinker  # type: ignore[attr-defined]  # a module made to hold the class
    return f"{name}:Thinker"


def _sync_form(run: Callable[P, Coroutine[Any, Any, R]], name: str) -> Callable[P, R]:
    """The synchronous form ``name`` of the coroutine function ``run``, for code with no event
    loop: the same parameters, refused inside a running loop (the run API's one maker of
    synchronous forms, with the eval's own wording)."""
    return blocking(
        run,
        f":func:`{run.__name__}` for code with no event loop (inside a running one it refuses:"
        f" ``await {run.__name__}(...)`` there).\n\n{run.__doc__ or ''}",
        name=name,
        calls=lambda _args, _kwargs: (f"{name}(...)", f"{run.__name__}(...)"),
    )


def _model_name(model: ModelChoice) -> str:
    if model is None or isinstance(model, str):
        return model or "default"
    return type(model).__qualname__


async def evaluate_async(
    thinker: Thinker,
    dataset: Dataset[I, O],
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    out: str | os.PathLike[str] | None = None,
    concurrency: int = 8,
    contexts: int | None = None,
    records: bool = True,
    progress: TextIO | None = None,
    ray: str | None = None,
    catalog_file: str | os.PathLike[str] | None = None,
    split: str = "all",
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    orderings: int | None = None,
) -> EvalReport:
    """Run ``thinker`` on every case of ``dataset`` and score its answers; the report.

    ``model`` is anything the run API takes (an entry id, ``"embedded"``, a
    :class:`~harness.providers.DecisionClient` such as a fake model or a replay; default: the
    catalog's pin); a cassette of the pytest plugin or :func:`harness.override` answers as
    well. ``out`` keeps the eval's folder (inputs, results, records, ``report.json``) so it
    resumes when started again; without it a temporary folder is used. ``ray`` runs the cases
    on a Ray cluster (``auto``, an address or ``local``; ``model`` then an entry id).
    ``contexts`` runs an entry that holds its model in this process (``llama``) on that many
    contexts of the one loaded model, in each process (default: the entry's ``max_concurrent``).
    ``progress`` shows a bar (default stderr). ``split`` names the cases' split in the report;
    ``seed`` and ``resamples`` fix the bootstrap. ``orderings`` asks each choice in that many
    cyclic orders of its options and averages them (an entry that reads logits:
    :data:`ORDERING_PROVIDERS`), the correction of a model whose choices follow position.
    """
    target = target_of(thinker, local=ray is None)
    if ray is not None and orderings is not None:
        raise EvalError(
            "orderings= sets the entry of this process: run without ray, or set orderings in "
            "the catalog entry the workers load"
        )
    if ray is not None and catalog is not None:
        raise EvalError(
            "on Ray each worker loads its catalog: give catalog_file= (a TOML file), not catalog="
        )
    thinker_class = import_thinker(target)
    if not issubclass(thinker_class, DecisionThinker):
        raise EvalError(f"{target} is not a DecisionThinker: an eval scores a thinker's answers")
    started = time.perf_counter()
    scratch = None
    if out is None:
        scratch = tempfile.TemporaryDirectory(prefix="harness-eval-")
        folder = Path(scratch.name)
    else:
        folder = Path(out)
    try:
        seat = seat_for(model, catalog if ray is None else _catalog_file(catalog_file))
        seat = attrs.evolve(seat, catalog=with_orderings(seat.catalog, orderings))
        entry = seat.catalog.pinned(DECISION)
        name = entry.id if model is None else _model_name(model)
        refuse_drawn(entry, _inputs(dataset), f"{dataset.name}'s cases")
        inputs, results = prepare(target, dataset, folder, model_identity(entry), name)
        keeper = None
        owned = False
        clients = dict(seat.clients)
        given = clients.get(entry.id)
        if ray is None and records and (given is not None or entry.provider != "fake"):
            # what each selection read, kept for harness examples (a client the eval holds)
            keeper = SelectionKeeper(given if given is not None else client_for(entry))
            clients[entry.id] = keeper
            owned = given is None
        spec = BatchSpec(
            target,
            catalog_path=None if catalog_file is None else os.fspath(catalog_file),
            entry_id=model if ray is not None and isinstance(model, str) else None,
            records_dir=str(folder / "records") if records else None,
            concurrency=concurrency,
            candidates=True,
            contexts=contexts,
        )
        try:
            if ray is None:
                await run_batch_async(
                    spec,
                    inputs,
                    results,
                    catalog=seat.catalog,
                    clients=clients,
                    progress=progress,
                )
            else:
                if not (model is None or isinstance(model, str)):
                    raise EvalError("an eval on Ray takes model= as an entry id, not a client")
                await asyncio.to_thread(
                    run_batch, spec, inputs, results, ray=ray, progress=progress
                )
        except (BatchError, TargetError) as error:
            raise EvalError(str(error)) from None
        finally:
            if keeper is not None and owned:
                await keeper.aclose()
        lines = read_results(results)
        if keeper is not None:
            keep_selections(
                folder,
                keeper.asked,
                lines,
                [(case_.name, _input_json(case_.input)) for case_ in dataset.cases],
            )
        seconds = sum(model_seconds(line) for line in lines.values())
        cases = tuple(
            case_result(dataset, number, case_, lines.get(number), folder)
            for number, case_ in enumerate(dataset.cases, start=1)
        )
        ran = time.perf_counter() - started
        shown = (
            thinker if isinstance(thinker, str) else f"{thinker.__module__}:{thinker.__qualname__}"
        )
        report = score(
            cases,
            subject=shown,
            dataset=dataset.name,
            model=name,
            split=split,
            seed=seed,
            resamples=resamples,
            runs=True,
        )
        report = attrs.evolve(
            report, threshold_source=_threshold_source(lines, thinker_class, target, entry)
        )
        report = _with_timings(
            report,
            {"eval_seconds": ran, "model_seconds": seconds},
        )
        if scratch is None:
            report.write_json(folder / "report.json")
        return report
    finally:
        if scratch is not None:
            scratch.cleanup()


evaluate = _sync_form(evaluate_async, "evaluate")

ORDERING_PROVIDERS: Final = frozenset({"llama", "openai-chat", "openai-completions"})
"""The providers that read a choice from the model's logits, so can ask it in several orders of
its options and average them (a catalog entry's ``orderings``)."""


def with_orderings(catalog: Catalog, orderings: int | None) -> Catalog:
    """``catalog`` (a copy) whose decision entry asks each choice in ``orderings`` cyclic orders
    and averages them; ``catalog`` itself when ``orderings`` is ``None``. An entry that reads no
    logits (:data:`ORDERING_PROVIDERS`) is refused: it cannot ask in another order."""
    if orderings is None:
        return catalog
    if orderings < 1:
        raise EvalError(f"orderings must be at least 1 (1: as asked), not {orderings}")
    entry = catalog.pinned(DECISION)
    if entry.provider not in ORDERING_PROVIDERS:
        readers = ", ".join(sorted(ORDERING_PROVIDERS))
        raise EvalError(
            f"orderings {orderings}: entry {entry.id!r} ({entry.provider}) reads no logits, so it "
            f"cannot ask a choice in other orders; use an entry of {readers}"
        )
    changed = attrs.evolve(entry, orderings=orderings)
    entries = [changed if e.id == entry.id else e for e in catalog.entries.values()]
    return Catalog(entries, catalog.pins, source=catalog.source)


def _threshold_source(
    lines: dict[int, dict[str, object]],
    thinker_class: type[DecisionTool[Any, Any]],  # Any: any thinker's types
    target: str,
    entry: CatalogEntry,
) -> str | None:
    """Where the threshold of the result lines came from: the entry's fitted one, the
    thinker's constructor's, or the default."""
    observed = None
    for line in lines.values():
        value = line.get("threshold")
        if isinstance(value, int | float) and not isinstance(value, bool):
            observed = float(value)
            break
    built = build_target(thinker_class, target)
    if not isinstance(built, DecisionThinker):
        return None
    fitted = None if entry.calibration is None else entry.calibration.selection_threshold
    return threshold_source(observed, built.selection_threshold, fitted)


def _input_json(value: Artifact) -> JsonValue:
    """A case's input as JSON (what its digest in drawn examples' pool is taken of)."""
    return cast("JsonValue", artifact_converter.unstructure(value))


def _inputs(dataset: Dataset[Any, Any]) -> list[JsonValue]:  # Any: any thinker's dataset
    return [_input_json(case_.input) for case_ in dataset.cases]


def _catalog_file(path: str | os.PathLike[str] | None) -> Catalog | None:
    """The catalog a Ray eval's workers load (``None``: the configured one)."""
    if path is None:
        return None
    from harness.catalog import load_catalog

    return load_catalog(path)


def _with_timings(report: EvalReport, timings: dict[str, float]) -> EvalReport:
    return attrs.evolve(report, timings={**report.timings, **timings})


def score(
    cases: Sequence[CaseResult],
    *,
    subject: str,
    dataset: str,
    model: str,
    split: str = "all",
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    runs: bool = True,
    threshold: float | None = None,
) -> EvalReport:
    """The report of ``cases``: every figure, the baselines and the reliability bins (timed:
    ``timings["metric_seconds"]``).

    The figures are those of the completed cases: a case whose run failed answered nothing,
    which is neither right nor wrong, so it is counted apart (:attr:`EvalReport.failed`) and
    never as a right answer to a case that expects nothing."""
    began = time.perf_counter()
    completed = [c for c in cases if c.status == "completed"]
    if threshold is None:
        threshold = next(
            (d.threshold for c in completed for d in c.decisions if d.threshold is not None),
            None,
        )
    drawn = m.Resampler(len(completed), resamples=resamples, seed=seed)
    found = figures(completed, runs=runs, threshold=threshold, resampler=drawn)
    found.update(position_figures(completed, drawn))
    baselines = baseline_figures(
        completed, runs=runs, threshold=threshold, seed=seed, resamples=resamples, resampler=drawn
    )
    return EvalReport(
        subject=subject,
        dataset=dataset,
        model=model,
        threshold=threshold,
        split=split,
        cases=tuple(cases),
        metrics=found,
        baselines=baselines,
        reliability=reliability_bins(completed),
        seed=seed,
        resamples=resamples,
        timings={"metric_seconds": time.perf_counter() - began},
    )


def at_threshold(report: EvalReport, threshold: float) -> EvalReport:
    """``report`` scored again as if the thinker had answered at ``threshold``: each case's
    answer re-selected from its candidates, each ``select_`` decision taken at it (no model is
    asked again). Report it on cases the threshold was not fitted on."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    cases = []
    for case in report.cases:
        answered = tuple(
            dict.fromkeys(c.key for c in case.candidates if c.probability >= threshold)
        )
        decisions = tuple(
            attrs.evolve(d, threshold=threshold, chosen=0 if d.probabilities[0] >= threshold else 1)
            if d.kind == "noul" and d.role == "select"
            else d
            for d in case.decisions
        )
        runs = bool(case.candidates or case.expected)
        cases.append(
            attrs.evolve(case, decisions=decisions, answered=answered if runs else case.answered)
        )
    again = rescored(report, cases, threshold=threshold)
    return attrs.evolve(again, threshold_source=RESCORED_SOURCE)


def rescored(
    report: EvalReport, cases: Sequence[CaseResult], *, threshold: float | None = None
) -> EvalReport:
    """``cases`` (``report``'s, changed) scored again under ``report``'s subject, data, model,
    split, seed and resamples, at ``threshold`` (default: ``report``'s)."""
    return score(
        cases,
        subject=report.subject,
        dataset=report.dataset,
        model=report.model,
        split=report.split,
        seed=report.seed,
        resamples=report.resamples,
        runs=any(c.candidates or c.expected for c in report.cases),
        threshold=report.threshold if threshold is None else threshold,
    )

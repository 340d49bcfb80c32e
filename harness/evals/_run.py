"""Running an eval: a thinker over a dataset's cases through the batch engine, then scored.

The cases' inputs go to ``<out>/inputs.jsonl`` and run as a batch (:mod:`harness.batch`): each
case is a recorded run through a dispatcher, ``concurrency`` at a time (or on Ray), its result a
line of ``<out>/results.jsonl`` written once. Started again on the same folder, an eval runs only
the cases without a result, so a killed eval resumes where it stopped and counts each case once.
Each result line carries the thinker's output candidates with their selection probabilities and
values, which the dataset's key labels: every run yields labelled ``select_`` decisions.
"""

from __future__ import annotations

import asyncio

# the stdlib's json: stamps and keys as json writes them (ASCII escapes, NaN), which orjson cannot
import json
import os
import sys
import tempfile
import time
import types
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TextIO, TypeVar

import attrs

from harness.artifacts import Artifact
from harness.batch import BatchError, BatchSpec, run_batch, run_batch_async
from harness.catalog import Catalog
from harness.decision._internal import load_json
from harness.errors import HarnessError
from harness.evals import metrics as m
from harness.evals._dataset import Dataset, _RowError, key_text, structure_item
from harness.evals._report import Candidate, CaseResult, EvalReport, ScoredDecision
from harness.evals._score import baseline_figures, figures, reliability_bins
from harness.runs import ModelChoice, TargetError, import_target, seat_for
from harness.runs._internal import blocking as runs_blocking
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool

__all__ = ["EvalError", "evaluate", "evaluate_async", "import_thinker", "target_of"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

P = ParamSpec("P")
R = TypeVar("R")

Thinker = type[DecisionTool[Any, Any]] | str  # Any: any thinker's types; or its MODULE:CLASS


class EvalError(HarnessError, ValueError):
    """An eval that cannot start or be read: the message says what is wrong and the fix."""


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


def blocking(run: Callable[P, Coroutine[Any, Any, R]], name: str) -> Callable[P, R]:
    """The synchronous form ``name`` of the coroutine function ``run``, for code with no event
    loop: the same parameters, refused inside a running loop (the run API's one maker of
    synchronous forms, with the eval's own wording)."""
    return runs_blocking(
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


def _prepare(target: str, dataset: Dataset[Any, Any], out: Path, model: str) -> tuple[Path, Path]:
    """Write the inputs and the eval's identity to ``out``; refuse a folder of another eval."""
    out.mkdir(parents=True, exist_ok=True)
    identity = {"target": target, "dataset": dataset.digest(), "model": model}
    stamp = out / "eval.json"
    if stamp.exists():
        try:
            found = load_json(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = None
        if found != identity:
            raise EvalError(
                f"{out} holds another eval (another thinker, model or dataset): give another "
                "--out folder, or delete it to start over"
            )
    else:
        stamp.write_text(json.dumps(identity, sort_keys=True) + "\n", encoding="utf-8")
    inputs = out / "inputs.jsonl"
    from harness.artifacts import to_json

    inputs.write_text("".join(to_json(case.input) + "\n" for case in dataset), encoding="utf-8")
    return inputs, out / "results.jsonl"


async def evaluate_async(
    thinker: Thinker,
    dataset: Dataset[I, O],
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    out: str | os.PathLike[str] | None = None,
    concurrency: int = 8,
    records: bool = True,
    progress: TextIO | None = None,
    ray: str | None = None,
    catalog_file: str | os.PathLike[str] | None = None,
    split: str = "all",
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
) -> EvalReport:
    """Run ``thinker`` on every case of ``dataset`` and score its answers; the report.

    ``model`` is anything the run API takes (an entry id, ``"embedded"``, a
    :class:`~harness.providers.DecisionClient` such as a fake model or a replay; default: the
    catalog's pin); a cassette of the pytest plugin or :func:`harness.override` answers as
    well. ``out`` keeps the eval's folder (inputs, results, records, ``report.json``) so it
    resumes when started again; without it a temporary folder is used. ``ray`` runs the cases
    on a Ray cluster (``auto``, an address or ``local``; ``model`` then an entry id).
    ``progress`` shows a bar (default stderr). ``split`` names the cases' split in the report;
    ``seed`` and ``resamples`` fix the bootstrap.
    """
    target = target_of(thinker, local=ray is None)
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
        name = _model_name(model)
        inputs, results = _prepare(target, dataset, folder, name)
        seat = seat_for(model, catalog if ray is None else None)
        spec = BatchSpec(
            target,
            catalog_path=None if catalog_file is None else os.fspath(catalog_file),
            entry_id=model if ray is not None and isinstance(model, str) else None,
            records_dir=str(folder / "records") if records else None,
            concurrency=concurrency,
            candidates=True,
        )
        try:
            if ray is None:
                await run_batch_async(
                    spec,
                    inputs,
                    results,
                    catalog=seat.catalog,
                    clients=seat.clients,
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
        lines = _read_results(results)
        model_seconds = sum(_model_seconds(line) for line in lines.values())
        cases = tuple(
            _case_result(dataset, number, case_, lines.get(number), folder)
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
        report = _with_timings(
            report,
            {"eval_seconds": ran, "model_seconds": model_seconds},
        )
        if scratch is None:
            report.write_json(folder / "report.json")
        return report
    finally:
        if scratch is not None:
            scratch.cleanup()


evaluate = blocking(evaluate_async, "evaluate")


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
    ``timings["metric_seconds"]``)."""
    began = time.perf_counter()
    if threshold is None:
        threshold = next(
            (d.threshold for c in cases for d in c.decisions if d.threshold is not None), None
        )
    drawn = m.Resampler(len(cases), resamples=resamples, seed=seed)
    found = figures(cases, runs=runs, threshold=threshold, resampler=drawn)
    baselines = baseline_figures(
        cases, runs=runs, threshold=threshold, seed=seed, resamples=resamples, resampler=drawn
    )
    bins = reliability_bins(cases)
    return EvalReport(
        subject=subject,
        dataset=dataset,
        model=model,
        threshold=threshold,
        split=split,
        cases=tuple(cases),
        metrics=found,
        baselines=baselines,
        reliability=bins,
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
    return score(
        cases,
        subject=report.subject,
        dataset=report.dataset,
        model=report.model,
        split=report.split,
        seed=report.seed,
        resamples=report.resamples,
        runs=any(c.candidates or c.expected for c in report.cases),
        threshold=threshold,
    )


def _model_seconds(line: dict[str, object]) -> float:
    usage = line.get("usage")
    seconds = usage.get("model_seconds") if isinstance(usage, dict) else None
    return float(seconds) if isinstance(seconds, int | float) else 0.0


def _read_results(path: Path) -> dict[int, dict[str, object]]:
    found: dict[int, dict[str, object]] = {}
    if not path.exists():
        return found
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            line: Any = load_json(raw)  # Any: a line this module wrote, an object
            found[int(line["line"])] = line
    return found


def _case_result(
    dataset: Dataset[I, O],
    number: int,
    case: Any,  # Any: a Case of the dataset's types
    line: dict[str, object] | None,
    folder: Path,
) -> CaseResult:
    expected = tuple(dataset.keys(case.expected))
    if line is None:
        return CaseResult(case.name, case.tags, "failed", expected, (), error="no result")
    status = str(line["status"])
    threshold_raw = line.get("threshold")
    threshold = float(threshold_raw) if isinstance(threshold_raw, int | float) else 0.5
    wanted = set(expected)

    def key_of(value: object) -> str:
        try:
            item = structure_item(value, dataset.output_type, "item")
        except _RowError:
            return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return key_text(dataset.key_of(item))

    raw_candidates = line.get("candidates") or []
    assert isinstance(raw_candidates, list)
    candidates = []
    for raw in raw_candidates:
        key = key_of(raw["value"])
        candidates.append(
            Candidate(
                ref=str(raw["ref"]),
                value=raw["value"],
                key=key,
                probability=float(raw["probability"]),
                expected=key in wanted,
            )
        )
    decisions = tuple(
        ScoredDecision(
            case=case.name,
            question=f"select_{c.ref}",
            kind="noul",
            options=("yes", "no"),
            probabilities=(c.probability, 1.0 - c.probability),
            chosen=0 if c.probability >= threshold else 1,
            label=0 if c.expected else 1,
            threshold=threshold,
        )
        for c in candidates
    )
    answer = line.get("answer") or []
    assert isinstance(answer, list)
    answered = tuple(dict.fromkeys(key_of(value) for value in answer))
    record = line.get("record")
    shown_record = None
    if isinstance(record, str):
        try:
            shown_record = os.path.relpath(record, folder)
        except ValueError:
            shown_record = record
    error = line.get("error")
    return CaseResult(
        name=case.name,
        tags=case.tags,
        status=status if status in ("completed", "failed", "invalid") else "failed",  # type: ignore[arg-type]  # narrowed by the check
        expected=expected,
        answered=answered,
        candidates=tuple(candidates),
        decisions=decisions,
        record=shown_record,
        error=None if error is None else str(error),
    )

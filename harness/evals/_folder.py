"""An eval's folder: which eval it holds (``eval.json``), its inputs and its results (read into
case results: each candidate keyed and labelled by the dataset, a ``select_`` decision each).

The folder is known by what ran, not by how it was named: the thinker's ``MODULE:CLASS``, the
dataset's digest, and the catalog entry the model resolved to (its id, provider, wire model and
a digest of its calibration), so ``--model default`` and ``--model embedded`` are one eval when
the default is the embedded entry, and a folder of another eval is refused naming what differs.
"""

from __future__ import annotations

import hashlib
import json  # the stdlib: the stamp and its digest as json writes them (ASCII escapes, ", ")
import os
from pathlib import Path
from typing import Any, TypeVar, cast

from harness.artifacts import Artifact, to_json
from harness.catalog import CatalogEntry
from harness.decision._internal import load_json
from harness.errors import HarnessError
from harness.evals._dataset import Dataset, key_text, structure_item
from harness.evals._report import Candidate, CaseResult, Placed, ScoredDecision
from harness.evals._rows import _RowError
from harness.thinker import FINISH

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for the input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for the answer's item type

__all__ = [
    "DEFAULT_SOURCE",
    "ENTRY_SOURCE",
    "RESCORED_SOURCE",
    "THINKER_SOURCE",
    "EvalError",
    "case_result",
    "model_identity",
    "model_seconds",
    "prepare",
    "read_results",
    "threshold_source",
]


class EvalError(HarnessError, ValueError):
    """An eval that cannot start or be read: the message says what is wrong and the fix."""


ENTRY_SOURCE = "the entry's fitted selection_threshold"
THINKER_SOURCE = "the thinker's constructor"
DEFAULT_SOURCE = "the default: neither the thinker nor the entry sets one"
RESCORED_SOURCE = "given to at_threshold: the answers re-selected from the candidates at it"


def model_identity(entry: CatalogEntry) -> dict[str, object]:
    """What a model is to an eval's folder: the resolved entry's id, provider, wire model, a
    digest of its calibration (``None`` without one) and its orderings when more than one."""
    calibration = None
    if entry.calibration is not None:
        table = json.dumps(entry.calibration.to_table(), sort_keys=True, default=str)
        calibration = hashlib.sha256(table.encode()).hexdigest()[:16]
    identity: dict[str, object] = {
        "id": entry.id,
        "provider": entry.provider,
        "wire_model": entry.wire_model_id,
        "calibration": calibration,
    }
    if entry.orderings > 1:  # each choice averaged over its orders: another reading
        identity["orderings"] = entry.orderings
    return identity


def _differs(found: dict[str, Any], identity: dict[str, object], given: str) -> list[str]:
    """Which of thinker, model, dataset differ between the stamp found and this eval."""
    what = []
    if found.get("target") != identity["target"]:
        what.append("thinker")
    model = found.get("model")
    if isinstance(model, str):  # a folder written before entries were resolved: its text
        resolved = identity["model"]
        same = model == given or (isinstance(resolved, dict) and model == resolved.get("id"))
    else:
        same = model == identity["model"]
    if not same:
        what.append("model")
    if found.get("dataset") != identity["dataset"]:
        what.append("dataset")
    return what


def _described(model: object) -> str:
    if isinstance(model, dict):
        calibration = model.get("calibration")
        shown = f"calibration {calibration}" if calibration else "no calibration"
        return (
            f"entry {model.get('id')!r} ({model.get('provider')}, {model.get('wire_model')}, "
            f"{shown})"
        )
    return repr(model)


def prepare(
    target: str,
    dataset: Dataset[Any, Any],  # Any: a dataset of any thinker's types
    out: Path,
    model: dict[str, object],
    given: str,
) -> tuple[Path, Path]:
    """Write the inputs and the eval's identity to ``out``; refuse a folder of another eval,
    naming which of its thinker, model or dataset differs. ``given`` is the model as named (a
    folder stamped with that text before entries were resolved still matches)."""
    out.mkdir(parents=True, exist_ok=True)
    identity: dict[str, object] = {"target": target, "dataset": dataset.digest(), "model": model}
    stamp = out / "eval.json"
    if stamp.exists():
        try:
            loaded = load_json(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        found = loaded if isinstance(loaded, dict) else {}
        what = _differs(found, identity, given)
        if what:
            named = " and ".join(what) if len(what) < 3 else "thinker, model and dataset"
            verb = "differs" if len(what) == 1 else "differ"
            detail = ""
            if "model" in what:
                detail = f" (there: {_described(found.get('model'))}; here: {_described(model)})"
            elif what == ["thinker"]:
                detail = f" (there: {found.get('target')}; here: {target})"
            raise EvalError(
                f"{out} holds another eval: its {named} {verb}{detail}; give another --out "
                "folder, or delete it to start over"
            )
    stamp.write_text(json.dumps(identity, sort_keys=True) + "\n", encoding="utf-8")
    inputs = out / "inputs.jsonl"
    inputs.write_text("".join(to_json(case.input) + "\n" for case in dataset), encoding="utf-8")
    return inputs, out / "results.jsonl"


def threshold_source(observed: float | None, given: float, fitted: float | None) -> str | None:
    """Where the threshold the answers were taken at came from: ``given`` is the thinker's own
    before any run (its constructor's, else the default), ``fitted`` the entry's."""
    if observed is None:
        return None
    if fitted is not None and observed == fitted and (observed != given or given == fitted):
        return ENTRY_SOURCE
    if observed == given and given == 0.5 and fitted is None:
        return DEFAULT_SOURCE
    return THINKER_SOURCE


def model_seconds(line: dict[str, object]) -> float:
    """The seconds the model took on one result line."""
    usage = line.get("usage")
    seconds = usage.get("model_seconds") if isinstance(usage, dict) else None
    return float(seconds) if isinstance(seconds, int | float) else 0.0


def read_results(path: Path) -> dict[int, dict[str, object]]:
    """The result lines of a batch, by input line number."""
    found: dict[int, dict[str, object]] = {}
    if not path.exists():
        return found
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            line = cast("dict[str, Any]", load_json(raw))  # Any: a results line harness wrote
            found[int(line["line"])] = line
    return found


def case_result(
    dataset: Dataset[I, O],
    number: int,
    case: Any,  # Any: a Case of the dataset's types
    line: dict[str, object] | None,
    folder: Path,
) -> CaseResult:
    """Case ``number`` of ``dataset`` from its result ``line`` (a failed case when it has
    none): the candidates keyed by the dataset, labelled by its expected set."""
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
            return key_text(value)  # a JSON value's sorted JSON
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
    placed = _placed_in(record) if isinstance(record, str) else ()
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
        placed=placed,
    )


def _placed_in(record: str) -> tuple[Placed, ...]:
    """Each choice of two options or more a run's turns made, as the record keeps them (the
    ``next`` move among the tools, then the chosen tool's input among the artifacts), with the
    place of what was chosen; none when the record cannot be read."""
    try:
        with open(record, encoding="utf-8") as file:
            data = load_json(file.read())
    except (OSError, ValueError):
        return ()
    if not isinstance(data, dict):
        return ()
    found: list[Placed] = []
    for turn in data.get("turns") or []:
        if not isinstance(turn, dict):
            continue
        tool, moves = turn.get("tool"), turn.get("next")
        if isinstance(moves, dict) and len(moves) > 1 and tool in moves:
            found.append(Placed("next", len(moves), list(moves).index(tool)))
        argument, artifact = turn.get("argument"), turn.get("artifact")
        if not isinstance(argument, dict) or tool == FINISH:
            continue
        if len(argument) > 1 and artifact in argument:
            found.append(Placed(f"{tool}_input", len(argument), list(argument).index(artifact)))
    return tuple(found)

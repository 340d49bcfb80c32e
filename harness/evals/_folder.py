"""An eval's folder: which eval it holds (``eval.json``), its inputs and its results.

The folder is known by what ran, not by how it was named: the thinker's ``MODULE:CLASS``, the
dataset's digest, and the catalog entry the model resolved to (its id, provider, wire model and
a digest of its calibration), so ``--model default`` and ``--model embedded`` are one eval when
the default is the embedded entry, and a folder of another eval is refused naming what differs.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness.artifacts import to_json
from harness.catalog import CatalogEntry
from harness.errors import HarnessError
from harness.evals._dataset import Dataset

__all__ = [
    "DEFAULT_SOURCE",
    "ENTRY_SOURCE",
    "THINKER_SOURCE",
    "EvalError",
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


def model_identity(entry: CatalogEntry) -> dict[str, object]:
    """What a model is to an eval's folder: the resolved entry's id, provider, wire model and a
    digest of its calibration (``None`` without one)."""
    calibration = None
    if entry.calibration is not None:
        table = json.dumps(entry.calibration.to_table(), sort_keys=True, default=str)
        calibration = hashlib.sha256(table.encode()).hexdigest()[:16]
    return {
        "id": entry.id,
        "provider": entry.provider,
        "wire_model": entry.wire_model_id,
        "calibration": calibration,
    }


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
            found = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            found = {}
        what = _differs(found if isinstance(found, dict) else {}, identity, given)
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
            line = json.loads(raw)
            found[int(line["line"])] = line
    return found

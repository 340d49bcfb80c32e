"""Fits the embedded model's calibration and selection threshold on the shipped data's ``dev``
split, reports them on its ``test`` split, and chooses the default question scheme.

Run ``python -m scripts.embedded_calibration`` to print the figures, ``--write`` to also store the
fitted calibration in the shipped catalog (``harness/catalog.toml``, the ``embedded`` entry's
``[entries.calibration]``) and the figures in ``harness/evals/data/fitted.json`` (what
``harness demo`` prints as "fitted on"). Deterministic: the model is, the splits are fixed and
the bootstrap is seeded. The demo's corpus is never read here.
"""

from __future__ import annotations

import argparse
import asyncio

# the stdlib's json: figures shown and kept with ASCII escapes and json's separators, which orjson
# cannot write
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from harness.catalog import Calibration, Catalog, CatalogEntry, default_catalog
from harness.evals._calibration import fit_calibration
from harness.evals._calibration_report import calibration_report
from harness.evals._dataset import Dataset
from harness.evals._pack import DecisionPack
from harness.evals._pack_run import evaluate_pack_async
from harness.evals._report import EvalReport, ScoredDecision
from harness.evals._run import evaluate_async
from harness.evals._score import run_figures
from harness.evals._threshold import fit_threshold
from harness.evals.data import DOMAINS, data_path
from harness.evals.data import domains as d
from harness.evals.metrics import Estimate, auc, bootstrap

__all__ = ["FITTED", "ask_pack", "fit", "main", "run_reports"]

PACKAGE: Final = Path(__file__).resolve().parent.parent / "harness"
"""The package in this checkout (what ``--write`` rewrites)."""
FITTED: Final = PACKAGE / "evals" / "data" / "fitted.json"
"""The figures of the last fit, as ``harness demo`` reads them."""
FITTED_ENTRY: Final = "embedded"
"""The shipped catalog entry the calibration is fitted for."""

_TYPES: Final[dict[str, tuple[type[Any], type[Any]]]] = {  # Any: each domain's own types
    "support": (d.Inbox, d.Ticket),
    "recipes": (d.Cookbook, d.Recipe),
    "logs": (d.LogFile, d.LogEntry),
}


_THINKERS: Final[dict[str, dict[str, type[Any]]]] = {  # Any: each domain's own thinker
    "lean": {"support": d.RefundFinder, "recipes": d.VegetarianFinder, "logs": d.PageFinder},
    "verbose": {
        "support": d.VerboseRefundFinder,
        "recipes": d.VerboseVegetarianFinder,
        "logs": d.VerbosePageFinder,
    },
}


def _catalog(calibration: Calibration | None) -> Catalog:
    """The shipped embedded entry with ``calibration`` (``None``: the model's own answers)."""
    shipped = default_catalog().entry(FITTED_ENTRY)
    entry: CatalogEntry = attrs.evolve(shipped, calibration=calibration)
    return Catalog([entry], {"decision": entry.id}, source="the shipped embedded entry")


async def ask_pack(split: str) -> list[ScoredDecision]:
    """The shipped decisions of ``split`` asked of the embedded model with no calibration."""
    pack = DecisionPack.load(data_path("decisions.jsonl"))
    chosen = DecisionPack([d for d in pack if split in d.tags], name=f"decisions [{split}]")
    with open(os.devnull, "w", encoding="utf-8") as quiet:  # noqa: ASYNC230 - opening /dev/null
        report = await evaluate_pack_async(chosen, catalog=_catalog(None), progress=quiet)
    return list(report.decisions)


async def fitted_model_name() -> str:
    """The name of the model the calibration is fitted for: the name the embedded model serves
    its answers under (what a calibration is bound to)."""
    from harness.decision import DecisionRequest, Noul
    from harness.providers import client_for

    entry = _catalog(None).entry(FITTED_ENTRY)
    client = client_for(entry)
    try:
        response = await client.decide(DecisionRequest("a", {"q": Noul("Is it?")}), entry)
    finally:
        await client.aclose()
    assert response.model is not None
    return response.model


async def run_reports(
    split: str, *, scheme: str = "lean", calibration: Calibration | None = None
) -> EvalReport:
    """One report pooling the three domains' runs of ``split`` on the embedded model."""
    catalog = _catalog(calibration)
    reports = []
    with open(os.devnull, "w", encoding="utf-8") as quiet:  # noqa: ASYNC230 - opening /dev/null
        for domain in DOMAINS:
            input_type, output_type = _TYPES[domain]
            dataset: Dataset[Any, Any] = Dataset.load(
                data_path(f"runs-{domain}.jsonl"), input_type, output_type
            ).tagged(split)
            reports.append(
                await evaluate_async(
                    _THINKERS[scheme][domain],
                    dataset,
                    catalog=catalog,
                    records=False,
                    progress=quiet,
                    split=split,
                )
            )
    cases = tuple(case for report in reports for case in report.cases)
    return attrs.evolve(reports[0], cases=cases, dataset=f"shipped runs [{split}]")


def _select(report: EvalReport) -> list[ScoredDecision]:
    return [decision for case in report.cases for decision in case.decisions]


def _auc(report: EvalReport) -> Estimate:
    def statistic(sample: Sequence[Any]) -> float:  # Any: CaseResult
        pairs = [(c.probability, c.expected) for case in sample for c in case.candidates]
        return auc([p for p, _ in pairs], [w for _, w in pairs])

    count = sum(len(case.candidates) for case in report.cases)
    return bootstrap(list(report.cases), statistic, seed=0, n=count)


def _as_json(estimate: Estimate) -> dict[str, object]:
    def shown(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "value": shown(estimate.value),
        "low": shown(estimate.low),
        "high": shown(estimate.high),
        "n": estimate.n,
        "cases": estimate.cases,
    }


def _between(value: float, report: EvalReport) -> float:
    """``value`` (a candidate's own probability) moved halfway down to the next lower candidate
    probability (or 0): the same selection on the dev split, and no float's last digit can flip
    a candidate sitting exactly at the threshold."""
    lower = [
        c.probability for case in report.cases for c in case.candidates if c.probability < value
    ]
    return round((value + max(lower, default=0.0)) / 2, 6)  # halfway: rounding moves nothing


def _paired_f1_gap(first: EvalReport, second: EvalReport) -> Estimate:
    """F1 at 0.5 of ``first`` minus ``second`` over the same cases, bootstrapped by case."""
    pairs = list(zip(first.cases, second.cases, strict=True))

    def statistic(sample: Sequence[Any]) -> float:  # Any: pairs of CaseResult
        gap = 0.0
        for index, sign in ((0, 1.0), (1, -1.0)):
            tp = fp = fn = 0
            for pair in sample:
                a, b, c = pair[index].counts(0.5)
                tp, fp, fn = tp + a, fp + b, fn + c
            gap += sign * (2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
        return gap

    return bootstrap(pairs, statistic, seed=0)


async def fit() -> dict[str, object]:
    """Fit on dev, report on test; the figures as ``fitted.json`` holds them."""
    pack_dev, pack_test = await ask_pack("dev"), await ask_pack("test")
    schemes: dict[str, dict[str, object]] = {}
    raw_dev: dict[str, EvalReport] = {}
    for scheme in ("lean", "verbose"):
        report = await run_reports("dev", scheme=scheme)
        raw_dev[scheme] = report
        schemes[scheme] = {
            "select_auc": _as_json(_auc(report)),
            "f1_at_0.5": _as_json(run_figures(report.cases, threshold=0.5)["f1"]),
        }
    schemes["lean_minus_verbose_f1_at_0.5"] = _as_json(
        _paired_f1_gap(raw_dev["lean"], raw_dev["verbose"])
    )
    dev, test = raw_dev["lean"], await run_reports("test")
    maps = fit_calibration([*pack_dev, *_select(dev)], selection_threshold=False)
    calibrated_dev = await run_reports("dev", calibration=maps)
    threshold = fit_threshold(calibrated_dev)
    calibration = attrs.evolve(
        maps,
        model=await fitted_model_name(),
        selection_threshold=_between(threshold.value, calibrated_dev),
        fitted_on=(
            f"the shipped data's dev split ({len(pack_dev)} decisions, {len(dev.cases)} runs)"
        ),
    )
    calibrated_test = await run_reports("test", calibration=calibration)
    held_out = threshold.on(calibrated_test).held_out
    before = run_figures(test.cases, threshold=0.5)
    measured = calibration_report([*pack_test, *_select(test)], calibration)
    return {
        "calibration": calibration.to_table(),
        "fitted_on": {"split": "dev", "decisions": len(pack_dev), "runs": len(dev.cases)},
        "reported_on": {"split": "test", "decisions": len(pack_test), "runs": len(test.cases)},
        "schemes": schemes,
        "ece": {
            r.role: {
                "method": r.method,
                "decisions": r.decisions,
                "cases": r.cases,
                "before": _as_json(r.ece_before),
                "after": _as_json(r.ece_after),
                "log_loss_before": _as_json(r.log_loss_before),
                "log_loss_after": _as_json(r.log_loss_after),
            }
            for r in measured.roles
        },
        "runs": {
            "before": {k: _as_json(before[k]) for k in ("recall", "precision", "f1")},
            "after": {k: _as_json(held_out[k]) for k in ("recall", "precision", "f1")},
        },
        "report": measured.lines(),
    }


CALIBRATION_BLOCK: Final = re.compile(
    r"\n# Calibration fitted by python -m scripts.embedded_calibration.*?\n(?=\n)", re.DOTALL
)
"""The fitted block in the catalog: from its first comment line to the blank line after it."""


def calibration_toml(table: dict[str, object]) -> str:
    """The ``[entries.calibration]`` block of the embedded entry, as the catalog holds it."""
    lines = [
        "# Calibration fitted by python -m scripts.embedded_calibration on the shipped data's",
        "# dev split (docs/shipped-data.md shows what it does on the test split); remove it for",
        "# raw answers.",
        "[entries.calibration]",
    ]
    roles: list[str] = []
    for key, value in table.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} = {_toml(v)}" for k, v in value.items())
            roles.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {_toml(value)}")
    return "\n".join(lines + roles)


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def write_catalog(table: dict[str, object]) -> Path:
    """Put the fitted calibration under the embedded entry of ``harness/catalog.toml``."""
    path = PACKAGE / "catalog.toml"
    text = path.read_text(encoding="utf-8")
    text = CALIBRATION_BLOCK.sub("", text, count=1)
    anchor = "max_levels = 10\n"
    at = text.index(anchor) + len(anchor)  # the embedded entry's last line comes first
    text = text[:at] + "\n" + calibration_toml(table) + "\n" + text[at:]
    path.write_text(text, encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, print the figures, and with ``--write`` store them."""
    parser = argparse.ArgumentParser(prog="python -m scripts.embedded_calibration")
    parser.add_argument("--write", action="store_true", help="store the calibration and figures")
    args = parser.parse_args(argv)
    figures = asyncio.run(fit())
    print(json.dumps(figures, indent=2))
    if args.write:
        FITTED.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        write_catalog(figures["calibration"])  # type: ignore[arg-type]  # a table
    return 0


if __name__ == "__main__":
    sys.exit(main())

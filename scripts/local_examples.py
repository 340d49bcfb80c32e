"""Fits a local model's solved examples and calibration on the shipped decisions' ``dev`` split,
domain by domain (``support``, ``recipes``, ``logs`` of ``decisions.jsonl``, and ``triage``: the
triage example's selections, ``selections-triage.jsonl``), and reports on the ``test`` split:
the embedded model (as shipped, calibrated),
the local entry zero-shot (its own answers) and k-shot calibrated, each figure with its 95 %
interval, and McNemar between each pair (:func:`harness.evals.compare`).

Run ``python -m scripts.local_examples --catalog gemma.toml --model gemma`` (any entry: a
``llama`` entry, or any other) to print the figures as JSON; ``--write DIR`` also stores each
domain's examples (``examples-<domain>.json``) and calibration (``calibration-<domain>.toml``)
and the figures (``figures.json``). Deterministic for a deterministic model: the splits are
fixed, the draws and the bootstrap seeded.
"""

from __future__ import annotations

import argparse
import asyncio

# the stdlib's json: figures written with one-space indents, which orjson cannot
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

from harness.catalog import Calibration, Catalog, load_catalog, write_examples
from harness.evals._calibration import mapped_distribution, write_calibration
from harness.evals._compare import compare
from harness.evals._draws import split_decisions
from harness.evals._examples import ExamplesFit, Method, fit_examples_async
from harness.evals._pack import DecisionPack
from harness.evals._pack_run import NOUL_THRESHOLD, evaluate_pack_async
from harness.evals._report import EvalReport
from harness.evals._run import score
from harness.evals.data import DOMAINS, data_path
from harness.evals.metrics import Estimate, mcnemar

__all__ = ["domain_figures", "main"]

PACK_FILES: Final = {"triage": "selections-triage.jsonl"}
"""The domains whose decisions are a file of their own (the rest are in ``decisions.jsonl``)."""

PACK_DOMAINS: Final = (*DOMAINS, *PACK_FILES)
"""Every domain ``--domain`` takes: the shipped decisions' and the triage example's selections."""

FIGURES = ("accuracy", "auc", "brier")
"""The figures of each role reported (the pack's roles: choice, noul, score)."""


def _estimate(estimate: Estimate) -> dict[str, object]:
    def shown(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    return {
        "value": shown(estimate.value),
        "low": shown(estimate.low),
        "high": shown(estimate.high),
        "n": estimate.n,
    }


def _figures(report: EvalReport) -> dict[str, object]:
    return {
        name: _estimate(estimate)
        for name, estimate in sorted(report.metrics.items())
        if name.rsplit(".", 1)[-1] in FIGURES
    }


def _pair(a: EvalReport, b: EvalReport) -> dict[str, object]:
    found = compare(a, b)
    return {
        "only_first_right": found.only_a_right,
        "only_second_right": found.only_b_right,
        "mcnemar_p": round(found.mcnemar_p, 4),
    }


def mapped(report: EvalReport, calibration: Calibration) -> EvalReport:
    """``report`` (a pack's, answered without calibration) scored again with ``calibration``
    applied to each decision: what asking the same questions of the calibrated entry gives (a
    map never reorders a choice's options or a score's levels; a yes/no is chosen at 0.5)."""
    cases = []
    for case in report.cases:
        decisions = []
        for decision in case.decisions:
            values = tuple(mapped_distribution(calibration, decision))
            if decision.kind == "noul":
                chosen = 0 if values[0] >= NOUL_THRESHOLD else 1
            else:
                chosen = decision.chosen
            decisions.append(attrs.evolve(decision, probabilities=values, chosen=chosen))
        cases.append(attrs.evolve(case, decisions=tuple(decisions)))
    return score(
        cases,
        subject=report.subject,
        dataset=report.dataset,
        model=f"{report.model}, calibrated",
        split=report.split,
        seed=report.seed,
        resamples=report.resamples,
        runs=False,
    )


def _role_pair(a: EvalReport, b: EvalReport, role: str) -> dict[str, object]:
    """McNemar on one role's decisions, paired by case."""
    right_b = {d.case: d.correct for d in b.decisions if d.role == role}
    only_a = only_b = 0
    for decision in a.decisions:
        if decision.role != role or decision.case not in right_b:
            continue
        only_a += decision.correct and not right_b[decision.case]
        only_b += right_b[decision.case] and not decision.correct
    return {
        "only_first_right": only_a,
        "only_second_right": only_b,
        "mcnemar_p": round(mcnemar(only_a, only_b), 4),
    }


def _write(fitted: ExamplesFit, write: Path, domain: str) -> None:
    write.mkdir(parents=True, exist_ok=True)
    write_examples(fitted.examples, write / f"examples-{domain}.json")
    if fitted.calibration is not None:
        write_calibration(fitted.calibration, write / f"calibration-{domain}.toml")


async def domain_figures(
    domain: str,
    catalog: Catalog,
    model: str,
    *,
    k: int,
    method: Method,
    candidates: int,
    seed: int,
    write: Path | None,
    concurrency: int,
) -> dict[str, object]:
    """One domain: fit on dev, report embedded, zero-shot and k-shot calibrated on test."""
    shipped = DecisionPack.load(data_path(PACK_FILES.get(domain, "decisions.jsonl")))
    pack = DecisionPack([d for d in shipped if domain in d.tags], name=domain)
    test = DecisionPack(split_decisions(pack, "test"), name=f"{domain} [test]")
    began = time.perf_counter()
    fitted = await fit_examples_async(
        pack,
        model=model,
        catalog=catalog,
        k=k,
        seed=seed,
        method=method,
        candidates=candidates,
        held_out="test",
        calibrate=True,
        concurrency=concurrency,
    )
    fitting = time.perf_counter() - began
    zero, shot = (choice.held_out for choice in fitted.choices[:2])
    assert zero is not None
    assert shot is not None
    calibrated = shot if fitted.calibration is None else mapped(shot, fitted.calibration)
    quiet = open(os.devnull, "w", encoding="utf-8")  # noqa: ASYNC230, SIM115 - /dev/null
    with quiet:
        embedded = await evaluate_pack_async(test, model="embedded", progress=quiet)
    if write is not None:
        await asyncio.to_thread(_write, fitted, write, domain)
    return {
        "domain": domain,
        "test_decisions": len(test),
        "fitted": fitted.lines(),
        "embedded": _figures(embedded),
        "zero_shot": _figures(zero),
        "k_shot_calibrated": _figures(calibrated),
        "mcnemar": {
            "embedded_vs_zero_shot": _pair(embedded, zero),
            "embedded_vs_k_shot_calibrated": _pair(embedded, calibrated),
            "zero_shot_vs_k_shot_calibrated": _pair(zero, calibrated),
        },
        "mcnemar_by_role": {
            role: {
                "embedded_vs_zero_shot": _role_pair(embedded, zero, role),
                "embedded_vs_k_shot_calibrated": _role_pair(embedded, calibrated, role),
                "zero_shot_vs_k_shot_calibrated": _role_pair(zero, calibrated, role),
            }
            for role in sorted({d.role for d in embedded.decisions})
        },
        "seconds": {"fitting_and_held_out": round(fitting, 1)},
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Fit and report every domain (or ``--domain``); print the figures as JSON."""
    parser = argparse.ArgumentParser(prog="python -m scripts.local_examples")
    parser.add_argument("--model", required=True, help="the local entry id (or a model string)")
    parser.add_argument("--catalog", help="the catalog holding the entry")
    parser.add_argument(
        "--domain",
        action="append",
        choices=PACK_DOMAINS,
        help="default: the three of decisions.jsonl",
    )
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--method", choices=("labeled", "search"), default="search")
    parser.add_argument("--candidates", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--write", metavar="DIR", help="store examples, calibrations, figures")
    args = parser.parse_args(argv)
    catalog = load_catalog(args.catalog)
    write = None if args.write is None else Path(args.write)
    found = []
    for domain in args.domain or DOMAINS:
        figures = asyncio.run(
            domain_figures(
                domain,
                catalog,
                args.model,
                k=args.k,
                method=args.method,
                candidates=args.candidates,
                seed=args.seed,
                write=write,
                concurrency=args.concurrency,
            )
        )
        print(json.dumps(figures, indent=1), flush=True)
        found.append(figures)
    if write is not None:
        (write / "figures.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

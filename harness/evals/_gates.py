"""Gates: bounds on an eval's figures that decide a CI job (``--min-recall 0.8``, ``--max-ece``).

A gate passes when its figure is defined and within its bound; an undefined figure fails its
gate, saying why (``FAILED (undefined: nothing was answered)``: a gate never passes on a figure
that could not be computed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from harness.evals._report import EvalReport
from harness.evals.metrics import reason_of

if TYPE_CHECKING:
    from harness.evals._compare import Comparison

__all__ = ["GATES", "GateResult", "assert_eval", "check_gates", "failed_gates"]

GATES: dict[str, tuple[str, Literal["min", "max"]]] = {
    "min_recall": ("recall", "min"),
    "min_precision": ("precision", "min"),
    "min_f1": ("f1", "min"),
    "min_exact_match": ("exact_match", "min"),
    "min_accuracy": ("accuracy", "min"),
    "min_auc": ("auc", "min"),
    "max_ece": ("ece_width", "max"),
    "max_brier": ("brier", "max"),
    "max_log_loss": ("log_loss", "max"),
}
"""Each gate's keyword, the figure it bounds (a per-role figure is bounded in every role) and
whether the bound is a minimum or a maximum; ``max_flips`` bounds a comparison's flips (every
change of answer: a candidate kept in one eval and not in the other)."""


@attrs.frozen
class GateResult:
    """One gate on one figure: its bound, the value found and whether it passed."""

    gate: str
    figure: str
    bound: float
    value: float | None
    passed: bool
    message: str
    detail: str = ""
    """More than the one line, for a JUnit failure's text (a comparison's flipped decisions)."""


def _figures(report: EvalReport, figure: str) -> list[str]:
    if figure in report.metrics:
        return [figure]
    return sorted(k for k in report.metrics if k.endswith(f".{figure}"))


def check_gates(
    report: EvalReport,
    gates: Mapping[str, float | None] | None = None,
    *,
    comparison: Comparison | None = None,
    max_flips: int | None = None,
    max_failed: int | None = None,
    **bounds: float | None,
) -> tuple[GateResult, ...]:
    """Check ``report`` against each bound given (``min_recall=0.8``, ``max_ece=0.1``, ...: the
    keywords of :data:`GATES`, as keywords or in ``gates``), ``comparison``'s flips against
    ``max_flips``, and the cases that did not complete against ``max_failed`` (a gate shown only
    when some did not). An eval in which no case completed fails whatever the bounds: it has no
    figure to gate."""
    results: list[GateResult] = []
    if max_failed is not None and max_failed < 0:
        raise ValueError(f"max_failed must be at least 0, got {max_failed}")
    failed = report.failed
    if report.cases and len(failed) == len(report.cases):
        results.append(
            GateResult(
                "completed",
                "failed",
                0.0,
                float(len(failed)),
                False,
                f"no case completed: {report.failed_line()}: FAILED",
            )
        )
    elif max_failed is not None and failed:
        passed = len(failed) <= max_failed
        results.append(
            GateResult(
                "max_failed",
                "failed",
                float(max_failed),
                float(len(failed)),
                passed,
                f"max_failed: {len(failed)} of {len(report.cases)} cases did not complete <= "
                f"{max_failed}: {'ok' if passed else 'FAILED'}",
                report.failed_line() or "",
            )
        )
    for gate, bound in {**(gates or {}), **bounds}.items():
        if bound is None:
            continue
        if gate not in GATES:
            known = ", ".join([*GATES, "max_flips"])
            raise ValueError(f"unknown gate {gate!r}: the gates are {known}")
        figure, side = GATES[gate]
        names = _figures(report, figure)
        if not names:
            results.append(
                GateResult(
                    gate,
                    figure,
                    bound,
                    None,
                    False,
                    f"{gate}: the report has no {figure} figure (no decisions of that kind)",
                )
            )
        for name in names:
            estimate = report.metrics[name]
            value = estimate.value
            if value is None:
                results.append(
                    GateResult(
                        gate,
                        name,
                        bound,
                        None,
                        False,
                        f"{gate}: {name} undefined {'>=' if side == 'min' else '<='} "
                        f"{bound:g}: FAILED (undefined: {reason_of(estimate.undefined or '')})",
                    )
                )
                continue
            passed = value >= bound if side == "min" else value <= bound
            relation = ">=" if side == "min" else "<="
            verdict = "ok" if passed else "FAILED"
            results.append(
                GateResult(
                    gate,
                    name,
                    bound,
                    value,
                    passed,
                    f"{gate}: {name} {estimate} {relation} {bound:g}: {verdict}",
                )
            )
    if max_flips is not None:
        if comparison is None:
            raise ValueError("max_flips bounds a comparison: give comparison=compare(a, b)")
        flipped = comparison.flips
        passed = len(flipped) <= max_flips
        results.append(
            GateResult(
                "max_flips",
                "flips",
                float(max_flips),
                float(len(flipped)),
                passed,
                f"max_flips: {len(flipped)} decision(s) flipped (answers changed in "
                f"{len(comparison.changes)} case(s)) <= {max_flips}: "
                f"{'ok' if passed else 'FAILED'}",
                "\n".join(shift.line() for shift in flipped),
            )
        )
    return tuple(results)


def failed_gates(results: Sequence[GateResult]) -> list[GateResult]:
    """The gates that failed (an eval fails when any did: ``harness eval`` exits 1)."""
    return [r for r in results if not r.passed]


def assert_eval(
    report: EvalReport,
    *,
    comparison: Comparison | None = None,
    max_flips: int | None = None,
    max_failed: int | None = 0,
    **bounds: float | None,
) -> None:
    """Fail (``AssertionError``) when a gate fails, with one short line per failed gate; a case
    that did not complete fails it unless ``max_failed`` allows it::

    assert_eval(report, min_recall=0.8, max_ece=0.1)
    """
    results = check_gates(
        report, bounds, comparison=comparison, max_flips=max_flips, max_failed=max_failed
    )
    wrong = failed_gates(results)
    if wrong:
        lines = "\n".join(f"  {r.message}" for r in wrong)
        raise AssertionError(
            f"eval of {report.subject} on {report.model} ({len(report.cases)} cases) failed "
            f"{len(wrong)} of {len(results)} gate(s):\n{lines}"
        )

"""What a fitted calibration did on held-out decisions: per role, the ECE (equal-mass bins) and
the log loss before and after, each with a bootstrap interval resampled by case."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from harness.catalog import Calibration
from harness.evals._calibration import by_calibration_role, mapped_distribution
from harness.evals._report import ScoredDecision
from harness.evals.metrics import BOOTSTRAP_RESAMPLES, Estimate, ece, log_loss
from harness.evals.metrics._intervals import bootstrap_grouped

__all__ = ["CalibrationReport", "RoleReport", "calibration_report"]


@attrs.frozen
class RoleReport:
    """One role's held-out figures before and after calibration (95 % bootstrap intervals
    resampled by case)."""

    role: str
    method: str | None
    decisions: int
    cases: int
    ece_before: Estimate
    ece_after: Estimate
    log_loss_before: Estimate
    log_loss_after: Estimate


@attrs.frozen
class CalibrationReport:
    """What a calibration did on held-out decisions, per role."""

    roles: tuple[RoleReport, ...]

    def lines(self) -> list[str]:
        """One line per role: ECE and log loss before -> after, with intervals."""
        return [
            f"{r.role} ({r.method or 'none'}, {r.decisions} decisions, {r.cases} cases): "
            f"ECE {r.ece_before} -> {r.ece_after}; log loss {r.log_loss_before} -> "
            f"{r.log_loss_after}"
            for r in self.roles
        ]


def _top(distribution: Sequence[float], label: int, kind: str) -> tuple[float, bool]:
    """The (probability, outcome) pair an ECE reads: a noul's p_yes and truth, a choice's or a
    score's top probability and whether the top option is the right one."""
    if kind == "noul":
        return distribution[0], label == 0
    top = max(range(len(distribution)), key=distribution.__getitem__)
    return distribution[top], top == label


_Mapped = tuple[str, list[float], int, float, bool]
"""A decision after a calibration: its case, distribution, label, and the pair an ECE reads."""


def _figures(
    decisions: Sequence[ScoredDecision],
    calibration: Calibration | None,
    seed: int,
    resamples: int,
) -> tuple[Estimate, Estimate]:
    found: list[_Mapped] = []
    for decision in decisions:  # each decision mapped once, then resampled by case
        distribution = mapped_distribution(calibration, decision)
        top, outcome = _top(distribution, decision.label, decision.kind)
        found.append((decision.case, distribution, decision.label, top, outcome))

    def case(mapped: _Mapped) -> str:
        return mapped[0]

    def ece_of(sample: Sequence[_Mapped]) -> float:
        return ece([d[3] for d in sample], [d[4] for d in sample], bins=10, strategy="mass")

    def loss_of(sample: Sequence[_Mapped]) -> float:
        return log_loss([d[1] for d in sample], [d[2] for d in sample])

    return (
        bootstrap_grouped(found, case, ece_of, seed=seed, resamples=resamples),
        bootstrap_grouped(found, case, loss_of, seed=seed, resamples=resamples),
    )


def calibration_report(
    decisions: Iterable[ScoredDecision],
    calibration: Calibration,
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> CalibrationReport:
    """``calibration``'s held-out figures on ``decisions`` (the test split), per role it maps:
    ECE with equal-mass bins and log loss, before and after, each with its interval."""
    reports: list[RoleReport] = []
    for role, found in by_calibration_role(decisions).items():
        mapped = calibration.roles.get(role)
        ece_before, loss_before = _figures(found, None, seed, resamples)
        ece_after, loss_after = _figures(found, calibration, seed, resamples)
        reports.append(
            RoleReport(
                role=role,
                method=None if mapped is None else mapped.method,
                decisions=len(found),
                cases=len({d.case for d in found}),
                ece_before=ece_before,
                ece_after=ece_after,
                log_loss_before=loss_before,
                log_loss_after=loss_after,
            )
        )
    return CalibrationReport(tuple(sorted(reports, key=lambda r: r.role)))

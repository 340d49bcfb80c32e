"""Fitting a thinker's ``selection_threshold`` on a dev split, with a confidence bound.

Two rules: ``"f1"`` takes the threshold with the best pooled F1 on the dev cases (the lowest of
ties); ``"precision"`` the lowest threshold whose precision's Wilson lower bound (95 %) reaches
``target``. The thresholds tried are the candidates' own probabilities (and 1.0), since the
answer changes only there. The fitted value is then reported on the held-out cases: a figure is
never reported on the cases it was fitted on.
"""

from __future__ import annotations

import json  # the stdlib: TOML strings as json writes them (a key's ASCII escapes)
import os
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import attrs

from harness.evals import metrics as m
from harness.evals._report import CaseResult, EvalReport
from harness.evals._score import run_figures
from harness.evals.metrics import Estimate

__all__ = ["FittedThreshold", "ThresholdRule", "fit_threshold"]

ThresholdRule = Literal["f1", "precision"]


@attrs.frozen
class FittedThreshold:
    """A threshold fitted on ``fitted_on`` (``cases`` cases) by ``rule``; ``dev`` its figures
    there and ``held_out`` on the held-out cases (empty until :meth:`on` reports it).

    The thinker reads its threshold from the run's catalog entry (``[entries.calibration]``
    ``selection_threshold``) unless its constructor was given one: :meth:`write_calibration`
    writes it into the calibration file an entry names (``file = "..."``), :meth:`toml` gives
    the line to paste into the entry's table."""

    value: float
    rule: ThresholdRule
    target: float | None
    fitted_on: str
    cases: int
    precision_lower_bound: float | None
    dev: dict[str, Estimate] = attrs.field(factory=dict)
    held_out: dict[str, Estimate] = attrs.field(factory=dict)
    held_out_split: str | None = None

    def on(self, report: EvalReport) -> FittedThreshold:
        """This threshold's run-level figures on ``report``'s cases (the held-out split),
        re-selecting each case's candidates at it."""
        if report.split == self.fitted_on and report.dataset == self.fitted_on:
            raise ValueError(
                "a threshold is reported on held-out cases, not on the cases it was fitted on: "
                "give the report of the other split"
            )
        figures = run_figures(
            report.cases, threshold=self.value, seed=report.seed, resamples=report.resamples
        )
        return attrs.evolve(self, held_out=figures, held_out_split=report.dataset)

    def toml(self) -> str:
        """The fitted threshold as TOML lines for an entry's ``[entries.calibration]`` table (a
        comment saying how it was fitted, then ``selection_threshold = ...``)."""
        return f"{self._comment()}\nselection_threshold = {round(self.value, 6)!r}\n"

    def _comment(self) -> str:
        bound = (
            ""
            if self.precision_lower_bound is None
            else f", precision >= {self.precision_lower_bound:.3f} (95 % Wilson lower bound)"
        )
        target = "" if self.target is None else f" {self.target:g}"
        return (
            f"# selection_threshold fitted by harness.evals ({self.rule}{target}) on "
            f"{self.fitted_on}, {self.cases} cases{bound}"
        )

    def write_calibration(self, path: str | os.PathLike[str]) -> Path:
        """Set ``selection_threshold`` in the TOML calibration file at ``path`` (made if
        missing; its other keys are kept): the file an entry's ``[entries.calibration]`` names
        with ``file = "..."``, so every run on that entry answers at this threshold."""
        return update_calibration_file(
            path, {"selection_threshold": round(self.value, 6)}, self._comment()
        )

    def to_json(self) -> dict[str, object]:
        """The threshold and its figures as JSON."""

        def shown(figures: dict[str, Estimate]) -> dict[str, object]:
            return {
                k: {"value": v.value, "low": v.low, "high": v.high, "n": v.n, "cases": v.cases}
                for k, v in sorted(figures.items())
            }

        return {
            "selection_threshold": round(self.value, 6),
            "rule": self.rule,
            "target": self.target,
            "fitted_on": self.fitted_on,
            "cases": self.cases,
            "precision_lower_bound": None
            if self.precision_lower_bound is None
            else round(self.precision_lower_bound, 6),
            "dev": shown(self.dev),
            "held_out": shown(self.held_out),
            "held_out_split": self.held_out_split,
        }


def update_calibration_file(
    path: str | os.PathLike[str], values: dict[str, object], comment: str
) -> Path:
    """Set ``values`` in the TOML calibration file at ``path`` under the ``comment`` line (made
    if missing; its other keys are kept)."""
    written = Path(path)
    table: dict[str, object] = {}
    if written.exists():
        try:
            table = tomllib.loads(written.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{written} is not a TOML calibration file: {error}") from None
    table.update(values)
    lines = [comment, *(f"{_toml_key(key)} = {_toml_value(value)}" for key, value in table.items())]
    written.parent.mkdir(parents=True, exist_ok=True)
    written.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written


def _toml_key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else json.dumps(key)


def _toml_value(value: object) -> str:
    """A TOML value of the shapes a calibration holds: strings, numbers, booleans, arrays and
    inline tables of those."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }"
    raise ValueError(f"a calibration file holds no {type(value).__name__} values")


def _pooled(cases: Sequence[CaseResult], threshold: float) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for case in cases:
        a, b, c = case.counts(threshold)
        tp, fp, fn = tp + a, fp + b, fn + c
    return tp, fp, fn


def fit_threshold(
    dev: EvalReport, *, rule: ThresholdRule = "f1", target: float | None = None
) -> FittedThreshold:
    """The selection threshold fitted on ``dev``'s cases (an eval of the dev split).

    ``rule="f1"``: the best pooled F1 (ties: the lowest threshold). ``rule="precision"``: the
    lowest threshold whose precision has a 95 % Wilson lower bound of at least ``target``;
    refused (naming the best bound reached) when none does."""
    cases = [c for c in dev.cases if c.candidates or c.expected]
    if not any(c.candidates for c in cases):
        raise ValueError(
            "no candidates to fit a threshold on: evaluate a thinker (its select_ decisions) "
            "on the dev split first"
        )
    if rule == "precision":
        if target is None or not 0.0 < target < 1.0:
            raise ValueError("rule='precision' needs a target in (0, 1), e.g. target=0.8")
    elif rule != "f1":
        raise ValueError(f"rule must be 'f1' or 'precision', not {rule!r}")
    tried = sorted({c.probability for case in cases for c in case.candidates} | {1.0})
    best: tuple[float, float] | None = None  # (score, threshold)
    best_bound = 0.0
    for threshold in tried:
        tp, fp, fn = _pooled(cases, threshold)
        if rule == "f1":
            try:
                score = m.f1(tp, fp, fn)
            except m.UndefinedMetricError:
                continue
            if best is None or score > best[0]:
                best = (score, threshold)
        else:
            if tp + fp == 0:
                continue
            low, _ = m.wilson(tp, tp + fp)
            best_bound = max(best_bound, low)
            assert target is not None
            if low >= target:
                best = (low, threshold)
                break
    if best is None:
        if rule == "precision":
            raise ValueError(
                f"no threshold reaches a precision lower bound of {target} on {len(cases)} dev "
                f"cases (the best is {best_bound:.3f}): lower the target or add dev cases"
            )
        raise ValueError("F1 is undefined at every threshold: the dev cases expect nothing")
    value = best[1]
    tp, fp, _ = _pooled(cases, value)
    bound = m.wilson(tp, tp + fp)[0] if tp + fp else None
    return FittedThreshold(
        value=value,
        rule=rule,
        target=target,
        fitted_on=dev.dataset,
        cases=len(cases),
        precision_lower_bound=bound,
        dev=run_figures(cases, threshold=value, seed=dev.seed, resamples=dev.resamples),
    )

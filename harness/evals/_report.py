"""What an eval found: each case's answer and labelled decisions, and the figures with intervals.

An :class:`EvalReport` is plain data: it is written as JSON with stable bytes (sorted keys, rounded
numbers, no timings: those go to a separate ``timings`` field that :meth:`EvalReport.to_json`
leaves out unless asked), read back with :func:`load_report`, and compared, gated and rendered
from there.

One concern, past 400 lines: the report's shapes and their JSON both ways, side by side, so a
field is written and read back in one place.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from harness.decision._internal import indented_json, load_json
from harness.evals._rows import DatasetError
from harness.evals.metrics import Bin, Estimate

__all__ = [
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "Candidate",
    "CaseResult",
    "EvalReport",
    "Placed",
    "ScoredDecision",
    "load_report",
    "report_role_of",
    "report_text",
]

REPORT_FORMAT: Final = "harness-eval"
REPORT_VERSION: Final = 1
DIGITS: Final = 6
"""Decimals every number of a report is rounded to (stable bytes across platforms)."""

Kind = Literal["choice", "noul", "score"]
Status = Literal["completed", "failed", "invalid"]


def report_role_of(question_id: str) -> str:
    """A question's role in a report: ``next``, ``<tool>_input``, ``select`` (every
    ``select_<ref>``), or for a pack's own questions the question id. A report keeps each
    ``<tool>_input`` apart, to show which tool's input is chosen badly; the calibration role
    (:func:`harness.catalog.role_of`) merges them into ``input``, since one map serves them all."""
    if question_id.startswith("select_"):
        return "select"
    return question_id


@attrs.frozen
class ScoredDecision:
    """One labelled decision: the distribution answered over ``options`` (a noul's options are
    ``("yes", "no")``), the index the model chose, the index of the right option.

    A noul is chosen "yes" when its probability reaches ``threshold`` (the thinker's selection
    threshold for ``select_`` questions, 0.5 for a pack's nouls).
    """

    case: str
    question: str
    kind: Kind
    options: tuple[str, ...]
    probabilities: tuple[float, ...]
    chosen: int
    label: int
    threshold: float | None = None

    @property
    def role(self) -> str:
        """The question's role (see :func:`report_role_of`)."""
        return report_role_of(self.question)

    @property
    def correct(self) -> bool:
        """Whether the chosen option is the right one."""
        return self.chosen == self.label

    @property
    def confidence(self) -> float:
        """What a reliability diagram bins: a noul's yes-probability, else the probability of
        the chosen option."""
        return self.probabilities[0] if self.kind == "noul" else self.probabilities[self.chosen]

    @property
    def outcome(self) -> bool:
        """What the confidence is checked against: a noul's truth, else whether it was right."""
        return self.label == 0 if self.kind == "noul" else self.correct

    def to_json(self) -> dict[str, object]:
        return {
            "question": self.question,
            "kind": self.kind,
            "options": list(self.options),
            "probabilities": [round(p, DIGITS) for p in self.probabilities],
            "chosen": self.chosen,
            "label": self.label,
            "threshold": self.threshold,
        }


@attrs.frozen
class Candidate:
    """An output candidate of a run: its ref, its value (JSON), its key (as text), its selection
    probability and whether its key is one of the case's expected keys."""

    ref: str
    value: object
    key: str
    probability: float
    expected: bool

    def to_json(self) -> dict[str, object]:
        return {
            "ref": self.ref,
            "value": self.value,
            "key": self.key,
            "probability": round(self.probability, DIGITS),
            "expected": self.expected,
        }


@attrs.frozen
class Placed:
    """Where one choice's answer sat among its options: the question's role, how many options
    it listed, the index chosen and, when the choice is labelled (a pack's), the index of the
    right option. What an eval's position figures count (``<role>.first_chosen``)."""

    role: str
    options: int
    chosen: int
    right: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "role": self.role,
            "options": self.options,
            "chosen": self.chosen,
            "right": self.right,
        }


@attrs.frozen
class CaseResult:
    """One case of an eval: its status, the expected keys, the answered items and keys, the
    output candidates (runs), the labelled decisions and the record file (runs, if kept)."""

    name: str
    tags: tuple[str, ...]
    status: Status
    expected: tuple[str, ...]
    answered: tuple[str, ...]
    candidates: tuple[Candidate, ...] = ()
    decisions: tuple[ScoredDecision, ...] = ()
    record: str | None = None
    error: str | None = None
    placed: tuple[Placed, ...] = ()
    """Each choice of two options or more the case asked, with the place of what was chosen."""

    def counts(self, threshold: float | None = None) -> tuple[int, int, int]:
        """(true positives, false positives, false negatives) of the answer; at ``threshold``
        (re-selecting the candidates) when given, else as answered."""
        if threshold is None:
            answered = set(self.answered)
        else:
            answered = {c.key for c in self.candidates if c.probability >= threshold}
        expected = set(self.expected)
        return len(answered & expected), len(answered - expected), len(expected - answered)

    def exact(self, threshold: float | None = None) -> bool:
        """Whether the answer (at ``threshold`` if given) holds exactly the expected keys."""
        _, fp, fn = self.counts(threshold)
        return fp == 0 and fn == 0

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "tags": list(self.tags),
            "status": self.status,
            "expected": list(self.expected),
            "answered": list(self.answered),
            "candidates": [c.to_json() for c in self.candidates],
            "decisions": [d.to_json() for d in self.decisions],
            "record": self.record,
            "error": self.error,
            "placed": [p.to_json() for p in self.placed],
        }


@attrs.frozen
class EvalReport:
    """An eval of ``subject`` (a thinker's ``MODULE:CLASS``, or a pack) on ``model`` over the
    cases of ``dataset``: per case results and the figures, each an :class:`Estimate` with its
    95 % bootstrap interval resampled by case.

    ``metrics`` are keyed ``recall``, ``precision``, ``f1``, ``exact_match`` (runs) and
    ``<role>.<figure>`` per question role (``select.auc``, ``next.accuracy``, ...);
    ``baselines`` holds the same keys for ``uniform`` and ``answer_key``; ``reliability`` the
    bins of each role's diagram (``<role>.width`` / ``<role>.mass``). ``threshold`` is the
    selection threshold the answers were taken at, ``threshold_source`` where it came from (the
    entry's fitted value, the thinker's constructor, the default); ``split`` names the cases' split
    (``all``, ``dev``, ``held-out``). ``timings`` (seconds) never enter the stable JSON.
    """

    subject: str
    dataset: str
    model: str
    threshold: float | None
    split: str
    cases: tuple[CaseResult, ...]
    metrics: Mapping[str, Estimate]
    baselines: Mapping[str, Mapping[str, Estimate]] = attrs.field(factory=dict)
    reliability: Mapping[str, tuple[Bin, ...]] = attrs.field(factory=dict)
    seed: int = 0
    resamples: int = 1000
    threshold_source: str | None = None
    timings: Mapping[str, float] = attrs.field(factory=dict, eq=False)

    def metric(self, name: str) -> Estimate:
        """The figure ``name``; an unknown name is refused listing the known ones."""
        try:
            return self.metrics[name]
        except KeyError:
            known = ", ".join(sorted(self.metrics)) or "none"
            raise KeyError(f"the report has no figure {name!r}; it has {known}") from None

    def case(self, name: str) -> CaseResult:
        """The result of case ``name``."""
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"the report has no case {name!r}")

    @property
    def decisions(self) -> tuple[ScoredDecision, ...]:
        """Every labelled decision of every case, in case order."""
        return tuple(d for case in self.cases for d in case.decisions)

    @property
    def failed(self) -> tuple[CaseResult, ...]:
        """The cases whose run did not complete (failed, or an input that was not valid): left
        out of every figure, since a failed run is never a right answer."""
        return tuple(case for case in self.cases if case.status != "completed")

    def failed_line(self) -> str | None:
        """``"3 of 15 cases did not complete (left out of the figures); the first, c2:
        <error>"``, or ``None`` when every case completed."""
        failed = self.failed
        if not failed:
            return None
        first = failed[0]
        return (
            f"{len(failed)} of {len(self.cases)} cases did not complete (left out of the "
            f"figures); the first, {first.name}: {first.error or first.status}"
        )

    def to_json(self, *, timings: bool = False) -> dict[str, object]:
        """The report as a JSON object; ``timings`` adds the (unstable) timings field."""
        data: dict[str, object] = {
            "format": REPORT_FORMAT,
            "version": REPORT_VERSION,
            "subject": self.subject,
            "dataset": self.dataset,
            "model": self.model,
            "threshold": self.threshold,
            "threshold_source": self.threshold_source,
            "split": self.split,
            "seed": self.seed,
            "resamples": self.resamples,
            "metrics": {k: _estimate_json(v) for k, v in self.metrics.items()},
            "baselines": {
                name: {k: _estimate_json(v) for k, v in figures.items()}
                for name, figures in self.baselines.items()
            },
            "reliability": {
                k: [_bin_json(b) for b in bins] for k, bins in self.reliability.items()
            },
            "cases": [case.to_json() for case in self.cases],
        }
        if timings:
            data["timings"] = {k: round(v, 3) for k, v in self.timings.items()}
        return data

    def dumps(self, *, timings: bool = False) -> str:
        """The JSON text: sorted keys, numbers rounded, one trailing newline (stable bytes)."""
        return report_text(self.to_json(timings=timings))

    def write_json(self, path: str | os.PathLike[str], *, timings: bool = True) -> Path:
        """Write the report (with its timings field unless ``timings=False``); the path."""
        written = Path(path)
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(self.dumps(timings=timings), encoding="utf-8")
        return written


def report_text(data: Mapping[str, object]) -> str:
    """A report's JSON text as ``report.json`` holds it: sorted keys, one-space indents,
    non-ASCII kept, NaN refused, one trailing newline (stable bytes)."""
    return indented_json(data, indent=1, sort_keys=True) + "\n"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _estimate_json(estimate: Estimate) -> dict[str, object]:
    return {
        "value": _round(estimate.value),
        "low": _round(estimate.low),
        "high": _round(estimate.high),
        "n": estimate.n,
        "cases": estimate.cases,
        "undefined": estimate.undefined,
        "bias": _round(estimate.bias),
        "note": estimate.note,
    }


def _bin_json(b: Bin) -> dict[str, object]:
    return {
        "low": round(b.low, DIGITS),
        "high": round(b.high, DIGITS),
        "count": b.count,
        "mean_probability": round(b.mean_probability, DIGITS),
        "frequency": round(b.frequency, DIGITS),
    }


# -- reading --------------------------------------------------------------------------------


def load_report(path: str | os.PathLike[str]) -> EvalReport:
    """Read a report written by :meth:`EvalReport.write_json` (or ``harness eval --out``)."""
    source = Path(path)
    if source.is_dir():
        source = source / "report.json"
    try:
        data = load_json(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(
            f"no eval report {source}: give a report.json or the --out folder"
        ) from None
    except (OSError, ValueError) as error:  # unreadable, not UTF-8, not JSON
        raise DatasetError(f"{source} is not an eval report ({type(error).__name__})") from None
    try:
        return report_from_json(data)
    except (KeyError, TypeError, ValueError) as error:
        raise DatasetError(f"{source} is not a readable eval report: {error}") from None


def report_from_json(data: object) -> EvalReport:
    """Build a report from :meth:`EvalReport.to_json`'s shape."""
    if not isinstance(data, Mapping) or data.get("format") != REPORT_FORMAT:
        raise ValueError(f"its 'format' is not {REPORT_FORMAT!r}")
    if data.get("version") != REPORT_VERSION:
        raise ValueError(f"version {data.get('version')!r} is not {REPORT_VERSION}")
    return EvalReport(
        subject=str(data["subject"]),
        dataset=str(data["dataset"]),
        model=str(data["model"]),
        threshold=data["threshold"],
        threshold_source=None
        if data.get("threshold_source") is None
        else str(data["threshold_source"]),
        split=str(data["split"]),
        seed=int(data["seed"]),
        resamples=int(data["resamples"]),
        metrics={k: _estimate(v) for k, v in data["metrics"].items()},
        baselines={
            name: {k: _estimate(v) for k, v in figures.items()}
            for name, figures in data["baselines"].items()
        },
        reliability={k: tuple(Bin(**b) for b in bins) for k, bins in data["reliability"].items()},
        cases=tuple(_case(c) for c in data["cases"]),
        timings=dict(data.get("timings") or {}),
    )


def _estimate(data: Mapping[str, object]) -> Estimate:
    def number(key: str) -> float | None:
        value = data.get(key)
        return None if value is None else float(value)  # type: ignore[arg-type]  # JSON number

    undefined = data.get("undefined")
    return Estimate(
        value=number("value"),
        low=number("low"),
        high=number("high"),
        n=int(data["n"]),  # type: ignore[call-overload]  # a JSON integer
        cases=int(data["cases"]),  # type: ignore[call-overload]  # a JSON integer
        undefined=None if undefined is None else str(undefined),
        bias=number("bias"),
    )


def _case(data: Mapping[str, object]) -> CaseResult:
    candidates: Sequence[Mapping[str, object]] = data.get("candidates") or []  # type: ignore[assignment]  # JSON array of objects
    decisions: Sequence[Mapping[str, object]] = data.get("decisions") or []  # type: ignore[assignment]  # JSON array of objects
    return CaseResult(
        name=str(data["name"]),
        tags=tuple(data["tags"]),  # type: ignore[arg-type]  # JSON array of strings
        status=data["status"],  # type: ignore[arg-type]  # one of the statuses written
        expected=tuple(data["expected"]),  # type: ignore[arg-type]  # JSON array of strings
        answered=tuple(data["answered"]),  # type: ignore[arg-type]  # JSON array of strings
        candidates=tuple(
            Candidate(
                ref=str(c["ref"]),
                value=c["value"],
                key=str(c["key"]),
                probability=float(c["probability"]),  # type: ignore[arg-type]  # JSON number
                expected=bool(c["expected"]),
            )
            for c in candidates
        ),
        decisions=tuple(
            ScoredDecision(
                case=str(data["name"]),
                question=str(d["question"]),
                kind=d["kind"],  # type: ignore[arg-type]  # one of the kinds written
                options=tuple(d["options"]),  # type: ignore[arg-type]  # JSON array of strings
                probabilities=tuple(float(p) for p in d["probabilities"]),  # type: ignore[attr-defined]  # JSON array of numbers
                chosen=int(d["chosen"]),  # type: ignore[call-overload]  # a JSON integer
                label=int(d["label"]),  # type: ignore[call-overload]  # a JSON integer
                threshold=None if d.get("threshold") is None else float(d["threshold"]),  # type: ignore[arg-type]  # JSON number
            )
            for d in decisions
        ),
        record=None if data.get("record") is None else str(data["record"]),
        error=None if data.get("error") is None else str(data["error"]),
        placed=tuple(_placed(p) for p in data.get("placed") or []),  # type: ignore[attr-defined]  # JSON array of objects
    )


def _placed(data: Mapping[str, object]) -> Placed:
    right = data.get("right")
    return Placed(
        role=str(data["role"]),
        options=int(data["options"]),  # type: ignore[call-overload]  # a JSON integer
        chosen=int(data["chosen"]),  # type: ignore[call-overload]  # a JSON integer
        right=None if right is None else int(right),  # type: ignore[call-overload]  # a JSON integer
    )

"""Two evals of the same cases side by side: what changed, what flipped, and is it significant.

* per case: the answered keys added and removed;
* per decision (a run's candidate, paired by its key; a pack's question, by its id): a flip when
  the answer chosen at each run's own threshold differs, and the probability shift;
* an exact McNemar test on per-case correctness (the exact answer for runs, each decision for
  packs);
* cases with a decision within ``margin`` of the threshold in either eval, flagged: such a
  decision may flip on noise alone.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from harness.evals import metrics as m
from harness.evals._report import CaseResult, EvalReport

__all__ = ["CaseChange", "Comparison", "DecisionShift", "compare"]

NEAR_MARGIN = 0.05
"""How close to the threshold a probability is "near" it."""


@attrs.frozen
class CaseChange:
    """A case whose answer changed: the keys B answered that A did not, and the reverse."""

    case: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


@attrs.frozen
class DecisionShift:
    """One decision in both evals: its yes (or chosen) probability in each, what each chose."""

    case: str
    decision: str
    p_a: float
    p_b: float
    chosen_a: str
    chosen_b: str
    near: bool

    @property
    def flipped(self) -> bool:
        """Whether the two evals chose differently."""
        return self.chosen_a != self.chosen_b

    @property
    def shift(self) -> float:
        """B's probability minus A's."""
        return self.p_b - self.p_a


@attrs.frozen
class Comparison:
    """A (the baseline) against B (the candidate)."""

    a: EvalReport
    b: EvalReport
    changes: tuple[CaseChange, ...]
    shifts: tuple[DecisionShift, ...]
    only_a_right: int
    only_b_right: int
    mcnemar_p: float
    near: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def flips(self) -> tuple[DecisionShift, ...]:
        """The decisions the two evals answered differently."""
        return tuple(s for s in self.shifts if s.flipped)

    def to_json(self) -> dict[str, object]:
        """The comparison as JSON (stable: sorted, rounded)."""
        return {
            "a": {"subject": self.a.subject, "model": self.a.model, "dataset": self.a.dataset},
            "b": {"subject": self.b.subject, "model": self.b.model, "dataset": self.b.dataset},
            "changes": [
                {"case": c.case, "added": list(c.added), "removed": list(c.removed)}
                for c in self.changes
            ],
            "flips": [
                {
                    "case": s.case,
                    "decision": s.decision,
                    "p_a": round(s.p_a, 6),
                    "p_b": round(s.p_b, 6),
                    "chosen_a": s.chosen_a,
                    "chosen_b": s.chosen_b,
                    "near": s.near,
                }
                for s in self.flips
            ],
            "largest_shift": max((abs(s.shift) for s in self.shifts), default=0.0),
            "mcnemar": {
                "only_a_right": self.only_a_right,
                "only_b_right": self.only_b_right,
                "p": round(self.mcnemar_p, 6),
            },
            "near_threshold": list(self.near),
            "missing": list(self.missing),
        }


def _decisions(case: CaseResult, threshold: float | None) -> Iterator[tuple[str, float, str]]:
    """(decision id, probability, chosen) of each labelled decision of ``case``."""
    if case.candidates:
        cut = 0.5 if threshold is None else threshold
        for c in case.candidates:
            yield f"select {c.key}", c.probability, "yes" if c.probability >= cut else "no"
        return
    for d in case.decisions:
        yield d.question, d.confidence, d.options[d.chosen]


def _correct(case: CaseResult, runs: bool) -> bool:
    if runs:
        return case.status == "completed" and case.exact()
    return all(d.correct for d in case.decisions)


def compare(a: EvalReport, b: EvalReport, *, margin: float = NEAR_MARGIN) -> Comparison:
    """Compare eval ``b`` against eval ``a`` case by case (cases paired by name)."""
    by_name = {case.name: case for case in b.cases}
    missing = tuple(sorted({c.name for c in a.cases} ^ set(by_name)))
    runs = any(c.candidates or c.expected for c in a.cases)
    changes: list[CaseChange] = []
    shifts: list[DecisionShift] = []
    near: list[str] = []
    only_a = only_b = 0
    for case_a in a.cases:
        case_b = by_name.get(case_a.name)
        if case_b is None:
            continue
        added = tuple(k for k in case_b.answered if k not in case_a.answered)
        removed = tuple(k for k in case_a.answered if k not in case_b.answered)
        if added or removed:
            changes.append(CaseChange(case_a.name, added, removed))
        right_a, right_b = _correct(case_a, runs), _correct(case_b, runs)
        only_a += right_a and not right_b
        only_b += right_b and not right_a
        seen_b = {d: (p, chosen) for d, p, chosen in _decisions(case_b, b.threshold)}
        flagged = False
        for decision, p_a, chosen_a in _decisions(case_a, a.threshold):
            if decision not in seen_b:
                continue
            p_b, chosen_b = seen_b[decision]
            close = False
            for p, cut in ((p_a, a.threshold), (p_b, b.threshold)):
                if cut is not None and abs(p - cut) <= margin:
                    close = True
            flagged = flagged or close
            shifts.append(DecisionShift(case_a.name, decision, p_a, p_b, chosen_a, chosen_b, close))
        if flagged:
            near.append(case_a.name)
    return Comparison(
        a=a,
        b=b,
        changes=tuple(changes),
        shifts=tuple(shifts),
        only_a_right=only_a,
        only_b_right=only_b,
        mcnemar_p=m.mcnemar(only_a, only_b),
        near=tuple(near),
        missing=missing,
    )

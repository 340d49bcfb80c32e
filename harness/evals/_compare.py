"""Two evals of the same cases side by side: what changed, what flipped, and is it significant.

* per case: the answered keys added and removed;
* per decision (a run's candidate, paired by its key; a pack's question, by its id): a flip when
  the answer changed (a candidate kept in one eval and not in the other, dropped there or never
  reached; another option chosen), and the probability shift. So every key added to or removed
  from an answer is a flip, and ``--max-flips 0`` fails whenever an answer changed;
* an exact McNemar test on per-case correctness (the exact answer for runs, each decision for
  packs);
* cases with a decision within ``margin`` of the threshold in either eval, flagged: such a
  decision may flip on noise alone.
"""

from __future__ import annotations

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


ABSENT = "absent"
"""What an eval chose for a decision it never asked (a candidate its run did not reach)."""


@attrs.frozen
class DecisionShift:
    """One decision of either eval: its yes (or chosen) probability in each, what each chose
    (``"absent"`` with probability ``None`` where that eval never asked it)."""

    case: str
    decision: str
    p_a: float | None
    p_b: float | None
    chosen_a: str
    chosen_b: str
    near: bool

    @property
    def flipped(self) -> bool:
        """Whether the answer changed: for a candidate, kept in one eval and not in the other
        (dropped there, or never reached); for a pack's question, another option chosen."""
        if self.decision.startswith("select "):
            return (self.chosen_a == "yes") != (self.chosen_b == "yes")
        return self.chosen_a != self.chosen_b

    @property
    def shift(self) -> float | None:
        """B's probability minus A's (``None`` when one eval never asked it)."""
        if self.p_a is None or self.p_b is None:
            return None
        return self.p_b - self.p_a

    def line(self) -> str:
        """``case / decision: yes 0.800 -> absent``."""

        def shown(chosen: str, p: float | None) -> str:
            return chosen if p is None else f"{chosen} {p:.3f}"

        return (
            f"{self.case} / {self.decision}: {shown(self.chosen_a, self.p_a)} -> "
            f"{shown(self.chosen_b, self.p_b)}"
        )


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

    @property
    def largest(self) -> DecisionShift | None:
        """The decision whose probability moved most, or ``None`` when none moved."""
        moved = [s for s in self.shifts if s.shift]
        return max(moved, key=lambda s: abs(s.shift or 0.0), default=None)

    def _deltas(self) -> list[float]:
        return [s.shift for s in self.shifts if s.shift is not None]

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
                    "p_a": None if s.p_a is None else round(s.p_a, 6),
                    "p_b": None if s.p_b is None else round(s.p_b, 6),
                    "chosen_a": s.chosen_a,
                    "chosen_b": s.chosen_b,
                    "near": s.near,
                }
                for s in self.flips
            ],
            "largest_shift": max((abs(d) for d in self._deltas()), default=0.0),
            "mcnemar": {
                "only_a_right": self.only_a_right,
                "only_b_right": self.only_b_right,
                "p": round(self.mcnemar_p, 6),
            },
            "near_threshold": list(self.near),
            "missing": list(self.missing),
        }


def _decisions(case: CaseResult) -> dict[str, tuple[float | None, str]]:
    """Each decision of ``case`` by id: (probability, chosen). A run's decisions are its
    candidates by key, ``"yes"`` when the key is in the answer, else ``"no"``; a pack's are its
    labelled questions."""
    if case.candidates or case.expected:
        found: dict[str, tuple[float | None, str]] = {}
        for c in case.candidates:
            seen = found.get(f"select {c.key}", (None, ""))[0]
            p = c.probability if seen is None else max(seen, c.probability)
            found[f"select {c.key}"] = (p, "yes" if c.key in case.answered else "no")
        for key in case.answered:
            found.setdefault(f"select {key}", (None, "yes"))
        return found
    return {d.question: (d.confidence, d.options[d.chosen]) for d in case.decisions}


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
        seen_a, seen_b = _decisions(case_a), _decisions(case_b)
        flagged = False
        for decision in [*seen_a, *(d for d in seen_b if d not in seen_a)]:
            p_a, chosen_a = seen_a.get(decision, (None, ABSENT))
            p_b, chosen_b = seen_b.get(decision, (None, ABSENT))
            close = any(
                p is not None and cut is not None and abs(p - cut) <= margin
                for p, cut in ((p_a, a.threshold), (p_b, b.threshold))
            )
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

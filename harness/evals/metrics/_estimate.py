"""A figure with its interval (:class:`Estimate`), and the error of a figure with no value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from harness.errors import HarnessError

__all__ = ["INSIDE_TOLERANCE", "Estimate", "UndefinedMetricError", "reason_of"]

INSIDE_TOLERANCE: Final = 1e-9
"""How far outside its interval an estimate may lie and still count as inside (rounding)."""


class UndefinedMetricError(HarnessError, ValueError):
    """A figure that has no value on its input: the message says which and why."""


def reason_of(undefined: str) -> str:
    """The why of an undefined figure's message (``"recall is undefined: no item was
    expected"`` -> ``"no item was expected"``)."""
    head, found, why = undefined.partition(" is undefined: ")
    return why if found and head else undefined


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95 % interval, or ``value is None`` with ``undefined`` saying why.

    ``n`` counts the units it was computed on (decisions, or cases for run-level figures),
    ``cases`` the cases they came from (the unit the bootstrap resamples). ``low``/``high`` are
    ``None`` when the interval is undefined (one case, or the statistic undefined on resamples),
    ``undefined`` then saying why. ``bias`` is the bootstrap's estimate of the figure's bias:
    the mean of the figure over the resamples minus its value (``None`` without an interval).

    The interval is the percentile bootstrap's: the middle 95 % of the figure over resamples.
    For a biased figure (an ECE: noise only widens its gaps) that spread can lie wholly above
    the value; :attr:`note` then says so with the bias, and every view of the estimate shows
    the note (a bias-correcting interval does not help there: without its acceleration term
    the BCa and the basic interval hold the value under the same condition as the percentile
    one, that at least 2.5 % of the resampled figures lie on each side of it).
    """

    value: float | None
    low: float | None
    high: float | None
    n: int
    cases: int
    undefined: str | None = None
    bias: float | None = None

    @property
    def defined(self) -> bool:
        """Whether the figure has a value."""
        return self.value is not None

    @property
    def note(self) -> str | None:
        """Why the value lies outside its interval, when it does (else ``None``)."""
        if self.value is None or self.low is None or self.high is None:
            return None
        if self.low - INSIDE_TOLERANCE <= self.value <= self.high + INSIDE_TOLERANCE:
            return None
        side = "below" if self.value < self.low else "above"
        bias = 0.0 if self.bias is None else self.bias
        return (
            f"estimate {side} its interval: resampled, the figure averages {bias:+.3f} from it "
            "(the bootstrap's bias: a biased figure), so the interval is the figure's spread "
            "under resampling, not a bound around the estimate"
        )

    def __str__(self) -> str:
        if self.value is None:
            return f"undefined ({reason_of(self.undefined or 'no value')})"
        if self.low is None or self.high is None:
            return f"{self.value:.3f} [interval undefined: {self.undefined}] (n={self.n})"
        note = self.note
        shown = f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] (n={self.n}"
        return f"{shown}; {note})" if note else f"{shown})"

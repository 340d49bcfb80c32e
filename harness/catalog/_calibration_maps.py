"""The calibration's maps, and each applied to one answer with the least work.

A map is a temperature (choices and scores), a Platt map or an isotonic curve (nouls); see
:mod:`harness.catalog._calibration` for what each does and how an entry holds them.
:func:`applier` binds a map's constants once (when the entry's calibration is made) into the
function that maps an answer: per answer it does the arithmetic and makes the answer, nothing
else. Its values are bit for bit those of the careful path (the public constructors over
:meth:`TemperatureMap.distribution` and :meth:`PlattMap.probability`):
``tests/catalog/test_calibration_maps.py`` holds the two together on any map and any answer.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from typing import Final, Literal, TypeAlias

import attrs

from harness.decision import (
    Answer,
    ChoiceAnswer,
    NoulAnswer,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)
from harness.decision._internal import trusted_choice, trusted_noul, trusted_score

__all__ = [
    "EPSILON",
    "Applier",
    "IsotonicMap",
    "PlattMap",
    "RoleMap",
    "TemperatureMap",
    "applier",
    "logit",
    "sigmoid",
]

EPSILON: Final = 1e-6
"""Probabilities are clipped to [EPSILON, 1 - EPSILON] before a logarithm."""

_log: Final = math.log
_exp: Final = math.exp
_NEGATIVE_INFINITY: Final = -math.inf


def logit(p: float) -> float:
    """``log(p / (1 - p))`` with ``p`` clipped away from 0 and 1."""
    p = min(1.0 - EPSILON, max(EPSILON, p))
    return math.log(p / (1.0 - p))


def sigmoid(z: float) -> float:
    """``1 / (1 + exp(-z))``, stable for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _positive(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"temperature must be a finite number > 0, not {value!r}")


def _finite(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{attribute.name} must be a finite number, not {value!r}")


@attrs.frozen
class TemperatureMap:
    """``softmax(log p / temperature)`` over a choice's options or a score's levels."""

    method: Literal["temperature"] = attrs.field(default="temperature", init=False)
    temperature: float = attrs.field(default=1.0, converter=float, validator=_positive)

    def distribution(self, probabilities: list[float]) -> list[float]:
        """The mapped distribution (same order, sums to 1)."""
        mapped = _softmax(probabilities, self.temperature)
        if mapped is None:  # exp(-inf - -inf) is NaN: every value, as the reference computes
            return [math.nan] * len(probabilities)
        return _divided(*mapped)

    def to_table(self) -> dict[str, object]:
        """The map as a catalog holds it."""
        return {"method": self.method, "temperature": self.temperature}


def _softmax(
    probabilities: Iterable[float], temperature: float
) -> tuple[list[float], float] | None:
    """The weights of ``softmax(log max(EPSILON, p) / temperature)`` and their total (the
    distribution is each weight divided by the total), or ``None`` when every logarithm is
    ``-inf`` (a temperature so small ``log p / temperature`` overflows; the reference's softmax
    is NaN throughout).

    Otherwise, for probabilities in [0, 1] (floats), each ``weight / total`` is a ``float`` in
    [0, 1]: each log is ``<= 0`` (finite or ``-inf``, never NaN) and the top one finite, so each
    weight ``exp(log - top)`` is in [0, 1] and the top's is ``exp(0.0)``, exactly 1; the total
    is ``>= 1``. The largest value is therefore ``1.0 / total`` (division by a positive total
    keeps the order). The operations are the careful path's (comprehensions, ``max`` and the
    public constructors: ``tests/catalog/test_calibration_maps.py``), in its order:
    ``max(EPSILON, p)`` and ``max(logs)`` as comparisons that pick the same values, ``sum``
    itself; so the values are bit-identical to it."""
    # loops, not comprehensions, and comparisons, not max(): in Python 3.11 each comprehension
    # is a function made and called, and max() parses its arguments as keywords
    logs: list[float] = []
    top = _NEGATIVE_INFINITY
    for p in probabilities:
        value = _log(p if p > EPSILON else EPSILON) / temperature
        logs.append(value)
        if value > top:  # the first largest, as max() picks it
            top = value
    if top == _NEGATIVE_INFINITY:  # every log -inf, or no probabilities at all
        max(logs)  # none: the reference's ValueError, as always
        return None
    weights: list[float] = []
    for value in logs:
        weights.append(_exp(value - top))
    return weights, sum(weights)


def _divided(weights: list[float], total: float) -> list[float]:
    values: list[float] = []
    for weight in weights:
        values.append(weight / total)
    return values


@attrs.frozen
class PlattMap:
    """``sigmoid(a * logit(p) + b)`` on a noul's probability."""

    method: Literal["platt"] = attrs.field(default="platt", init=False)
    a: float = attrs.field(default=1.0, converter=float, validator=_finite)
    b: float = attrs.field(default=0.0, converter=float, validator=_finite)

    def probability(self, p: float) -> float:
        """The mapped probability."""
        return sigmoid(self.a * logit(p) + self.b)

    def to_table(self) -> dict[str, object]:
        """The map as a catalog holds it."""
        return {"method": self.method, "a": self.a, "b": self.b}


def _points(value: object) -> tuple[float, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"isotonic points must be a list of numbers, not {type(value).__name__}")
    points: list[float] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(item):
            raise ValueError(f"isotonic points must be finite numbers, not {item!r}")
        points.append(float(item))
    return tuple(points)


@attrs.frozen
class IsotonicMap:
    """A non-decreasing curve through ``x -> y`` (``x`` increasing, ``y`` in [0, 1]), linear
    between the points and flat beyond the ends."""

    method: Literal["isotonic"] = attrs.field(default="isotonic", init=False)
    x: tuple[float, ...] = attrs.field(default=(0.0, 1.0), converter=_points)
    y: tuple[float, ...] = attrs.field(default=(0.0, 1.0), converter=_points)

    def __attrs_post_init__(self) -> None:
        if len(self.x) != len(self.y) or not self.x:
            raise ValueError(
                f"an isotonic map needs as many x as y points, at least one "
                f"({len(self.x)} x, {len(self.y)} y)"
            )
        if any(b <= a for a, b in zip(self.x, self.x[1:], strict=False)):
            raise ValueError("an isotonic map's x points must increase strictly")
        if any(b < a for a, b in zip(self.y, self.y[1:], strict=False)):
            raise ValueError("an isotonic map's y points must not decrease")
        if not all(0.0 <= v <= 1.0 for v in self.y):
            raise ValueError("an isotonic map's y points are probabilities, in [0, 1]")

    def probability(self, p: float) -> float:
        """The mapped probability."""
        if p <= self.x[0]:
            return self.y[0]
        if p >= self.x[-1]:
            return self.y[-1]
        right = bisect.bisect_right(self.x, p)
        x0, x1 = self.x[right - 1], self.x[right]
        y0, y1 = self.y[right - 1], self.y[right]
        return y0 + (y1 - y0) * (p - x0) / (x1 - x0)

    def to_table(self) -> dict[str, object]:
        """The map as a catalog holds it."""
        return {"method": self.method, "x": list(self.x), "y": list(self.y)}


RoleMap: TypeAlias = TemperatureMap | PlattMap | IsotonicMap
"""The map of one question role."""


Applier: TypeAlias = Callable[[Answer], Answer]
"""A map bound to its constants: an answer in, the mapped answer out (other kinds as they are)."""


def applier(found: RoleMap) -> Applier:
    """``found`` as the function that maps one answer: its constants bound once, so a call does
    only the arithmetic of that answer and makes it (by the trusted constructors where the values
    are proved to be what they owe, else by the public ones, as :func:`_mapped` does)."""
    if isinstance(found, PlattMap):
        return _platt(found.a, found.b)
    if isinstance(found, TemperatureMap):
        return _temperature(found)
    return lambda answer: _mapped(found, answer)


def _platt(a: float, b: float) -> Applier:
    low, high = EPSILON, 1.0 - EPSILON

    def platt(answer: Answer) -> Answer:
        if not isinstance(answer, NoulAnswer):
            return answer
        # logit, sigmoid and the clamp of PlattMap.probability and _mapped, in their order
        p = answer.probability
        p = p if p > low else low  # max(EPSILON, p)
        p = p if p < high else high  # min(1 - EPSILON, p)
        z = a * _log(p / (1.0 - p)) + b
        if z >= 0:
            value = 1.0 / (1.0 + _exp(-z))
        else:
            e = _exp(z)
            value = e / (1.0 + e)
        value = value if value > 0.0 else 0.0  # NaN fails ``> 0.0``: 0.0
        value = value if value < 1.0 else 1.0
        return trusted_noul(value)  # a float in [0, 1]: every step above is float arithmetic

    return platt


def _temperature(found: TemperatureMap) -> Applier:
    temperature = found.temperature
    clipped = _log(EPSILON) / temperature  # the log of any p <= EPSILON

    def mapped(answer: Answer) -> Answer:
        if not isinstance(answer, ChoiceAnswer):
            return _mapped(found, answer) if isinstance(answer, ScoreAnswer) else answer
        # _softmax, _divided and choice_confidence written out in one frame (the common case
        # of a shipped calibration): the values are proved to be what trusted_choice owes
        options = answer.probabilities.items()
        logs: list[float] = []
        top = _NEGATIVE_INFINITY
        for _, p in options:
            value = _log(p) / temperature if p > EPSILON else clipped
            logs.append(value)
            if value > top:  # the first largest, as max() picks it
                top = value
        if top == _NEGATIVE_INFINITY:  # NaN throughout: the public constructor refuses
            return _checked(found, answer)
        weights: list[float] = []
        for value in logs:
            weights.append(_exp(value - top))
        total = sum(weights)
        # the same options (str keys, each once) and choice; values floats in [0, 1]
        probabilities: dict[str, float] = {}
        for (option, _), weight in zip(options, weights):  # noqa: B905  # as many
            probabilities[option] = weight / total
        count = len(weights)
        if count == 1:
            confidence = 1.0
        else:  # choice_confidence(values) written out; its max(values) is 1.0 / total
            uniform = 1 / count
            confidence = (1.0 / total - uniform) / (1 - uniform)
            confidence = confidence if confidence > 0.0 else 0.0
            confidence = confidence if confidence < 1.0 else 1.0
        return trusted_choice(answer.choice, probabilities, confidence)

    return mapped


def _mapped(found: RoleMap, answer: Answer) -> Answer:
    """``answer`` through ``found``: the answers the public constructors would make from the
    mapped values, made by the trusted constructors where the values are proved to be what
    those owe (see :func:`_softmax`; a noul's value is clamped), else by the public ones."""
    if isinstance(found, TemperatureMap):
        if isinstance(answer, ScoreAnswer):
            mapped = _softmax(answer.probabilities, found.temperature)
            if mapped is None:
                return _checked(found, answer)
            values = _divided(*mapped)
            top = len(values) - 1
            score = min(float(top), max(0.0, sum([i * p for i, p in enumerate(values)])))
            return trusted_score(score, answer.levels, tuple(values), score_confidence(values))
        if isinstance(answer, ChoiceAnswer):
            return _temperature(found)(answer)
        return answer
    if isinstance(answer, NoulAnswer):
        # min(1.0, max(0.0, ...)) with comparisons: any float comes out a float in [0, 1]
        # (NaN fails ``> 0.0``: 0.0)
        value = found.probability(answer.probability)
        value = value if value > 0.0 else 0.0
        value = value if value < 1.0 else 1.0
        return trusted_noul(value) if type(value) is float else NoulAnswer(value)
    return answer


def _checked(found: TemperatureMap, answer: ChoiceAnswer | ScoreAnswer) -> Answer:
    """``answer`` through ``found`` by the public constructors (which refuse a NaN)."""
    if isinstance(answer, ChoiceAnswer):
        options = list(answer.probabilities)
        values = found.distribution(list(answer.probabilities.values()))
        probabilities = dict(zip(options, values, strict=True))
        return ChoiceAnswer(answer.choice, probabilities, choice_confidence(values))
    values = found.distribution(list(answer.probabilities))
    top = len(values) - 1
    score = min(float(top), max(0.0, sum(i * p for i, p in enumerate(values))))
    return ScoreAnswer(score, answer.levels, tuple(values), score_confidence(values))

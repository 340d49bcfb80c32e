"""A catalog entry's calibration: the maps its answers go through before a thinker reads them.

A decision model's probabilities can be ranked well and still be wrong as probabilities (the
embedded model's yes/no answers all sit near 0.55). A calibration maps them, per question role:

* a **temperature** (choices and scores): each probability is raised to ``1 / temperature`` and
  the distribution renormalised (``softmax(log p / T)``): ``T > 1`` softens, ``T < 1`` sharpens;
  the order of the options never changes;
* a **Platt** map (nouls): ``sigmoid(a * logit(p) + b)``;
* an **isotonic** map (nouls): a non-decreasing step curve through the points ``x -> y``,
  linear between them and flat beyond the ends.

The roles are ``next`` (the thinker's move), ``input`` (a ``<tool>_input`` choice), ``select``
(a ``select_<ref>`` noul), and for any other question its kind: ``choice``, ``noul``, ``score``.
A role with no map is left as answered (a thinker's roles never borrow their kind's map: a map is
only applied where it was fitted). In a catalog::

    [entries.calibration]
    fitted_on = "harness/evals/data, dev split"
    select = { method = "platt", a = 2.1, b = -0.4 }
    next = { method = "temperature", temperature = 1.3 }

or ``file = "calibration.toml"`` naming a TOML file with the same keys (relative to the
catalog's folder). ``harness.evals`` fits these maps; :mod:`harness.providers` applies them.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from typing import Final, Literal, TypeAlias

import attrs

from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    Question,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)
from harness.decision._internal import trusted_choice, trusted_noul, trusted_score

from ._entry import CatalogError

__all__ = [
    "CALIBRATION_ROLES",
    "Calibration",
    "IsotonicMap",
    "PlattMap",
    "RoleMap",
    "TemperatureMap",
    "calibration_from_table",
    "logit",
    "role_of",
    "sigmoid",
]

Role: TypeAlias = Literal["next", "input", "select", "choice", "noul", "score"]

CALIBRATION_ROLES: Final[Mapping[str, str]] = {
    "next": "choice",
    "input": "choice",
    "select": "noul",
    "choice": "choice",
    "noul": "noul",
    "score": "score",
}
"""Each role a calibration may map, and the kind of question it is."""

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
    keeps the order). The operations are the reference's (``TemperatureMap.distribution``
    before issue 26), in its order: ``max(EPSILON, p)`` and ``max(logs)`` as comparisons that
    pick the same values, ``sum`` itself; so the values are bit-identical to it
    (``tests/catalog/test_calibration_maps.py``)."""
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

_METHODS: Final[Mapping[str, type[RoleMap]]] = {
    "temperature": TemperatureMap,
    "platt": PlattMap,
    "isotonic": IsotonicMap,
}
_KINDS_OF: Final[Mapping[str, frozenset[str]]] = {
    "temperature": frozenset({"choice", "score"}),
    "platt": frozenset({"noul"}),
    "isotonic": frozenset({"noul"}),
}


def role_of(question_id: str, question: Question) -> str:
    """The role a question plays: ``next``, ``input``, ``select``, else its kind."""
    if isinstance(question, Choice):
        if question_id == "next":
            return "next"
        if question_id.endswith("_input"):
            return "input"
    if isinstance(question, Noul) and question_id.startswith("select_"):
        return "select"
    return question.kind


_ROLES: dict[str, tuple[type, str]] = {}
"""The role of each question id seen, with its question's type (a role is a function of the
two): what :meth:`Calibration.apply` looks up instead of calling :func:`role_of` again."""
_ROLES_KEPT: Final = 4096
"""At most this many ids are kept: a process that meets more starts the table again."""


@attrs.frozen
class Calibration:
    """The maps of one catalog entry, by role (see the module's notes).

    ``fitted_on`` says what the maps were fitted on (kept for the record, never read);
    ``selection_threshold`` is a thinker's selection threshold fitted with them on the same
    split, for the calibrated ``select`` probabilities (``None``: the thinker's own). ``model``
    is the served model the maps were fitted on: a response from another model (a fake or a
    replacement installed in a test, a server that moved to a new model) is left as answered,
    since a calibration belongs to the model it was measured on (``None``: any model).
    """

    roles: Mapping[str, RoleMap] = attrs.field(factory=dict)
    fitted_on: str | None = None
    selection_threshold: float | None = None
    model: str | None = None

    def __attrs_post_init__(self) -> None:
        for role, found in self.roles.items():
            kind = CALIBRATION_ROLES.get(role)
            if kind is None:
                raise ValueError(
                    f"unknown calibration role {role!r}; known roles: "
                    + ", ".join(CALIBRATION_ROLES)
                )
            if kind not in _KINDS_OF[found.method]:
                fits = "temperature" if kind != "noul" else "platt or isotonic"
                raise ValueError(
                    f"calibration role {role!r} ({kind} questions) cannot take method "
                    f"{found.method!r}: use {fits}"
                )
        threshold = self.selection_threshold
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"selection_threshold must be in [0, 1], not {threshold!r}")

    def applies_to(self, model: str | None) -> bool:
        """Whether the maps apply to an answer served by ``model``."""
        return self.model is None or model == self.model

    def map_for(self, question_id: str, question: Question) -> RoleMap | None:
        """The map a question's answer goes through, or ``None`` (left as answered)."""
        return self.roles.get(role_of(question_id, question))

    def apply(self, request: DecisionRequest, answers: Mapping[str, Answer]) -> dict[str, Answer]:
        """The answers to ``request`` after their roles' maps (refusals and unmapped roles as
        answered). A choice keeps its option order; its top option never changes."""
        questions = request.questions
        roles = self.roles
        mapped: dict[str, Answer] = {}
        for question_id, answer in answers.items():
            try:
                question = questions[question_id]
            except KeyError:  # asked no question: as answered
                mapped[question_id] = answer
                continue
            kind = type(question)
            known = _ROLES.get(question_id)
            if known is not None and known[0] is kind:
                role = known[1]
            else:
                role = role_of(question_id, question)
                if len(_ROLES) >= _ROLES_KEPT:
                    _ROLES.clear()
                _ROLES[question_id] = (kind, role)
            found = roles.get(role)
            if found is None:
                mapped[question_id] = answer
            elif isinstance(found, TemperatureMap) and isinstance(answer, ChoiceAnswer):
                # A temperature map on a choice (a shipped calibration's common case), in this
                # frame: each function a call enters is fetched from memory again after the
                # model's run has evicted it (docs/performance.md, round 5). The values are
                # what the public constructors would make of the mapped ones, made by the
                # trusted constructor as they are proved to be what it owes (see _softmax,
                # written out here; bit-identical to TemperatureMap.distribution:
                # tests/catalog/test_calibration_maps.py).
                temperature = found.temperature
                options = answer.probabilities.items()
                logs: list[float] = []
                top = _NEGATIVE_INFINITY
                for _, p in options:
                    value = _log(p if p > EPSILON else EPSILON) / temperature
                    logs.append(value)
                    if value > top:  # the first largest, as max() picks it
                        top = value
                if top == _NEGATIVE_INFINITY:  # NaN throughout: the public constructor refuses
                    mapped[question_id] = _checked(found, answer)
                    continue
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
                mapped[question_id] = trusted_choice(answer.choice, probabilities, confidence)
            else:
                mapped[question_id] = _mapped(found, answer)
        return mapped

    def to_table(self) -> dict[str, object]:
        """The calibration as a catalog's ``[entries.calibration]`` table holds it."""
        table: dict[str, object] = {}
        if self.fitted_on is not None:
            table["fitted_on"] = self.fitted_on
        if self.model is not None:
            table["model"] = self.model
        if self.selection_threshold is not None:
            table["selection_threshold"] = self.selection_threshold
        for role, found in self.roles.items():
            table[role] = found.to_table()
        return table


def _mapped(found: RoleMap, answer: Answer) -> Answer:
    """``answer`` through ``found``: the answers the public constructors would make from the
    mapped values, made by the trusted constructors where the values are proved to be what
    those owe (see :func:`_softmax`; a noul's value is clamped), else by the public ones. A
    temperature map on a choice answer is applied by :meth:`Calibration.apply` itself."""
    if isinstance(found, TemperatureMap):
        if isinstance(answer, ScoreAnswer):
            mapped = _softmax(answer.probabilities, found.temperature)
            if mapped is None:
                return _checked(found, answer)
            values = _divided(*mapped)
            top = len(values) - 1
            score = min(float(top), max(0.0, sum([i * p for i, p in enumerate(values)])))
            return trusted_score(score, answer.levels, tuple(values), score_confidence(values))
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


def _map_from_table(table: object, role: str) -> RoleMap:
    if not isinstance(table, dict):
        raise ValueError(
            f"calibration.{role} must be a table like "
            '{ method = "platt", a = 1.0, b = 0.0 } or { method = "temperature", temperature = 1 }'
        )
    method = table.get("method")
    chosen = _METHODS.get(method) if isinstance(method, str) else None
    if chosen is None:
        raise ValueError(
            f"calibration.{role}.method must be one of {', '.join(map(repr, _METHODS))}, "
            f"not {method!r}"
        )
    values = {key: value for key, value in table.items() if key != "method"}
    known = {field.name for field in attrs.fields(chosen) if field.init}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"calibration.{role} ({method}) has unknown key(s) {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(known))}"
        )
    for key, value in values.items():
        if key in ("x", "y"):
            continue  # checked by the map
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"calibration.{role}.{key} must be a number, not {value!r}")
    try:
        return chosen(**values)
    except (TypeError, ValueError) as error:
        raise ValueError(f"calibration.{role}: {error}") from None


def calibration_from_table(table: object, where: str) -> Calibration:
    """A ``[entries.calibration]`` table (or the file it names, already read) as a
    :class:`Calibration`; anything wrong is one :class:`CatalogError` naming ``where`` (the
    entry) and the fix."""
    if not isinstance(table, dict):
        raise CatalogError(f"{where}: calibration must be a table ([entries.calibration])")
    roles: dict[str, RoleMap] = {}
    fitted_on: object = table.get("fitted_on")
    model: object = table.get("model")
    threshold: object = table.get("selection_threshold")
    try:
        if fitted_on is not None and not isinstance(fitted_on, str):
            raise ValueError("calibration.fitted_on must be a string saying what it was fitted on")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(
                "calibration.model must be the served model's name the maps were fitted on"
            )
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            raise ValueError("calibration.selection_threshold must be a number in [0, 1]")
        for key, value in table.items():
            if key in ("fitted_on", "selection_threshold", "model"):
                continue
            if key not in CALIBRATION_ROLES:
                raise ValueError(
                    f"unknown calibration key {key!r}; a role ({', '.join(CALIBRATION_ROLES)}), "
                    "fitted_on, model, selection_threshold or file"
                )
            roles[key] = _map_from_table(value, key)
        return Calibration(
            roles,
            fitted_on=fitted_on,
            model=model if isinstance(model, str) else None,
            selection_threshold=None if threshold is None else float(threshold),
        )
    except ValueError as error:
        raise CatalogError(f"{where}: {error}") from None

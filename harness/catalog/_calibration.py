"""A catalog entry's calibration: which map each question's answer goes through, and the
catalog's table of them (the maps themselves are in ``_calibration_maps.py``).

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

from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

import attrs

from harness.decision import Answer, Choice, DecisionRequest, Noul, Question

from ._calibration_maps import (
    Applier,
    IsotonicMap,
    PlattMap,
    RoleMap,
    TemperatureMap,
    applier,
    logit,
    sigmoid,
)
from ._calibration_maps import _mapped as _mapped  # the careful path of one map, for its tests
from ._errors import CatalogError

__all__ = [
    "CALIBRATION_ROLES",
    "Calibration",
    "IsotonicMap",
    "PlattMap",
    "RoleMap",
    "TemperatureMap",
    "calibration_from_table",
    "logit",
    "role_kind",
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


def role_kind(role: str, what: str) -> str:
    """The kind of question ``role`` is asked of; an unknown role is refused, naming what holds
    it (``calibration``, ``examples``: both are keyed by role) and the known roles."""
    kind = CALIBRATION_ROLES.get(role)
    if kind is None:
        known = ", ".join(CALIBRATION_ROLES)
        raise ValueError(f"unknown {what} role {role!r}; known roles: {known}")
    return kind


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
    _appliers: Mapping[str, Applier] = attrs.field(init=False, eq=False, repr=False)
    """Each role's map bound to its constants (:func:`applier`), made once with the calibration."""

    def __attrs_post_init__(self) -> None:
        for role, found in self.roles.items():
            kind = role_kind(role, "calibration")
            if kind not in _KINDS_OF[found.method]:
                fits = "temperature" if kind != "noul" else "platt or isotonic"
                raise ValueError(
                    f"calibration role {role!r} ({kind} questions) cannot take method "
                    f"{found.method!r}: use {fits}"
                )
        threshold = self.selection_threshold
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise ValueError(f"selection_threshold must be in [0, 1], not {threshold!r}")
        bound = {role: applier(found) for role, found in self.roles.items()}
        object.__setattr__(self, "_appliers", bound)  # a frozen class: set once, here

    def applies_to(self, model: str | None) -> bool:
        """Whether the maps apply to an answer served by ``model``."""
        return self.model is None or model == self.model

    def map_for(self, question_id: str, question: Question) -> RoleMap | None:
        """The map a question's answer goes through, or ``None`` (left as answered)."""
        return self.roles.get(role_of(question_id, question))

    def apply(self, request: DecisionRequest, answers: Mapping[str, Answer]) -> dict[str, Answer]:
        """The answers to ``request`` after their roles' maps (refusals and unmapped roles as
        answered). A choice keeps its option order; its top option never changes. Each role's
        map was bound to its constants when the calibration was made (:func:`applier`)."""
        questions = request.questions
        appliers = self._appliers
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
            bound = appliers.get(role)
            mapped[question_id] = answer if bound is None else bound(answer)
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

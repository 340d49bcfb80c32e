"""A decision request: one state and the questions asked about it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from ._frozen_map import FrozenMap
from ._json import JsonValue, plain_json
from ._questions import Choice, Noul, Question, Score

__all__ = ["DecisionRequest"]


def _state(value: JsonValue) -> JsonValue:
    if type(value) is str:  # what plain_json gives for it
        return value
    if value is None or isinstance(value, bool | int | float):
        raise ValueError(
            f"the decision state must be a string, an object or an array, not "
            f"{'null' if value is None else type(value).__name__}: System One servers refuse a "
            'bare scalar, so wrap it, e.g. {"value": ...}'
        )
    return plain_json(value, "the decision state")


def _questions(value: Mapping[str, Question]) -> FrozenMap[str, Question]:
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict skips the ABC
        raise ValueError(
            f"questions must be a mapping of id -> question, not {type(value).__name__}"
        )
    if not value:
        raise ValueError("a decision request needs at least one question")
    for question_id, question in value.items():
        if not isinstance(question_id, str) or not question_id:
            raise ValueError(
                f"question ids must be non-empty str, got {question_id!r}: any non-empty "
                "string is a valid id"
            )
        if not isinstance(question, (Choice, Noul, Score)):
            raise ValueError(
                f"question {question_id!r} must be a Choice, Noul or Score, not "
                f"{type(question).__name__}"
            )
    return FrozenMap.of(value)


@attrs.frozen
class DecisionRequest:
    """A state and the questions asked about it, answered in one round trip.

    ``state`` is a ``str``, or a JSON object or array (checked, and copied into plain lists and
    dicts, at construction; an error names what is in the way, never the state itself; a bare
    number, boolean or null is refused, as System One servers refuse it). ``questions`` map
    each id (the caller's key, any non-empty string, never read by the model) to a question, in
    order; at least one.

    >>> request = DecisionRequest({"ticket": "refund please"}, {"refund": Noul("Refund?")})
    >>> list(request.questions)
    ['refund']
    """

    state: JsonValue = attrs.field(converter=_state)
    questions: Mapping[str, Question] = attrs.field(converter=_questions)
    # Encoded bodies by (wire, model): a request is priced and then sent in the same bytes, so it
    # is encoded once. Not part of the value (equality, hash, repr).
    _bodies: dict[tuple[str, str | None], bytes] = attrs.field(
        factory=dict, init=False, repr=False, eq=False, hash=False
    )
    # The questions in a wire's shape, by wire (the embedded model reads them as they are, with
    # no body around them): made once, shared, never changed. Not part of the value either.
    _wire_questions: dict[str, Mapping[str, object]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False, hash=False
    )

    def encoded(
        self, wire: str, model: str | None, encode: Callable[[DecisionRequest, str | None], bytes]
    ) -> bytes:
        """The body ``encode`` makes of this request for ``wire`` and ``model``, made once."""
        key = (wire, model)
        body = self._bodies.get(key)
        if body is None:
            body = self._bodies[key] = encode(self, model)
        return body

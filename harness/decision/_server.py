"""Reading request bodies on the server side, the steps both codecs take: problems collected
FastAPI style, the body an object, its model, a question's kind and texts, the request built once
every problem is listed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ._json import JsonValue
from ._questions import Question
from ._request import DecisionRequest
from ._wire import Loc, RequestValidationError, wire_text

__all__ = [
    "Problems",
    "body_object",
    "built_request",
    "question_kind",
    "read_instructions",
    "read_model",
    "read_state",
    "read_text",
]

T = TypeVar("T")


class Problems:
    """The problems found in one request body, raised together as a RequestValidationError."""

    def __init__(self) -> None:
        self.found: list[tuple[Loc, str]] = []

    def add(self, loc: Loc, message: str) -> None:
        """Record that what is at ``loc`` is wrong, and why."""
        self.found.append((loc, message))

    def build(self, loc: Loc, make: Callable[[], T]) -> T | None:
        """``make()``, or None with its ValueError recorded at ``loc`` (the vocabulary's
        constructors name the rule broken, never the state)."""
        try:
            return make()
        except ValueError as error:
            self.add(loc, str(error))
            return None

    def raise_any(self) -> None:
        """Raise every problem found so far, if any."""
        if self.found:
            raise RequestValidationError(self.found)


def read_text(
    container: Mapping[object, object] | Sequence[object],
    key: str | int,
    loc: Loc,
    problems: Problems,
) -> str | None:
    """The text at ``container[key]``: None when absent or null; a string as is, an object or
    array as its compact JSON; anything else is a problem."""
    if isinstance(container, Mapping):
        value = container.get(key)
    else:
        value = container[key] if isinstance(key, int) and 0 <= key < len(container) else None
    if value is None:
        return None
    text = wire_text(value)
    if text is None:
        problems.add((*loc, key), "must be a string, an object or an array")
    return text


def read_state(body: Mapping[object, object], key: str, problems: Problems) -> JsonValue:
    """The state at ``body[key]``: a string, object or array (never quoted in a problem)."""
    if key not in body:
        problems.add(("body", key), "Field required")
        return None
    value = body[key]
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list)):
        return value  # checked as JSON by DecisionRequest
    problems.add(("body", key), f"{key} must be a string, an object or an array")
    return None


def body_object(payload: object) -> Mapping[object, object]:
    """The request body as an object; anything else is refused at once (nothing else to read)."""
    if not isinstance(payload, Mapping):
        raise RequestValidationError([(("body",), "the body must be a JSON object")])
    return payload


def read_model(body: Mapping[object, object], problems: Problems, *, missing: str) -> object:
    """The model ``body`` asks, a non-empty string; ``missing`` is the problem when it is absent."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        problems.add(
            ("body", "model"), "model must be a non-empty string" if "model" in body else missing
        )
    return model


def question_kind(
    raw: object, loc: Loc, problems: Problems, kinds: Sequence[str], fields: str
) -> tuple[Mapping[object, object], str] | None:
    """A question object and its ``type``, one of ``kinds``; None with the problem recorded (a
    question must be an object with ``fields``)."""
    if not isinstance(raw, Mapping):
        problems.add(loc, f"a question must be an object with {fields}")
        return None
    kind = raw.get("type")
    if not isinstance(kind, str) or kind not in kinds:
        named = ", ".join(map(repr, kinds[:-1]))
        problems.add((*loc, "type"), f"type must be {named} or {kinds[-1]!r}")
        return None
    return raw, kind


def read_instructions(raw: Mapping[object, object], loc: Loc, problems: Problems) -> str | None:
    """A question's required instructions (:func:`read_text`); None with a problem recorded."""
    instructions = read_text(raw, "instructions", loc, problems)
    if instructions is None and raw.get("instructions") is None:
        problems.add((*loc, "instructions"), "Field required")
    return instructions


def built_request(
    problems: Problems, state: JsonValue, questions: Mapping[str, Question], model: object
) -> tuple[DecisionRequest, str]:
    """The request read, and its model; every problem found so far (reading the body, then
    building the request) raised together as a :class:`RequestValidationError`."""
    problems.raise_any()
    request = problems.build(("body",), lambda: DecisionRequest(state, questions))
    problems.raise_any()
    assert request is not None  # no problems: it was built
    assert isinstance(model, str)  # no problems: it was read
    return request, model

"""Reading request bodies on the server side: problems collected FastAPI style, text fields."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from ._json import JsonValue
from ._wire import Loc, RequestValidationError, wire_text

__all__ = ["Problems", "read_state", "read_text"]

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

"""A turn of the decision thinker, as it lands on the run's record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

import attrs

from harness.decision._internal import compact_json, load_json

__all__ = ["FINISH", "OBS_TURNS", "DecisionTurn", "parse_turns", "turns_json"]

OBS_TURNS: Final = "OBS_TURNS"
"""The job metadata key under which a thinker publishes its turns as compact JSON."""

FINISH: Final = "finish"
"""The thinker's own move: answer with the selected artifacts."""


def _frozen_mapping(value: Mapping[str, float] | None) -> Mapping[str, float] | None:
    return None if value is None else MappingProxyType(dict(value))


def _frozen_selection(value: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(value))


def _dist(values: Mapping[str, float]) -> str:
    return "{" + ", ".join(f"{key}: {p:.2f}" for key, p in values.items()) + "}"


@attrs.frozen(repr=False)
class DecisionTurn:
    """One turn: the distributions the model answered and what came of them.

    * ``next``: the probabilities of the ``next`` question (``None`` on a selection-only turn);
    * ``tool``: the move taken (a tool's name or ``finish``);
    * ``argument``: the probabilities of the chosen tool's input question; ``artifact`` the ref it
      ran on; ``result`` the ref it produced, or ``failure`` its readable failure;
    * ``selection``: on a finishing turn, each output candidate's probability of belonging in the
      answer (read-only, in world order; empty on other turns, never ``None``).
    """

    turn: int
    next: Mapping[str, float] | None = attrs.field(converter=_frozen_mapping)
    tool: str
    argument: Mapping[str, float] | None = attrs.field(default=None, converter=_frozen_mapping)
    artifact: str | None = None
    result: str | None = None
    failure: str | None = None
    selection: Mapping[str, float] = attrs.field(factory=dict, converter=_frozen_selection)

    def __repr__(self) -> str:
        # Reads like the turn: "DecisionTurn(2: judge_note on note#2 -> list#2, next {...})".
        move = f"{self.turn}: {self.tool}"
        if self.artifact is not None:
            move += f" on {self.artifact}"
        if self.result is not None:
            move += f" -> {self.result}"
        if self.failure is not None:
            move += f" failed: {self.failure!r}"
        parts = [move]
        if self.next is not None:
            parts.append(f"next {_dist(self.next)}")
        if self.argument is not None:
            parts.append(f"argument {_dist(self.argument)}")
        if self.selection:
            parts.append(f"selection {_dist(self.selection)}")
        return f"DecisionTurn({', '.join(parts)})"

    def to_json(self) -> dict[str, object]:
        """The turn as a JSON object, keys in a fixed order."""
        return {
            "turn": self.turn,
            "next": None if self.next is None else dict(self.next),
            "tool": self.tool,
            "argument": None if self.argument is None else dict(self.argument),
            "artifact": self.artifact,
            "result": self.result,
            "failure": self.failure,
            "selection": dict(self.selection),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> DecisionTurn:
        """Read a turn back from :meth:`to_json`'s shape (for records written to files)."""

        def dist(key: str) -> dict[str, float] | None:
            value = data.get(key)
            if value is None:
                return None
            if not isinstance(value, Mapping) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
            ):
                raise ValueError(f"turn field {key!r} must be an object of numbers, or null")
            return {str(k): float(v) for k, v in value.items()}

        def text(key: str) -> str | None:
            value = data.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"turn field {key!r} must be a string or null")
            return value

        turn = data.get("turn")
        tool = data.get("tool")
        if isinstance(turn, bool) or not isinstance(turn, int) or not isinstance(tool, str):
            raise ValueError("a turn needs an integer 'turn' and a string 'tool'")
        return cls(
            turn=turn,
            next=dist("next"),
            tool=tool,
            argument=dist("argument"),
            artifact=text("artifact"),
            result=text("result"),
            failure=text("failure"),
            selection=dist("selection") or {},
        )


def turns_json(turns: Sequence[DecisionTurn]) -> str:
    """The compact JSON of ``turns`` (what ``OBS_TURNS`` holds)."""
    return compact_json([t.to_json() for t in turns])


def parse_turns(text: str) -> tuple[DecisionTurn, ...]:
    """Read ``OBS_TURNS`` back into turns."""
    data = load_json(text)
    if not isinstance(data, list):
        raise ValueError("OBS_TURNS holds a JSON list of turns")
    return tuple(DecisionTurn.from_json(item) for item in data)

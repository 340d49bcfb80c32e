"""The questions a decision model answers: a choice, a noul (yes or no) and a score."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal, TypeAlias

import attrs

from ._frozen_map import FrozenMap

__all__ = ["Choice", "Noul", "Question", "Score"]


def _instructions(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    kind = type(instance).__name__
    if not isinstance(value, str):
        raise ValueError(f"{kind} instructions must be a str, not {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{kind} instructions must not be blank: say what the model should judge")


def _description(owner: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{owner} must be a str or None, not {type(value).__name__}")
    return value


def _options(
    value: Mapping[str, str | None] | Sequence[str],
) -> FrozenMap[str, str | None]:
    if isinstance(value, str):
        raise ValueError(
            "choice options must be a mapping of option -> description or a sequence of "
            "options, not a single str"
        )
    if type(value) is dict or isinstance(value, Mapping):  # a dict skips the ABC
        pairs = list(value.items())
    elif isinstance(value, Sequence):
        pairs = [(key, None) for key in value]
    else:
        raise ValueError(
            "choice options must be a mapping of option -> description or a sequence of "
            f"options, not {type(value).__name__}"
        )
    if not pairs:
        raise ValueError("a choice needs at least one option")
    seen: set[str] = set()
    for key, description in pairs:
        if not isinstance(key, str):
            raise ValueError(f"choice option keys must be str, not {type(key).__name__}")
        if not key.strip():
            raise ValueError("choice option keys must not be blank: name every option")
        if key in seen:
            raise ValueError(f"choice option keys must be unique: {key!r} appears twice")
        seen.add(key)
        if description is not None and type(description) is not str:  # else as it is
            _description(f"the description of option {key!r}", description)
    return FrozenMap(pairs)


def _levels(value: Sequence[str]) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValueError(
            f"score levels must be a sequence of str (lowest first), not {type(value).__name__}"
        )
    levels = tuple(value)
    for index, level in enumerate(levels):
        if not isinstance(level, str):
            raise ValueError(f"score level {index} must be a str, not {type(level).__name__}")
        if not level.strip():
            raise ValueError(f"score level {index} must not be blank: describe every level")
    if len(levels) < 2:
        raise ValueError(f"a score needs at least two levels (lowest first), got {len(levels)}")
    return levels


def _side(instance: object, attribute: attrs.Attribute[str | None], value: object) -> None:
    _description(f"Noul {attribute.name}", value)


@attrs.frozen
class Choice:
    """Which one of the options? Answered with a probability per option.

    ``options`` maps each option (the key the answer names) to a description or ``None``, in
    order; at least one option, keys non-blank and unique. A sequence of keys means options with
    no description.

    >>> Choice("Which team handles the ticket?", {"billing": "Invoices", "tech": None}).options
    FrozenMap({'billing': 'Invoices', 'tech': None})
    >>> list(Choice("Which colour?", ["red", "green"]).options)
    ['red', 'green']
    """

    kind: ClassVar[Literal["choice"]] = "choice"
    instructions: str = attrs.field(validator=_instructions)
    options: Mapping[str, str | None] = attrs.field(converter=_options)


@attrs.frozen
class Noul:
    """Is it so? Answered with the probability of true.

    ``when_true`` and ``when_false`` optionally describe what each side means.

    >>> Noul("Does the customer ask for a refund?", when_true="money back").when_false is None
    True
    """

    kind: ClassVar[Literal["noul"]] = "noul"
    instructions: str = attrs.field(validator=_instructions)
    when_true: str | None = attrs.field(default=None, validator=_side)
    when_false: str | None = attrs.field(default=None, validator=_side)


@attrs.frozen
class Score:
    """How much, on an ordered scale? Answered with a probability per level.

    ``levels`` describe the scale, lowest first; at least two, none blank.

    >>> Score("How angry is the customer?", ["calm", "annoyed", "furious"]).levels
    ('calm', 'annoyed', 'furious')
    """

    kind: ClassVar[Literal["score"]] = "score"
    instructions: str = attrs.field(validator=_instructions)
    levels: tuple[str, ...] = attrs.field(converter=_levels)


Question: TypeAlias = Choice | Noul | Score
"""Any question: a :class:`Choice`, a :class:`Noul` or a :class:`Score`."""

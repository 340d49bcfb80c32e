"""A recorded run as text, turn by turn (what ``harness record FILE`` prints)."""

from __future__ import annotations

import json  # the stdlib: a value shown with json's default separators, which orjson cannot write
from collections.abc import Mapping
from typing import Final

from harness.record._format import RunRecord
from harness.thinker import FINISH, DecisionTurn

__all__ = [
    "RANKED_QUESTIONS",
    "billed_text",
    "counted",
    "move_line",
    "ordered_options",
    "render_text",
]

BAR_WIDTH: Final = 20
"""Characters of a full (probability 1) bar."""

SHOWN_OPTIONS: Final = 5
"""How many options of ``next`` and ``argument`` a turn shows, most probable first."""

_WORDS: Final = 90

RANKED_QUESTIONS: Final = frozenset({"next", "argument"})
"""The distributions shown most probable first (ties in the order offered); a ``selection``
keeps the world order of its candidates, which is the answer's order. The text view and the
HTML page show every distribution in this one order."""


def ordered_options(question: str, values: Mapping[str, float]) -> list[tuple[str, float]]:
    """``values`` in display order: ranked for ``next`` and ``argument``, else as given.

    >>> ordered_options("next", {"a": 0.2, "b": 0.7, "c": 0.2})
    [('b', 0.7), ('a', 0.2), ('c', 0.2)]
    >>> ordered_options("selection", {"s#2": 0.1, "s#1": 0.9})
    [('s#2', 0.1), ('s#1', 0.9)]
    """
    if question in RANKED_QUESTIONS:
        return sorted(values.items(), key=lambda kv: -kv[1])
    return list(values.items())


def billed_text(calls: int, reported: int, billed: int) -> str:
    """Billed input tokens as every view words them: ``billed`` tokens over the ``reported``
    of ``calls`` calls that reported a count (a model that reports none: ``not reported``).

    >>> billed_text(13, 1, 0)
    '0 on 1 of 13 calls (12 not reported)'
    >>> billed_text(2, 2, 1500), billed_text(3, 0, 0), billed_text(0, 0, 0)
    ('1,500', 'not reported', '0')
    """
    if calls == 0:
        return "0"
    if reported == 0:
        return "not reported"
    if reported < calls:
        return f"{billed:,} on {reported} of {calls} calls ({calls - reported} not reported)"
    return f"{billed:,}"


def move_line(turn: DecisionTurn) -> str:
    """``"turn <n>: <tool> on <ref> -> <result>"`` (or ``failed: <message>``, or ``finish``)."""
    if turn.tool == FINISH:
        return f"turn {turn.turn}: finish"
    line = f"turn {turn.turn}: {turn.tool} on {turn.artifact}"
    if turn.failure is not None:
        return f"{line} failed: {turn.failure}"
    return f"{line} -> {turn.result}"


def _bar(probability: float) -> str:
    filled = round(max(0.0, min(1.0, probability)) * BAR_WIDTH)
    return "#" * filled + "." * (BAR_WIDTH - filled)


def _words(record: RunRecord, ref: str) -> str:
    line = record.artifacts.get(ref, "")
    words = line.split(": ", 1)[1] if ": " in line else line
    return words if len(words) <= _WORDS else words[: _WORDS - 3] + "..."


def _distribution(
    record: RunRecord, title: str, values: Mapping[str, float], *, limit: int | None, marks: bool
) -> list[str]:
    ordered = ordered_options(title, values)
    shown = ordered[:limit] if limit is not None else ordered
    lines = [f"  {title}:"]
    width = max((len(key) for key, _ in shown), default=0)
    for key, probability in shown:
        words = _words(record, key) if key in record.artifacts else ""
        lines.append(
            f"    {key:<{width}} {_bar(probability)} {probability:5.3f}"
            + (f"  {words}" if words and marks else "")
        )
    hidden = len(values) - len(shown)
    if hidden > 0:
        lines.append(f"    ... and {hidden} more")
    return lines


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: ``counted(1, "decision") == "1 decision"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_text(record: RunRecord) -> str:
    """The run turn by turn: each move, its ``next`` and ``argument`` distributions (most
    probable first), the finishing turn's selection (in world order), then the answer and its
    score against an answer key when the command printed one."""
    entry = record.entry
    lines = [
        f"{record.thinker} ({record.command}) on entry {entry.get('id')!r} "
        f"({entry.get('provider')}, {entry.get('wire_model_id')})",
    ]
    if record.objective:
        lines.append(f"objective: {record.objective}")
    lines.append(
        f"input: {record.input_alias} {json.dumps(record.input_value, ensure_ascii=False)}"
    )
    lines.append(
        f"{counted(len(record.turns), 'turn')}, {counted(len(record.calls), 'decision')}, "
        f"{record.wall_seconds:.2f} s wall, {record.model_seconds:.2f} s in the model"
    )
    for turn in record.turns:
        lines.append("")
        lines.append(move_line(turn))
        if turn.next is not None:
            lines += _distribution(record, "next", turn.next, limit=SHOWN_OPTIONS, marks=False)
        if turn.argument is not None:
            lines += _distribution(
                record, "argument", turn.argument, limit=SHOWN_OPTIONS, marks=True
            )
        if turn.selection:
            lines += _distribution(record, "selection", turn.selection, limit=None, marks=True)
    lines.append("")
    if record.failure is not None:
        lines.append(f"failed: {record.failure}")
        return "\n".join(lines)
    if not record.answer:
        lines.append("answer: nothing selected")
    else:
        lines.append(f"answer: {counted(len(record.answer), 'item')}")
    for item in record.answer:
        shown = "  -  " if item.probability is None else f"{item.probability:5.3f}"
        lines.append(f"  {shown}  {item.ref}  {_words(record, item.ref)}")
    if record.score:
        lines.append(f"score: {record.score}")
    return "\n".join(lines)

"""A recorded run as text, turn by turn (what ``harness record FILE`` prints)."""

from __future__ import annotations

import json  # the stdlib: a value shown with json's default separators, which orjson cannot write
from collections.abc import Mapping
from typing import Final

from harness.artifacts import ArtifactRegistry, ListArtifact, TextFormatterRegistry, digest_words
from harness.catalog import IN_PROCESS_PROVIDERS
from harness.errors import NotFoundError
from harness.jobs import JobEvent
from harness.record._format import RunRecord
from harness.thinker import FINISH, OBS_TURNS, DecisionTurn, parse_turns

__all__ = [
    "IN_PROCESS_PROVIDERS",
    "NOT_BILLED",
    "RANKED_QUESTIONS",
    "billed_text",
    "counted",
    "move_line",
    "ordered_options",
    "progress_line",
    "reading_lines",
    "reading_text",
    "render_text",
    "turn_of",
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


NOT_BILLED: Final = "not billed (an in-process model)"


def billed_text(calls: int, reported: int, billed: int, *, in_process: int = 0) -> str:
    """Billed input tokens as every view words them: ``billed`` tokens over the ``reported``
    of ``calls`` calls that reported a count (a model that reports none: ``not reported``);
    ``in_process`` of the calls ran on an in-process model (:data:`IN_PROCESS_PROVIDERS`), which
    bills nothing (``reported`` and ``billed`` count the other calls only).

    >>> billed_text(13, 1, 0)
    '0 on 1 of 13 calls (12 not reported)'
    >>> billed_text(2, 2, 1500), billed_text(3, 0, 0), billed_text(0, 0, 0)
    ('1,500', 'not reported', '0')
    >>> billed_text(6, 0, 0, in_process=6), billed_text(3, 1, 40, in_process=2)
    ('not billed (an in-process model)', '40; 2 in-process calls not billed')
    """
    if in_process:
        if in_process >= calls:
            return NOT_BILLED
        rest = billed_text(calls - in_process, reported, billed)
        return f"{rest}; {counted(in_process, 'in-process call')} not billed"
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


_ABOUT_CHARS: Final = 60
"""How much of a result's digest a progress line shows."""


def turn_of(event: JobEvent) -> DecisionTurn | None:
    """The turn a thinker's progress event announces (the last it published), or ``None`` for
    an event that announces none."""
    published = event.job.metadata.get(OBS_TURNS)
    return parse_turns(published)[-1] if published else None


def progress_line(
    turn: DecisionTurn,
    world: ArtifactRegistry | None,
    formatters: TextFormatterRegistry,
    seconds: float,
) -> str:
    """The line a run prints as a turn ends: its move (:func:`move_line`), what came of it
    (a list's size, else the start of the result's digest) and the turn's time:
    ``turn 1: split_words on sentence#1 -> list#1  (3 words, 0.02 s)``."""
    line = move_line(turn)
    about = ""
    made = None
    if world is not None and turn.result is not None:
        try:
            made = world.get(turn.result)
        except NotFoundError:  # a world that does not hold it: the move alone
            made = None
    if made is not None:
        if isinstance(made, ListArtifact):
            noun = str(getattr(made.iterand_type, "alias", "item")).replace("_", " ")
            about = counted(len(made.iterands), noun)
        else:
            words = digest_words(made, formatters)
            about = words if len(words) <= _ABOUT_CHARS else words[: _ABOUT_CHARS - 3] + "..."
    return f"{line}  ({about + ', ' if about else ''}{seconds:.2f} s)"


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


def reading_text(reading: Mapping[str, object]) -> str:
    """A call's reading in words: ``read by completion-echo, 2 upstream calls, least mass 0.420
    (select_word#1)`` (and the orderings averaged, the questions read in groups or in another
    request, when there are any)."""
    parts = [f"read by {reading.get('method', 'an unknown method')}"]
    upstream = reading.get("upstream_calls")
    if isinstance(upstream, int):
        parts.append(counted(upstream, "upstream call"))
    mass = reading.get("mass")
    if isinstance(mass, Mapping) and mass:
        question, least = min(mass.items(), key=lambda kv: float(kv[1]))
        parts.append(f"least mass {float(least):.3f} ({question})")
    orderings = reading.get("orderings")
    if isinstance(orderings, int) and orderings > 1:
        parts.append(f"{orderings} orderings averaged")
    for key, words in (("hierarchy", "read in groups"), ("bounded", "read in a second request")):
        found = reading.get(key)
        if isinstance(found, list) and found:
            parts.append(f"{counted(len(found), 'question')} {words}")
    return ", ".join(parts)


def reading_lines(record: RunRecord) -> list[tuple[int, Mapping[str, object]]]:
    """The calls of ``record`` that carry a reading, numbered from 1 in call order."""
    return [
        (number, call.reading)
        for number, call in enumerate(record.calls, 1)
        if call.reading is not None
    ]


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
    read = reading_lines(record)
    if read:
        lines += ["", "readings (how each call's answers were read from the model's logprobs):"]
        lines += [f"  call {number}: {reading_text(reading)}" for number, reading in read]
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

"""What differs between two decision requests, read from their System One wire bodies.

A replay that meets a request it never recorded shows the recorded request nearest to it and
what differs: the model, a question new or gone, a question's type or instructions, an option new,
gone or described otherwise, a score's levels, and each state line that changed (a state given as
JSON is read as one line per leaf, ``state.artifacts[4]``; a text state as its lines).

:meth:`Difference.summary` names *where* and *what kind* of change only: question ids, option
keys and state paths, never a text the state or a digest line holds, so it may go in an error
message and a log. :meth:`Difference.detail` adds both sides' text, for a person reading their own
test's output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

import attrs

from harness.decision import JsonValue
from harness.decision._internal import compact_json

__all__ = ["Difference", "request_differences"]

_SHOWN = 400
"""Characters of one side shown in a detail line before it is cut."""


@attrs.frozen
class Difference:
    """One difference: where (``question 'next' option 'finish'``, ``state.done[1]``), the kind
    of change, and each side's text (``None`` when that side has nothing there)."""

    where: str
    change: str
    recorded: str | None = None
    asked: str | None = None

    def summary(self) -> str:
        """Where and what kind of change: safe to log (quotes no state)."""
        return f"{self.where} {self.change}"

    def detail(self) -> str:
        """The summary and both sides' text, one per line (quotes the state)."""
        lines = [self.summary()]
        if self.recorded is not None:
            lines.append(f"    recorded: {_cut(self.recorded)}")
        if self.asked is not None:
            lines.append(f"    asked:    {_cut(self.asked)}")
        return "\n".join(lines)


def _cut(text: str) -> str:
    """``text`` (a side's JSON) at most :data:`_SHOWN` characters: a longer JSON string is cut
    inside its quotes, which still close (``"the objective with ..."``), never after a lone
    escape; other text is cut before any quote it would leave open and ends with ``...``."""
    if len(text) <= _SHOWN:
        return text
    if len(text) >= 2 and text[0] == text[-1] == '"':
        inner = text[1 : _SHOWN - 4]
        while inner.endswith("\\"):  # a cut escape (\" or \n) would read as another character
            inner = inner[:-1]
        return f'"{inner}..."'
    cut = text[: _SHOWN - 3]
    if cut.count('"') % 2:  # a quote the cut would leave open: cut before it
        cut = cut[: cut.rindex('"')].rstrip()
    return cut + "..."


def _text(value: object) -> str:
    return compact_json(value)


def request_differences(
    recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue]
) -> list[Difference]:
    """Every difference between two System One request bodies, model first, then questions in
    the order asked, then state lines."""
    found: list[Difference] = []
    if recorded.get("model") != asked.get("model"):
        found.append(
            Difference(
                "model",
                f"changed ({recorded.get('model')!r} -> {asked.get('model')!r})",
                _text(recorded.get("model")),
                _text(asked.get("model")),
            )
        )
    found.extend(
        _question_differences(_mapping(recorded.get("questions")), _mapping(asked.get("questions")))
    )
    found.extend(_state_differences(recorded.get("state"), asked.get("state")))
    return found


def _mapping(value: object) -> Mapping[str, JsonValue]:
    return value if isinstance(value, Mapping) else {}


def _question_differences(
    recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue]
) -> list[Difference]:
    found = _new_and_gone("question", recorded, asked)
    found += _reordered("questions", recorded, asked, "asked")
    for qid in (qid for qid in asked if qid in recorded):
        found.extend(_one_question(qid, _mapping(recorded[qid]), _mapping(asked[qid])))
    return found


def _new_and_gone(
    named: str, recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue]
) -> list[Difference]:
    """The keys ``asked`` has and ``recorded`` lacks (``is new``), then the keys it lacks
    (``is gone``), each named ``{named} {key!r}``."""
    return [
        Difference(f"{named} {key!r}", "is new", None, _text(value))
        for key, value in asked.items()
        if key not in recorded
    ] + [
        Difference(f"{named} {key!r}", "is gone", _text(value), None)
        for key, value in recorded.items()
        if key not in asked
    ]


def _reordered(
    named: str, recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue], verb: str
) -> list[Difference]:
    """The keys both hold, when ``asked`` has them in another order than ``recorded``."""
    kept_recorded = [key for key in recorded if key in asked]
    kept_asked = [key for key in asked if key in recorded]
    if kept_recorded == kept_asked:
        return []
    return [
        Difference(
            named,
            f"are {verb} in another order",
            ", ".join(kept_recorded),
            ", ".join(kept_asked),
        )
    ]


def _one_question(
    qid: str, recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue]
) -> list[Difference]:
    where = f"question {qid!r}"
    kind, was = asked.get("type"), recorded.get("type")
    if kind != was:
        return [
            Difference(where, f"changed type ({was!r} -> {kind!r})", _text(recorded), _text(asked))
        ]
    found: list[Difference] = []
    if recorded.get("instructions") != asked.get("instructions"):
        found.append(
            Difference(
                where,
                "has other instructions",
                _text(recorded.get("instructions")),
                _text(asked.get("instructions")),
            )
        )
    before, after = recorded.get("criteria"), asked.get("criteria")
    if before == after and (before is None or list(_mapping(before)) == list(_mapping(after))):
        return found
    if kind == "choice" and isinstance(before, Mapping) and isinstance(after, Mapping):
        found.extend(_options(where, before, after))
    elif kind == "score":
        found.append(Difference(where, "has other levels", _text(before), _text(after)))
    else:
        found.append(Difference(where, "has other criteria", _text(before), _text(after)))
    return found


def _options(
    where: str, recorded: Mapping[str, JsonValue], asked: Mapping[str, JsonValue]
) -> list[Difference]:
    found = _new_and_gone(f"{where} option", recorded, asked)
    for key, text in asked.items():
        if key in recorded and recorded[key] != text:
            found.append(
                Difference(
                    f"{where} option {key!r}",
                    "has another description",
                    _text(recorded[key]),
                    _text(text),
                )
            )
    return found + _reordered(f"{where} options", recorded, asked, "offered")


def _state_lines(state: object) -> list[tuple[str, str]]:
    """The state as (where, text) lines: a text state by its lines, JSON by its leaves."""
    if isinstance(state, str):
        return [(f"state line {n}", line) for n, line in enumerate(state.split("\n"), 1)]
    lines: list[tuple[str, str]] = []
    _leaves(state, "state", lines)
    return lines


def _leaves(value: object, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            _leaves(item, f"{path}.{key}", out)
    elif isinstance(value, Sequence) and not isinstance(value, str) and value:
        for index, item in enumerate(value):
            _leaves(item, f"{path}[{index}]", out)
    else:
        out.append((path, _text(value)))


def _state_differences(recorded: object, asked: object) -> list[Difference]:
    if recorded == asked:
        return []
    before, after = _state_lines(recorded), _state_lines(asked)
    # Lines are matched by what they say, so one line inserted does not shift every path after it.
    matcher = SequenceMatcher(
        a=[f"{_parent(p)}\0{t}" for p, t in before],
        b=[f"{_parent(p)}\0{t}" for p, t in after],
        autojunk=False,
    )
    found: list[Difference] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            old = before[i1 + k] if i1 + k < i2 else None
            new = after[j1 + k] if j1 + k < j2 else None
            if old is not None and new is not None:
                where = new[0] if new[0] == old[0] else f"{old[0]} -> {new[0]}"
                found.append(Difference(where, "changed", old[1], new[1]))
            elif new is not None:
                found.append(Difference(new[0], "is new", None, new[1]))
            elif old is not None:
                found.append(Difference(old[0], "is gone", old[1], None))
    return found


def _parent(path: str) -> str:
    """The path without its last index: ``state.done[2]`` -> ``state.done``."""
    return path[: path.rindex("[")] if path.endswith("]") else path

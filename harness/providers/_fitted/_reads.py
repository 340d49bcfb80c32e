"""What a fitted head reads of a question: one line of text per answer it gives.

A head never reads the whole state when a question is about one artifact:

* a selection (``select_<ref>``, a thinker's last question about each output candidate) reads
  that artifact's digest line in the state (``verdict#2 (verdict): {...}``), so the N selections
  of a request are N short texts encoded in one batched pass, and a state of 1,000 artifacts
  costs no more per selection than one of 10. The objective is not read: it is the same for
  every selection of a thinker, and adding it to the features did not separate them better in
  the measurements behind this design (docs/fitted.md);
* a thinker's ``next`` choice reads each option (a tool and what it does, or finish), and an
  input choice (``<tool>_input``) each candidate artifact's digest line with the tool's name;
* any other yes/no, choice or score reads the state as text (its string, or one ``key: value``
  line per field); a choice whose options vary from question to question reads each option's
  key and description with it.

A head is keyed by the role a question plays (:func:`head_key`): ``select``, ``next``,
``input``, and for any other question its kind with its instructions (refs like ``note#3``
masked), so two different yes/no questions of a pack get two heads.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Final

from harness.decision import Choice, DecisionRequest, Noul, Question, systemone
from harness.decision._internal import compact_json

__all__ = [
    "artifact_line",
    "head_key",
    "option_texts",
    "question_text",
    "request_key",
    "state_text",
]

_REF: Final = re.compile(r"\b[\w.-]+#\d+\b")
_SPACE: Final = re.compile(r"\s+")


def request_key(request: DecisionRequest) -> str:
    """A short digest of a request (its System One body): how a fitted file names the
    decisions it was fitted on, so an eval of one of them is refused."""
    body = systemone.encode_body(request, "fitted")
    return hashlib.sha256(body).hexdigest()[:16]


def head_key(question_id: str, question: Question) -> str:
    """The head a question is answered by: ``select``, ``next``, ``input``, else
    ``<kind>:<instructions>`` with refs masked and spaces collapsed."""
    if isinstance(question, Noul) and question_id.startswith("select_"):
        return "select"
    if isinstance(question, Choice):
        if question_id == "next":
            return "next"
        if question_id.endswith("_input"):
            return "input"
    words = _SPACE.sub(" ", _REF.sub("#", question.instructions)).strip()
    return f"{question.kind}:{words}"


def artifact_line(state: object, ref: str) -> str | None:
    """The digest line of ``ref`` in a thinker's state (``state["artifacts"]``), or ``None``."""
    if not isinstance(state, Mapping):
        return None
    lines = state.get("artifacts")
    if not isinstance(lines, Sequence) or isinstance(lines, str):
        return None
    head = f"{ref} "
    for line in lines:
        if isinstance(line, str) and line.startswith(head):
            return line
    return None


def state_text(state: object) -> str:
    """The state as text: a string as it is, a mapping as one ``key: value`` line per field
    (strings as they are, anything else as compact JSON), anything else as compact JSON."""
    if isinstance(state, str):
        return state
    if isinstance(state, Mapping):
        return "\n".join(
            f"{key}: {value if isinstance(value, str) else _json(value)}"
            for key, value in state.items()
        )
    return _json(state)


def _json(value: object) -> str:
    return compact_json(value)


def question_text(question_id: str, question: Question, state: object) -> str:
    """What a yes/no or score head reads (see the module's notes)."""
    if isinstance(question, Noul) and question_id.startswith("select_"):
        ref = question_id.removeprefix("select_")
        return artifact_line(state, ref) or ref
    return state_text(state)


def option_texts(question_id: str, question: Choice, state: object) -> dict[str, str]:
    """What a choice head reads of each option, by option key (see the module's notes)."""
    if question_id == "next":
        return {key: key if not text else f"{key}: {text}" for key, text in _options(question)}
    if question_id.endswith("_input"):
        tool = question_id.removesuffix("_input")
        return {
            key: f"{tool} takes {artifact_line(state, key) or key}" for key, _ in _options(question)
        }
    shown = state_text(state)
    return {
        key: f"{key}: {text}\n{shown}" if text else f"{key}\n{shown}"
        for key, text in _options(question)
    }


def _options(question: Choice) -> list[tuple[str, str]]:
    return [(key, text or "") for key, text in question.options.items()]

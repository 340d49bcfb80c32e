"""The question scheme: how a thinker's turn is put to the model, and what it repeats.

Both schemes ask what the seed asks, under the seed's ids, over the same state (the objective,
one digest line per artifact, the moves so far): ``next`` (the offered tools, then ``finish``
once a candidate exists), ``<tool>_input`` per offered tool over its candidate refs, and
``select_<ref>`` per output candidate. They differ in what the questions repeat of the state:

* ``"lean"`` (the default, version ``lean-1``): every digest line appears once per request, in
  the state. An input option is the ref with at most :data:`LABEL_WORDS` words of its digest
  (``"note#3": "alpha is due ..."``): the ref is the handle the state's line starts with, and the
  few words are for a model that reads an option apart from the state (sparrow-decider cuts a
  long state to its head and tail). A selection asks ``Does <ref> belong in the answer to the
  objective?`` with a yes and a no that name the ref, not its words. Nothing else is repeated,
  so the body grows with artifacts plus (offered tools x candidate refs), not (tools x lines).
* ``"verbose"`` (version ``verbose-0``, the scheme before): each input option carries the
  artifact's digest line, and each selection its digest words and a described yes and no.
* ``"shared"`` (version ``shared-1``, opt-in): the lean scheme, except that offered tools whose
  candidate refs are the same list share one input question, asked under the first one's id
  (``<tool>_input``) and naming them all (``If tool_a or tool_b runs, which artifact should it
  take?``); the winner's argument is read from its group's question (:func:`input_ids`). The
  body then grows with artifacts plus tools even when many tools take the same artifacts, at the
  price of asking one question where the seed asks one per tool: opt in where palettes are wide.

The scheme in use is recorded under the job metadata key :data:`OBS_QUESTION_SCHEME` (its
version), beside ``OBS_TURNS``. ``benchmarks/economy.py`` weighs the two on answers and tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Final, Literal, get_args

from harness.decision import Choice, DecisionRequest, Noul, Question

__all__ = [
    "DEFAULT_QUESTION_SCHEME",
    "OBS_QUESTION_SCHEME",
    "QUESTION_SCHEME_VERSIONS",
    "QuestionScheme",
    "build_request",
    "check_scheme",
    "input_ids",
    "label",
]

QuestionScheme = Literal["lean", "verbose", "shared"]
"""How a turn's questions are worded (see the module's notes)."""

DEFAULT_QUESTION_SCHEME: Final[QuestionScheme] = "lean"

QUESTION_SCHEME_VERSIONS: Final[Mapping[QuestionScheme, str]] = {
    "lean": "lean-1",
    "verbose": "verbose-0",
    "shared": "shared-1",
}
"""The version each scheme records: a scheme that changes what the model reads gets a new one."""

OBS_QUESTION_SCHEME: Final = "OBS_QUESTION_SCHEME"
"""The job metadata key under which a thinker records its question scheme's version."""

FINISH_OPTION: Final = "stop here and answer with the artifacts selected below"
NEXT_INSTRUCTIONS: Final = "Which move brings the objective closer?"

LABEL_WORDS: Final = 5
"""The most words of an artifact's digest an input option carries in the lean scheme."""

Move = tuple[str, str, Sequence[str]]
"""An offered tool: its name, its description, the refs it could take (world order)."""


def check_scheme(scheme: object) -> QuestionScheme:
    """``scheme`` as a :data:`QuestionScheme`, or ``ValueError`` naming the known ones."""
    for known in get_args(QuestionScheme):
        if scheme == known:
            chosen: QuestionScheme = known
            return chosen
    names = ", ".join(repr(s) for s in get_args(QuestionScheme))
    raise ValueError(f"question_scheme must be one of {names}, not {scheme!r}")


def build_request(
    scheme: QuestionScheme,
    *,
    objective: str,
    lines: Sequence[str],
    words: Mapping[str, str],
    line: Mapping[str, str],
    done: Sequence[str],
    moves: Sequence[Move],
    candidates: Sequence[str],
    option_limit: int | None = None,
    finish: str = "finish",
) -> DecisionRequest:
    """One turn's request under ``scheme``.

    ``lines`` are the world's digest lines in world order, ``line`` and ``words`` each ref's line
    and words; ``done`` the moves so far (empty before the first); ``moves`` the offered tools
    (none on a selection-only turn); ``candidates`` the output candidates' refs. An entry's
    ``option_limit`` (its ``max_options``) bounds each input choice to its first refs.
    """
    state = {
        "objective": objective,
        "artifacts": list(lines),
        "done": list(done) if done else ["nothing yet"],
    }
    lean = scheme != "verbose"
    asked_as = input_ids(scheme, moves)
    questions: dict[str, Question] = {}
    if moves:
        options: dict[str, str | None] = {}
        for name, description, refs in moves:
            count = len(refs)
            options[name] = (
                f"{description} ({count} {'artifact' if count == 1 else 'artifacts'} it could take)"
            )
        if candidates:
            options[finish] = FINISH_OPTION
        questions["next"] = Choice(NEXT_INSTRUCTIONS, options)
        for name, _, refs in moves:
            qid = asked_as[name]
            if qid != f"{name}_input":
                continue  # asked with its group, under the first one's id
            # An entry's max_options bounds a choice: offer the first candidates in world
            # order; the rest stay legal and come up as these are spent.
            offered = refs if option_limit is None else refs[:option_limit]
            group = [other for other, _, _ in moves if asked_as[other] == qid]
            questions[qid] = Choice(
                f"If {_either(group)} runs, which artifact should it take?",
                {ref: label(words[ref]) if lean else line[ref] for ref in offered},
            )
    for ref in candidates:
        asked = f"Does {ref} belong in the answer to the objective?"
        questions[f"select_{ref}"] = Noul(
            asked if lean else f"{asked} {ref}: {words[ref]}",
            when_true=f"{ref} belongs in the answer",
            when_false=f"{ref} does not belong in the answer",
        )
    return DecisionRequest(state, questions)


def input_ids(scheme: QuestionScheme, moves: Sequence[Move]) -> dict[str, str]:
    """The id of the question each offered tool's argument is read from: its own
    ``<tool>_input``, or under the shared scheme the first id of the tools with its refs."""
    ids: dict[str, str] = {}
    first: dict[tuple[str, ...], str] = {}
    for name, _, refs in moves:
        key = tuple(refs)
        if scheme == "shared":
            ids[name] = first.setdefault(key, f"{name}_input")
        else:
            ids[name] = f"{name}_input"
    return ids


def _either(names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


@functools.lru_cache(maxsize=1 << 16)
def label(words: str) -> str | None:
    """At most :data:`LABEL_WORDS` words of ``words`` (``...`` when cut), ``None`` for none.

    Memoized: a world's words repeat in every turn and in every tool's options."""
    split = words.split(maxsplit=LABEL_WORDS)
    if not split:
        return None
    if len(split) > LABEL_WORDS:
        return " ".join(split[:LABEL_WORDS]) + " ..."
    return " ".join(split)

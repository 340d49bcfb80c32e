"""The invariants of each request a run sent: its state (keys, objective, the artifact lines
the turns before it made), its questions (the legal moves, each tool's legal inputs cut at the
entry's ``max_options``, the candidates) and its ``done`` lines (what each move did, a failure
in the words its tool gives when run again).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.artifacts import digest_line
from harness.decision import DecisionRequest
from harness.testing._derived import STATE_KEYS, Rules, SeenWorld
from harness.testing._rerun import Rerun
from harness.testing._run_facts import RunReport, given_refs
from harness.testing._violation import InvariantKind, Problem
from harness.thinker import FINISH, DecisionTurn

__all__ = ["request_problems"]

K = InvariantKind


def _state_problems(rules: Rules, number: int, state: object, seen: SeenWorld) -> list[Problem]:
    out: list[Problem] = []
    if not isinstance(state, dict):
        return [
            Problem(
                K.STATE,
                f"request {number}: its state is a {type(state).__name__}, not the documented "
                f"object with keys {list(STATE_KEYS)}",
            )
        ]
    extra = [key for key in state if key not in STATE_KEYS]
    missing = [key for key in STATE_KEYS if key not in state]
    if extra or missing:
        out.append(
            Problem(
                K.STATE,
                f"request {number}: its state holds "
                + (f"undocumented keys {extra}" if extra else "")
                + (" and " if extra and missing else "")
                + (f"lacks the keys {missing}" if missing else "")
                + f" (the documented keys are {list(STATE_KEYS)})",
            )
        )
    thinker = rules.thinker
    expected_lines = [digest_line(ref, a, thinker.formatters) for ref, a in seen]
    lines = state.get("artifacts")
    if lines != expected_lines:
        out.append(Problem(K.STATE, _lines_problem(rules, number, lines, seen, expected_lines)))
    if state.get("objective") != thinker.objective:
        out.append(Problem(K.STATE, f"request {number}: its objective is not the thinker's"))
    return out


def _lines_problem(
    rules: Rules, number: int, lines: object, seen: SeenWorld, expected: Sequence[str]
) -> str:
    """What is wrong with a state's artifact lines, against the world the turns before it
    made (the input, then each earlier move's product)."""
    head = f"request {number}: its artifact lines are not the world's"
    if not isinstance(lines, list):
        return f"{head} (not a list of lines)"
    if len(lines) < len(expected) and lines == expected[: len(lines)]:
        missing = [ref for ref, _ in seen[len(lines) :]]
        return (
            f"{head}: it shows {len(lines)} line(s), the turns before it made {len(expected)} "
            f"(the input and each move's product); missing {rules.refs(missing)}"
        )
    if len(lines) > len(expected) and lines[: len(expected)] == list(expected):
        return (
            f"{head}: it shows {len(lines)} line(s), the turns before it made only {len(expected)}"
        )
    for index, (line, wanted) in enumerate(zip(lines, expected, strict=False), 1):
        if line != wanted:
            return f"{head}: line {index} is {line!r}, expected {wanted!r}"
    return f"{head}: {len(lines)} line(s) for the {len(expected)} the turns before it made"


def _expected_done(turn: DecisionTurn, rerun: Rerun | None) -> str:
    """The done line of ``turn``; a failure's explanation as re-derived by re-running the
    tool (``rerun``), else only its head (the checker then looks for the failure text)."""
    head = f"{turn.tool} on {turn.artifact}"
    if turn.result is not None:
        return f"{head} produced {turn.result}"
    if rerun is not None and rerun.explained is not None:
        return f"{head} failed: {rerun.explained}"
    return f"{head} failed: "


def _done_problems(
    rules: Rules, number: int, done: object, tool_turns: Sequence[DecisionTurn]
) -> list[Problem]:
    """Whether the ``done`` lines say what ran: tool, ref, product or readable failure."""
    if number == 1:
        if done != ["nothing yet"]:
            return [Problem(K.RECORD, f"request 1: 'done' is {done!r}, not ['nothing yet']")]
        return []
    if not isinstance(done, list) or not all(isinstance(line, str) for line in done):
        return [Problem(K.RECORD, f"request {number}: 'done' is not a list of lines")]
    if len(done) != len(tool_turns):
        return [
            Problem(
                K.RECORD,
                f"request {number}: 'done' holds {len(done)} line(s) for the "
                f"{len(tool_turns)} move(s) so far (one line per move)",
            )
        ]
    reruns = {r.turn: r for r in rules.report.reruns if r.unchecked is None}
    for index, (line, turn) in enumerate(zip(done, tool_turns, strict=True), 1):
        rerun = reruns.get(turn.turn)
        expected = _expected_done(turn, rerun)
        if turn.result is not None or (rerun is not None and rerun.explained is not None):
            ok = line == expected
            what = f"produced {turn.result}" if turn.result is not None else "failed"
            wanted = repr(expected)
        else:
            ok = line.startswith(expected) and (turn.failure or "") in line
            what = f"failed with {turn.failure!r}"
            wanted = f"{expected + '<the failure explained>'!r}"
        if not ok:
            return [
                Problem(
                    K.RECORD,
                    f"request {number}: done line {index} is {line!r}, but turn {turn.turn} ran "
                    f"{turn.tool} on {rules.ref(turn.artifact)} and {what}: expected {wanted}",
                )
            ]
    return []


def request_problems(
    rules: Rules, number: int, request: DecisionRequest, report: RunReport
) -> list[Problem]:
    """Problems of request ``number``."""
    out: list[Problem] = []
    thinker = rules.thinker
    state = request.state
    seen = rules.seen_at(number)  # from the turns before it, never from the state's length
    out += _state_problems(rules, number, state, seen)
    tool_turns = [t for t in report.turns[: number - 1] if t.tool != FINISH]
    spent = {(t.tool, t.artifact or "") for t in tool_turns}
    moves = rules.moves(seen, spent)
    candidates = rules.candidates(seen)
    budget_spent = number > thinker.max_turns
    questions = list(request.questions)
    selects = [f"select_{ref}" for ref in candidates]
    given = given_refs(seen, rules.input)
    for qid in questions:
        ref = qid.removeprefix("select_")
        if qid.startswith("select_") and ref in given:
            out.append(
                Problem(
                    K.ANSWER,
                    f"request {number}: {rules.ref(ref)} is offered as a candidate ({qid}); only "
                    "what tools produced can be an answer, never the input nor its items",
                )
            )
    if "next" in request.questions:
        if budget_spent:
            out.append(
                Problem(
                    K.MOVES, f"request {number}: asks 'next' past the budget of {thinker.max_turns}"
                )
            )
        offered = request.questions["next"]
        options = list(getattr(offered, "options", {}))
        legal = list(moves) + ([FINISH] if candidates else [])
        if options != legal:
            out.append(
                Problem(
                    K.MOVES,
                    f"request {number}: 'next' offers {options}, the legal moves are {legal} "
                    "(finish only once an output candidate exists; candidates: "
                    f"{rules.refs(candidates)})",
                )
            )
        expected = ["next", *(f"{name}_input" for name in moves), *selects]
        known = {ref for ref, _ in seen}
        for name in dict.fromkeys([*(o for o in options if o != FINISH), *moves]):
            refs = rules.offered(moves.get(name, []))
            asked = request.questions.get(f"{name}_input")
            asked_refs = list(getattr(asked, "options", {}))
            if asked_refs == refs:
                continue
            again = [ref for ref in asked_refs if (name, ref) in spent]
            ghosts = [ref for ref in asked_refs if ref not in known]
            out.append(
                Problem(
                    K.MOVES,
                    f"request {number}: {name}_input offers {rules.refs(asked_refs)}, the legal "
                    f"inputs are {rules.refs(refs)} (a list only to a list-taking tool"
                    + (
                        f"; the first {rules.report.max_options} legal refs in world order, the "
                        "entry's max_options"
                        if rules.report.max_options is not None
                        else ""
                    )
                    + ")"
                    + (
                        f"; offers spent pairs again: {[(name, rules.ref(r)) for r in again]}"
                        if again
                        else ""
                    )
                    + (f"; not in the world: {ghosts}" if ghosts else ""),
                )
            )
    else:
        if not candidates or (moves and not budget_spent):
            out.append(
                Problem(
                    K.MOVES,
                    f"request {number}: a selection-only request, but moves {list(moves)} remain "
                    f"within the budget or nothing is a candidate ({rules.refs(candidates)})",
                )
            )
        expected = selects
    if questions != expected:
        out.append(
            Problem(K.MOVES, f"request {number}: asks {questions}, expected exactly {expected}")
        )
    done = state.get("done") if isinstance(state, dict) else None
    out += _done_problems(rules, number, done, tool_turns)
    return out

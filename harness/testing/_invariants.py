"""The decision thinker's invariants, checked on a recorded run (ARCHITECTURE.md section 8).

:func:`invariant_problems` lists every broken invariant of a :class:`RunReport`, recomputing
the legal moves, the candidates, the ``done`` lines and the answer from the palette, the world
and the answers the model gave (never from the thinker's own bookkeeping);
:func:`assert_invariants` runs a thinker (twice: the second run must repeat the first byte for
byte) and raises :class:`InvariantViolation`; :func:`check_thinker` does it under hypothesis for
a thinker factory and a strategy of inputs, with every run bounded in decisions and in time.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Never

import hypothesis
import hypothesis.errors
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from harness.artifacts import Artifact, ListArtifact, conforms, digest_line
from harness.decision import Answer, ChoiceAnswer, DecisionRequest, NoulAnswer
from harness.decision import systemone as systemone_codec
from harness.providers import Policy
from harness.testing._policy import RandomPolicy
from harness.testing._reproducible import DEFAULT_RUN_TIMEOUT, reproducibility_problems
from harness.testing._run_report import (
    ENTRY,
    Hang,
    RunReport,
    given_refs,
    ref_of,
    report_run,
    user_frames,
)
from harness.testing._violation import InvariantKind, InvariantViolation, Problem
from harness.testing._wall_clock import RunHung, guarded
from harness.testing.strategies import policies as drawn_policies
from harness.thinker import FINISH, DecisionThinker, DecisionTurn, parse_turns
from harness.tools import ClassToolProvider, Identifiable, Workflow, runtime_class

__all__ = [
    "STATE_KEYS",
    "InvariantViolation",
    "assert_invariants",
    "check_thinker",
    "invariant_problems",
    "replay_problems",
    "takes",
]

World = Sequence[tuple[str, Artifact]]
K = InvariantKind

_FLAKY_RUNS: Final = 4

STATE_KEYS: Final = ("objective", "artifacts", "done")
"""The documented keys of a request's state, in order (ARCHITECTURE.md section 8)."""


def takes(provider: ClassToolProvider[Never, Artifact], artifact: Artifact) -> bool:
    """Whether ``provider``'s tool takes ``artifact`` (a list only when it takes a list)."""
    takes_list = issubclass(runtime_class(provider.input_type), ListArtifact)
    if isinstance(artifact, ListArtifact) and not takes_list:
        return False
    return conforms(artifact, provider.input_type)


class _Rules:
    """The moves and candidates the spec allows, recomputed from the palette and a world."""

    def __init__(self, report: RunReport) -> None:
        self.report = report
        self.thinker = report.thinker
        self.input = report.input
        self.given = given_with(report.input)
        self.providers = [ClassToolProvider(cls) for cls in report.thinker.palette]

    def moves(self, world: World, spent: set[tuple[str, str]]) -> dict[str, list[str]]:
        moves: dict[str, list[str]] = {}
        for provider in self.providers:
            refs = [
                ref for ref, a in world if (provider.name, ref) not in spent and takes(provider, a)
            ]
            if refs:
                moves[provider.name] = refs
        return moves

    def candidates(self, world: World) -> list[str]:
        output = self.thinker.output_type
        return [ref for ref, a in world if id(a) not in self.given and isinstance(a, output)]

    def legal_pairs(self, world: World) -> int:
        return sum(1 for p in self.providers for _, a in world if takes(p, a))

    def refs(self, refs: Iterable[str]) -> str:
        """Refs as text, the input's marked as such."""
        return self.report.describe_refs(refs)

    def ref(self, ref: str | None) -> str:
        return self.report.describe_ref(ref) if ref is not None else "nothing"


def given_with(input: Artifact) -> frozenset[int]:
    """The identities of the input and the iterands it brings (recursively): never candidates,
    since only what a tool produced can be an answer."""
    given: set[int] = set()
    pending = [input]
    while pending:
        artifact = pending.pop()
        given.add(id(artifact))
        if isinstance(artifact, ListArtifact):
            pending.extend(artifact.iterands)
    return frozenset(given)


def _state_problems(rules: _Rules, number: int, state: object, seen: World) -> list[Problem]:
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
    if state.get("artifacts") != expected_lines:
        out.append(Problem(K.STATE, f"request {number}: its artifact lines are not the world's"))
    if state.get("objective") != thinker.objective:
        out.append(Problem(K.STATE, f"request {number}: its objective is not the thinker's"))
    return out


def _expected_done(turn: DecisionTurn) -> str:
    head = f"{turn.tool} on {turn.artifact}"
    return f"{head} produced {turn.result}" if turn.result is not None else f"{head} failed: "


def _done_problems(
    rules: _Rules, number: int, done: object, tool_turns: Sequence[DecisionTurn]
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
    for index, (line, turn) in enumerate(zip(done, tool_turns, strict=True), 1):
        expected = _expected_done(turn)
        if turn.result is not None:
            ok = line == expected
            what = f"produced {turn.result}"
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


def _request_problems(
    rules: _Rules, number: int, request: DecisionRequest, world: World, report: RunReport
) -> list[Problem]:
    """Problems of request ``number``."""
    out: list[Problem] = []
    thinker = rules.thinker
    state = request.state
    lines = state.get("artifacts") if isinstance(state, dict) else None
    if not isinstance(lines, list) or len(lines) > len(world):
        out += _state_problems(rules, number, state, ())
        out.append(
            Problem(K.STATE, f"request {number}: its artifacts are not a prefix of the world")
        )
        return out
    seen = world[: len(lines)]
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
            refs = moves.get(name, [])
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
                    f"inputs are {rules.refs(refs)} (a list only to a list-taking tool)"
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


def _choice(answer: Answer | None) -> ChoiceAnswer | None:
    return answer if isinstance(answer, ChoiceAnswer) else None


def _recorded(
    number: int, what: str, recorded: Mapping[str, float] | None, answer: ChoiceAnswer | None
) -> list[Problem]:
    """Whether a turn recorded the distribution the response gave."""
    gave = None if answer is None else dict(answer.probabilities)
    got = None if recorded is None else dict(recorded)
    if got == gave:
        return []
    return [
        Problem(
            K.RECORD,
            f"turn {number}: records {what} probabilities {got}, the model's response gave {gave}",
        )
    ]


def _turn_problems(rules: _Rules, report: RunReport, world: World) -> list[Problem]:
    out: list[Problem] = []
    refs = {ref: a for ref, a in world}
    pairs: set[tuple[str, str]] = set()
    providers = {p.name: p for p in rules.providers}
    for index, turn in enumerate(report.turns):
        if turn.turn != index + 1:
            out.append(Problem(K.RECORD, f"turn {index + 1} is numbered {turn.turn}"))
        if turn.tool == FINISH:
            continue
        given = report.answers[index] if index < len(report.answers) else {}
        chosen, argument = _choice(given.get("next")), _choice(given.get(f"{turn.tool}_input"))
        if chosen is None or chosen.choice != turn.tool:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: ran {turn.tool}, the model chose "
                    f"{chosen and chosen.choice}",
                )
            )
        if argument is None or argument.choice != turn.artifact:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: ran on {rules.ref(turn.artifact)}, the model chose "
                    f"{rules.ref(argument.choice if argument is not None else None)}",
                )
            )
        else:
            out += _recorded(turn.turn, "'next'", turn.next, chosen)
            out += _recorded(turn.turn, f"'{turn.tool}_input'", turn.argument, argument)
        pair = (turn.tool, turn.artifact or "")
        if pair in pairs:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: the pair ({turn.tool}, {rules.ref(turn.artifact)}) "
                    "ran twice",
                )
            )
        pairs.add(pair)
        if turn.artifact not in refs:
            out.append(
                Problem(
                    K.MOVES, f"turn {turn.turn}: ran on {turn.artifact}, which is not in the world"
                )
            )
        if (turn.result is None) == (turn.failure is None):
            out.append(
                Problem(K.RECORD, f"turn {turn.turn}: needs exactly one of a result and a failure")
            )
        product = refs.get(turn.result or "")
        provider = providers.get(turn.tool)
        if turn.result is not None and (
            product is None or provider is None or not conforms(product, provider.output_type)
        ):
            out.append(
                Problem(K.RECORD, f"turn {turn.turn}: its result {turn.result} is not a product")
            )
    return out


def _finish_problems(rules: _Rules, report: RunReport, world: World) -> list[Problem]:
    thinker, answer = rules.thinker, report.answer
    if answer is None:
        return []
    out: list[Problem] = []
    finishes = [t for t in report.turns if t.tool == FINISH]
    if len(finishes) != 1 or report.turns[-1].tool != FINISH:
        return [
            Problem(
                K.RECORD,
                f"a completed run ends with exactly one finish turn, not {len(finishes)}",
            )
        ]
    last = report.turns[-1]
    asked = len(report.requests) == len(report.turns)
    if not asked and len(report.requests) != len(report.turns) - 1:
        out.append(
            Problem(K.RECORD, f"{len(report.requests)} decisions for {len(report.turns)} turns")
        )
    answer_refs = [ref for ref, a in world if a is answer]
    before = report.world_before_answer
    candidates = rules.candidates(before)
    selection: dict[str, float] = {}
    if asked:
        given = report.answers[-1] if report.answers else {}
        chosen = _choice(given.get("next"))
        if "next" in report.requests[-1].questions:
            if chosen is None or chosen.choice != FINISH:
                out.append(
                    Problem(
                        K.MOVES,
                        "the last request's 'next' was not answered finish, yet the run finished",
                    )
                )
            else:
                out += _recorded(last.turn, "'next'", last.next, chosen)
        elif last.next is not None:
            out.append(
                Problem(
                    K.RECORD,
                    f"turn {last.turn}: a selection-only turn records 'next' probabilities "
                    f"{dict(last.next)}, though 'next' was not asked",
                )
            )
        for ref in candidates:
            noul = given.get(f"select_{ref}")
            selection[ref] = noul.probability if isinstance(noul, NoulAnswer) else -1.0
    elif candidates or (
        rules.moves(before, {(t.tool, t.artifact or "") for t in report.turns[:-1]})
        and last.turn <= thinker.max_turns
    ):
        out.append(
            Problem(K.MOVES, "the run finished without asking while moves or candidates remained")
        )
    if list(last.selection.items()) != list(selection.items()):
        out.append(
            Problem(
                K.RECORD,
                f"the finish turn records selection {dict(last.selection)}, the model's response "
                f"gave {selection}",
            )
        )
    wanted = [refs for refs, p in selection.items() if p >= thinker.selection_threshold]
    got = [ref_of(world, item) for item in answer.iterands]
    if got != wanted:
        out.append(
            Problem(
                K.ANSWER,
                f"the answer is {rules.refs(got)}; the candidates selected at >= "
                f"{thinker.selection_threshold} in world order are {rules.refs(wanted)}",
            )
        )
    inside = [ref_of(world, item) for item in answer.iterands if id(item) in rules.given]
    if inside:
        out.append(
            Problem(
                K.ANSWER,
                f"the answer holds {rules.refs(inside)}: the input and its items are never an "
                "answer",
            )
        )
    if not answer_refs:
        out.append(Problem(K.ANSWER, "the answer is not registered in the run's world"))
    if answer.instruction != thinker.objective or answer.iterand_type is not thinker.output_type:
        out.append(
            Problem(
                K.ANSWER,
                "the answer's instruction is not the objective or its type not the output type",
            )
        )
    return out


def _crash_site(report: RunReport) -> str:
    """Where an unexpected failure came from: a tool's move, else the thinker."""
    decisions = len(report.requests)
    if report.answers and len(report.turns) == decisions - 1 and len(report.answers) == decisions:
        given = report.answers[-1]
        chosen = _choice(given.get("next"))
        if chosen is not None and chosen.choice != FINISH:
            argument = _choice(given.get(f"{chosen.choice}_input"))
            ref = report.describe_ref(argument.choice) if argument is not None else "?"
            return f"tool {chosen.choice} on {ref} (the move of request {decisions})"
    return "the thinker or the dispatcher"


def _end_problems(
    report: RunReport, expected_errors: tuple[type[BaseException], ...]
) -> list[Problem]:
    thinker = report.thinker
    decisions = len(report.requests)
    if report.hang is not None:
        return [
            Problem(
                K.HANG,
                f"the run did not end within {report.hang.seconds:g} s: {report.hang.during} "
                "did not return (where it waited is below)",
            )
        ]
    if report.runaway:
        return [
            Problem(
                K.TERMINATION,
                f"the run asked for decision {decisions}, past max_turns + 1 = "
                f"{thinker.max_turns + 1}: it does not stop within its budget (the checker "
                "refused that decision and stopped the run; the run so far is below)",
            )
        ]
    if report.error is None:
        return []
    if not isinstance(report.error, expected_errors):
        error = report.error
        return [
            Problem(
                K.CRASH,
                f"the run failed in {_crash_site(report)}: {type(error).__qualname__}: {error} "
                "(its traceback is below)",
            )
        ]
    if len(report.turns) != decisions - 1 or any(t.tool == FINISH for t in report.turns):
        return [
            Problem(
                K.RECORD, "a tool's unreadable failure left a turn behind (or came after finish)"
            )
        ]
    return []


def invariant_problems(
    report: RunReport, *, expected_errors: tuple[type[BaseException], ...] = ()
) -> list[Problem]:
    """Every invariant ``report``'s run broke (empty when it kept them all), each a
    :class:`Problem` (a ``str`` with a ``kind``), the most telling first.

    A run failing with one of ``expected_errors`` (a tool's unreadable failure) is legal when it
    failed on the tool move of its last request, with no turn recorded for that move.
    """
    thinker = report.thinker
    rules = _Rules(report)
    world = report.world
    out = _end_problems(report, expected_errors)
    if report.hang is not None:
        return out  # a run cut short: the hang is the finding, the rest is partial
    if not world or world[0][1] is not report.input:
        out.append(Problem(K.STATE, "the input is not the first artifact of the world"))
    decisions = len(report.requests)
    if decisions > thinker.max_turns + 1 and not report.runaway:
        out.append(
            Problem(
                K.TERMINATION,
                f"{decisions} decisions exceed max_turns + 1 = {thinker.max_turns + 1}",
            )
        )
    # The legal pairs of the world the decisions saw: the answer list, adopted after the last
    # decision, would count as one more input for a list-taking tool.
    pairs = rules.legal_pairs(report.world_before_answer)
    if decisions > pairs + 1:
        out.append(
            Problem(
                K.TERMINATION, f"{decisions} decisions exceed the legal pairs + 1 = {pairs + 1}"
            )
        )
    for number, request in enumerate(report.requests, 1):
        out += _request_problems(rules, number, request, world, report)
    out += _turn_problems(rules, report, world)
    if not report.stopped:
        out += _finish_problems(rules, report, world)
    if report.obs_turns is None:
        if report.turns:
            out.append(Problem(K.RECORD, "OBS_TURNS was not published"))
    else:
        try:
            recorded = parse_turns(report.obs_turns)
        except ValueError as error:
            out.append(Problem(K.RECORD, f"OBS_TURNS does not parse: {error}"))
        else:
            if recorded != report.turns:
                out.append(Problem(K.RECORD, "OBS_TURNS does not equal thinker.turns()"))
    return out


def violation_of(report: RunReport, problems: Sequence[Problem]) -> InvariantViolation:
    """The violation for ``problems`` of ``report``'s run, with the failure's traceback into
    the user's code when the run crashed (and the failure as its ``__cause__``)."""
    details = ""
    error = report.error
    if error is not None and any(p.kind is K.CRASH for p in problems):
        frames = user_frames(traceback.extract_tb(error.__traceback__))
        details = (
            "the failure's traceback (its frames outside harness and asyncio):\n"
            f"{frames}\n{type(error).__qualname__}: {error}"
        )
    raised = InvariantViolation(problems, report, details=details)
    raised.__cause__ = error if details else None
    return raised


class _Replay:
    """A policy answering request n with what the first run's model answered to request n, as
    long as request n is byte for byte the first run's (else it refuses, naming the request)."""

    def __init__(self, first: RunReport) -> None:
        self.first = first
        self.asked = 0

    def __call__(self, request: DecisionRequest) -> Mapping[str, Answer]:
        number = self.asked
        self.asked += 1
        body = systemone_codec.encode_body(request, ENTRY.wire_model_id)
        if number >= len(self.first.answers) or body != self.first.bodies[number]:
            raise _Diverged(
                f"request {number + 1} is not the first run's request {number + 1}: the replay "
                "has no answer for it"
            )
        return self.first.answers[number]


class _Diverged(Exception):
    """The replayed run asked something the first run did not."""


def replay_problems(first: RunReport, second: RunReport) -> tuple[list[Problem], str]:
    """Whether ``second`` (the same example, answered by replaying ``first``'s answers) gave
    the same bytes: problems and the diff of the first part that differs."""
    if second.hang is not None:
        problem = Problem(
            K.HANG,
            f"run 2 of the same example did not end within {second.hang.seconds:g} s: "
            f"{second.hang.during} did not return, though run 1 did",
        )
        return [problem], f"where run 2 hung:\n{second.hang.stack}"
    return reproducibility_problems(first.fingerprint(), second.fingerprint())


async def assert_invariants(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    *,
    expected_errors: tuple[type[BaseException], ...] = (),
    again: DecisionThinker[Any, Any] | None = None,  # any thinker
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT,
) -> RunReport:
    """Run ``thinker`` on ``input`` (dispatcher, fake model answering by ``policy``) and raise
    :class:`InvariantViolation` if the run broke an invariant; then run the example again
    (on ``again``, a fresh thinker, else on ``thinker`` itself) with the same answers and raise
    if it did not repeat byte for byte. Returns the first run's report.

    Runs are bounded at ``max_turns + 1`` decisions and ``run_timeout`` seconds each (waiting
    code is cancelled; blocking code is interrupted in the main thread).
    """
    first = await _guarded_record(thinker, input, policy, run_timeout)
    problems = invariant_problems(first, expected_errors=expected_errors)
    if problems:
        raise violation_of(first, problems)
    second = await _guarded_record(again or thinker, input, _Replay(first), run_timeout)
    problems, details = replay_problems(first, second)
    if problems:
        raise InvariantViolation(problems, first, details=details)
    return first


async def _guarded_record(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    run_timeout: float | None,
) -> RunReport:
    if run_timeout is None:
        return await report_run(thinker, input, policy)
    try:
        with guarded(run_timeout):
            return await report_run(thinker, input, policy, run_timeout=run_timeout)
    except RunHung:
        return _blocked(thinker, input, run_timeout)


def _blocked(thinker: DecisionThinker[Any, Any], input: Artifact, seconds: float) -> RunReport:
    """The report of a run interrupted outside its own handling (it blocked while ending)."""
    return RunReport(
        thinker=thinker,
        input=input,
        requests=(),
        answers=(),
        bodies=(),
        turns=thinker.turns(),
        obs_turns=None,
        world=tuple(thinker.registry.world()),
        answer=None,
        error=None,
        hang=Hang(seconds, "the run (blocking while it shut down)", ""),
    )


def _run(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    input: Artifact,
    policy: Policy,
    run_timeout: float,
) -> RunReport:
    """One run of a fresh thinker in its own event loop, bounded in decisions and time."""
    thinker = factory(Workflow())
    try:
        with guarded(run_timeout):
            return asyncio.run(report_run(thinker, input, policy, run_timeout=run_timeout))
    except RunHung:
        return _blocked(thinker, input, run_timeout)


class _KeyedDatabase(ExampleDatabase):
    """Another example database seen under a prefix: each key is the prefix plus hypothesis's
    own key, so tests with the same source (one per thinker factory) keep apart entries."""

    def __init__(self, inner: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self._inner = inner
        self._prefix = prefix

    def save(self, key: bytes, value: bytes) -> None:
        """Save ``value`` under the prefixed ``key``."""
        self._inner.save(self._prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        """The values saved under the prefixed ``key``."""
        return self._inner.fetch(self._prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        """Delete ``value`` from the prefixed ``key``."""
        self._inner.delete(self._prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        """Move ``value`` between the prefixed keys."""
        self._inner.move(self._prefix + src, self._prefix + dest, value)

    def __repr__(self) -> str:
        return f"_KeyedDatabase({self._inner!r}, {self._prefix.hex()[:12]}...)"


def _factory_key(factory: Callable[..., object]) -> bytes:
    """What keeps one factory's saved examples apart from another's: a digest of its module
    and qualified name (two factories with one ``__qualname__`` in two modules differ)."""
    module = getattr(factory, "__module__", None) or type(factory).__module__
    name = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return hashlib.sha256(f"{module}:{name}".encode()).digest()[:16]


class _Unshrinkable(BaseException):
    """Carries a violation out of hypothesis without shrinking: a hang costs the limit on every
    try, and a run that does not repeat itself cannot be shrunk (hypothesis would report its
    own flakiness instead). Not an ``Exception``, so hypothesis lets it through."""

    def __init__(self, violation: InvariantViolation) -> None:
        super().__init__(str(violation))
        self.violation = violation


def _after_flaky(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    last: list[tuple[Artifact, RunReport]],
    run_timeout: float,
    flaky: hypothesis.errors.Flaky,
) -> InvariantViolation:
    """Hypothesis saw one example take two paths: run the last input again, under one seeded
    policy, a few times on fresh thinkers, to show how the runs differ."""
    seen = (
        f"hypothesis replayed an example and the run took another path "
        f"({type(flaky).__name__}): something in the thinker, its tools or the policy is not a "
        "function of the example"
    )
    if last:
        input = last[-1][0]
        runs: list[RunReport] = []
        for number in range(1, _FLAKY_RUNS + 1):
            report = _run(factory, input, RandomPolicy(random.Random(0), label="0"), run_timeout)
            if runs:
                labels = ("run 1", f"run {number}")
                problems, details = reproducibility_problems(
                    runs[0].fingerprint(), report.fingerprint(), labels
                )
                if problems:
                    shown = f"{seen}; the last input, run again under one seeded policy:\n{details}"
                    return InvariantViolation(problems, runs[0], details=shown)
            runs.append(report)
    problem = Problem(
        K.REPRODUCIBILITY,
        f"not reproducible: {seen}; running the last input again did not show the difference "
        "(look for an unseeded random, the clock, a counter or id() in a tool or a policy)",
    )
    return InvariantViolation([problem], last[-1][1] if last else None)


def check_thinker(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    inputs: st.SearchStrategy[Artifact],
    *,
    policies: st.SearchStrategy[Policy] | None = None,
    expected_errors: tuple[type[BaseException], ...] = (),
    settings: hypothesis.settings | None = None,
    run_timeout: float = DEFAULT_RUN_TIMEOUT,
) -> None:
    """Property-test a thinker: for drawn inputs and policies, every run keeps the invariants
    and runs the same way twice.

    Call it from a plain (not async) test. ``factory`` builds a fresh thinker for each run
    (e.g. the thinker class itself); ``policies`` defaults to
    :func:`harness.testing.strategies.policies` (every answer drawn). Each example runs twice
    (the second time on a fresh thinker, answered with the first run's answers) and must give
    the same wire bodies, turns, ``OBS_TURNS`` and world byte for byte. Every run is bounded:
    the decision past ``max_turns + 1`` stops it, and one still running after ``run_timeout``
    seconds is stopped and reported with where it waited.

    A failure raises :class:`InvariantViolation` (``kind`` says which promise broke): shrunk
    for a broken invariant, as first found for a hang or a run that did not repeat (those
    cannot be shrunk). Examples are saved in the settings' database under a key of the
    factory's module and qualified name, so two factories never replay each other's examples.
    """
    if run_timeout <= 0:
        raise ValueError(f"run_timeout must be a positive number of seconds, got {run_timeout!r}")
    drawn: st.SearchStrategy[Policy] = policies if policies is not None else drawn_policies()
    last: list[tuple[Artifact, RunReport]] = []

    @given(input=inputs, policy=drawn)
    def thinker_keeps_its_invariants(input: Artifact, policy: Policy) -> None:
        first = _run(factory, input, policy, run_timeout)
        last[:] = [(input, first)]
        if isinstance(first.error, hypothesis.errors.Flaky):
            raise first.error  # hypothesis's own verdict on a draw; read below
        problems = invariant_problems(first, expected_errors=expected_errors)
        if first.hang is not None:
            raise _Unshrinkable(violation_of(first, problems))
        if problems:
            raise violation_of(first, problems)
        second = _run(factory, input, _Replay(first), run_timeout)
        problems, details = replay_problems(first, second)
        if problems:
            raise _Unshrinkable(InvariantViolation(problems, first, details=details))

    chosen = settings or hypothesis.settings(deadline=None)
    database = chosen.database
    if database is not None:
        chosen = hypothesis.settings(
            chosen, database=_KeyedDatabase(database, _factory_key(factory))
        )
    try:
        chosen(thinker_keeps_its_invariants)()
    except _Unshrinkable as escaped:
        raise escaped.violation from escaped.violation.__cause__
    except hypothesis.errors.Flaky as flaky:
        raise _after_flaky(factory, last, run_timeout, flaky) from flaky

"""The decision thinker's invariants, checked on a recorded run (ARCHITECTURE.md section 8).

:func:`invariant_problems` lists every broken invariant of a :class:`RunReport`, recomputing
the legal moves, the candidates and the answer from the palette, the world and the answers the
policy gave (never from the thinker's own bookkeeping); :func:`assert_invariants` runs a thinker
and raises :class:`InvariantViolation` (an ``AssertionError`` carrying the problems and the run
as text); :func:`check_thinker` does it under hypothesis for a thinker factory and a strategy of
inputs.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Never

import hypothesis
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from harness.artifacts import Artifact, ListArtifact, conforms, digest_line
from harness.deciding import FINISH, DecisionThinker, parse_turns
from harness.decision import Answer, ChoiceAnswer, DecisionRequest, NoulAnswer
from harness.llm._fake import Policy
from harness.testing._run_report import RunReport, record_run, ref_of
from harness.testing.strategies import policies as drawn_policies
from harness.tools import ClassToolProvider, Identifiable, Workflow, runtime_class

__all__ = [
    "InvariantViolation",
    "assert_invariants",
    "check_thinker",
    "invariant_problems",
    "takes",
]

World = Sequence[tuple[str, Artifact]]


class InvariantViolation(AssertionError):
    """A run broke the thinker's invariants: ``problems`` says which, ``report`` shows the run."""

    def __init__(self, problems: Sequence[str], report: RunReport) -> None:
        self.problems = tuple(problems)
        self.report = report
        listed = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(
            f"the run broke {len(self.problems)} invariant(s):\n{listed}\n\n{report.render()}"
        )


def takes(provider: ClassToolProvider[Never, Artifact], artifact: Artifact) -> bool:
    """Whether ``provider``'s tool takes ``artifact`` (a list only when it takes a list)."""
    takes_list = issubclass(runtime_class(provider.input_type), ListArtifact)
    if isinstance(artifact, ListArtifact) and not takes_list:
        return False
    return conforms(artifact, provider.input_type)


class _Rules:
    """The moves and candidates the spec allows, recomputed from the palette and a world."""

    def __init__(self, thinker: DecisionThinker[Any, Any], input: Artifact) -> None:
        self.thinker = thinker
        self.input = input
        self.given = given_with(input)
        self.providers = [ClassToolProvider(cls) for cls in thinker.palette]

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


def _request_problems(
    rules: _Rules, number: int, request: DecisionRequest, world: World, report: RunReport
) -> tuple[list[str], int]:
    """Problems of request ``number``; also the size of the world it saw."""
    out: list[str] = []
    thinker = rules.thinker
    state = request.state if isinstance(request.state, dict) else {}
    lines = state.get("artifacts")
    if not isinstance(lines, list) or len(lines) > len(world):
        return [f"request {number}: its state's artifacts are not a prefix of the world"], 0
    seen = world[: len(lines)]
    expected_lines = [digest_line(ref, a, thinker.formatters) for ref, a in seen]
    if lines != expected_lines:
        out.append(f"request {number}: its artifact lines are not the world's digest lines")
    if state.get("objective") != thinker.objective:
        out.append(f"request {number}: its state's objective is not the thinker's")
    tool_turns = [t for t in report.turns[: number - 1] if t.tool != FINISH]
    spent = {(t.tool, t.artifact or "") for t in tool_turns}
    moves = rules.moves(seen, spent)
    candidates = rules.candidates(seen)
    budget_spent = number > thinker.max_turns
    questions = list(request.questions)
    selects = [f"select_{ref}" for ref in candidates]
    if "next" in request.questions:
        if budget_spent:
            out.append(f"request {number}: asks 'next' past the budget of {thinker.max_turns}")
        offered = request.questions["next"]
        options = list(getattr(offered, "options", {}))
        legal = list(moves) + ([FINISH] if candidates else [])
        if options != legal:
            out.append(
                f"request {number}: 'next' offers {options}, the legal moves are {legal} "
                f"(finish only once an output candidate exists; candidates: {candidates})"
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
                f"request {number}: {name}_input offers {asked_refs}, the legal inputs are "
                f"{refs} (a list only to a list-taking tool)"
                + (f"; offers spent pairs again: {[(name, r) for r in again]}" if again else "")
                + (f"; not in the world: {ghosts}" if ghosts else "")
            )
    else:
        if not candidates or (moves and not budget_spent):
            out.append(
                f"request {number}: a selection-only request, but moves {list(moves)} remain "
                f"within the budget or nothing is a candidate ({candidates})"
            )
        expected = selects
    if questions != expected:
        out.append(f"request {number}: asks {questions}, expected exactly {expected}")
    done = state.get("done")
    if number == 1 and done != ["nothing yet"]:
        out.append(f"request 1: 'done' is {done!r}, not ['nothing yet']")
    if number > 1 and (not isinstance(done, list) or len(done) != len(tool_turns)):
        out.append(f"request {number}: 'done' does not hold one line per move so far")
    return out, len(seen)


def _choice(answer: Answer | None) -> ChoiceAnswer | None:
    return answer if isinstance(answer, ChoiceAnswer) else None


def _turn_problems(rules: _Rules, report: RunReport, world: World) -> list[str]:
    out: list[str] = []
    refs = {ref: a for ref, a in world}
    pairs: set[tuple[str, str]] = set()
    providers = {p.name: p for p in rules.providers}
    for index, turn in enumerate(report.turns):
        if turn.turn != index + 1:
            out.append(f"turn {index + 1} is numbered {turn.turn}")
        if turn.tool == FINISH:
            continue
        given = report.answers[index] if index < len(report.answers) else {}
        chosen, argument = _choice(given.get("next")), _choice(given.get(f"{turn.tool}_input"))
        if chosen is None or chosen.choice != turn.tool:
            out.append(
                f"turn {turn.turn}: ran {turn.tool}, the model chose {chosen and chosen.choice}"
            )
        if argument is None or argument.choice != turn.artifact:
            out.append(f"turn {turn.turn}: ran on {turn.artifact}, the model chose another input")
        pair = (turn.tool, turn.artifact or "")
        if pair in pairs:
            out.append(f"turn {turn.turn}: the pair {pair} ran twice")
        pairs.add(pair)
        if turn.artifact not in refs:
            out.append(f"turn {turn.turn}: ran on {turn.artifact}, which is not in the world")
        if (turn.result is None) == (turn.failure is None):
            out.append(f"turn {turn.turn}: needs exactly one of a result and a failure")
        product = refs.get(turn.result or "")
        provider = providers.get(turn.tool)
        if turn.result is not None and (
            product is None or provider is None or not conforms(product, provider.output_type)
        ):
            out.append(f"turn {turn.turn}: its result {turn.result} is not a registered product")
    return out


def _finish_problems(rules: _Rules, report: RunReport, world: World) -> list[str]:
    thinker, answer = rules.thinker, report.answer
    if answer is None:
        return []
    out: list[str] = []
    finishes = [t for t in report.turns if t.tool == FINISH]
    if len(finishes) != 1 or report.turns[-1].tool != FINISH:
        return [f"a completed run ends with exactly one finish turn, not {len(finishes)}"]
    last = report.turns[-1]
    asked = len(report.requests) == len(report.turns)
    if not asked and len(report.requests) != len(report.turns) - 1:
        out.append(f"{len(report.requests)} decisions for {len(report.turns)} turns")
    answer_refs = [ref for ref, a in world if a is answer]
    before = report.world_before_answer
    candidates = rules.candidates(before)
    selection: dict[str, float] = {}
    if asked:
        given = report.answers[-1]
        chosen = _choice(given.get("next"))
        if "next" in report.requests[-1].questions and (chosen is None or chosen.choice != FINISH):
            out.append("the last request's 'next' was not answered finish, yet the run finished")
        for ref in candidates:
            noul = given.get(f"select_{ref}")
            selection[ref] = noul.probability if isinstance(noul, NoulAnswer) else -1.0
    elif candidates or (
        rules.moves(before, {(t.tool, t.artifact or "") for t in report.turns[:-1]})
        and last.turn <= thinker.max_turns
    ):
        out.append("the run finished without asking while moves or candidates remained")
    if list(last.selection.items()) != list(selection.items()):
        out.append(f"the finish turn records selection {dict(last.selection)}, asked {selection}")
    wanted = [refs for refs, p in selection.items() if p >= thinker.selection_threshold]
    got = [ref_of(world, item) for item in answer.iterands]
    if got != wanted:
        out.append(
            f"the answer is {got}; the candidates selected at >= {thinker.selection_threshold} "
            f"in world order are {wanted}"
        )
    if any(item is report.input for item in answer.iterands):
        out.append("the input is in the answer")
    if not answer_refs:
        out.append("the answer is not registered in the run's world")
    if answer.instruction != thinker.objective or answer.iterand_type is not thinker.output_type:
        out.append("the answer's instruction is not the objective or its type not the output type")
    return out


def invariant_problems(
    report: RunReport, *, expected_errors: tuple[type[BaseException], ...] = ()
) -> list[str]:
    """Every invariant ``report``'s run broke (empty when it kept them all).

    A run failing with one of ``expected_errors`` (a tool's unreadable failure) is legal when it
    failed on the tool move of its last request, with no turn recorded for that move.
    """
    thinker = report.thinker
    rules = _Rules(thinker, report.input)
    world = report.world
    out: list[str] = []
    if not world or world[0][1] is not report.input:
        out.append("the input is not the first artifact of the world")
    decisions = len(report.requests)
    if decisions > thinker.max_turns + 1:
        out.append(f"{decisions} decisions exceed max_turns + 1 = {thinker.max_turns + 1}")
    # The legal pairs of the world the decisions saw: the answer list, adopted after the last
    # decision, would count as one more input for a list-taking tool.
    pairs = rules.legal_pairs(report.world_before_answer)
    if decisions > pairs + 1:
        out.append(f"{decisions} decisions exceed the legal pairs + 1 = {pairs + 1}")
    for number, request in enumerate(report.requests, 1):
        out += _request_problems(rules, number, request, world, report)[0]
    out += _turn_problems(rules, report, world)
    if report.error is not None:
        if not isinstance(report.error, expected_errors):
            out.append(f"the run failed: {type(report.error).__qualname__}: {report.error}")
        elif len(report.turns) != decisions - 1 or any(t.tool == FINISH for t in report.turns):
            out.append("a tool's unreadable failure left a turn behind (or came after finish)")
    out += _finish_problems(rules, report, world)
    if report.obs_turns is None:
        if report.turns:
            out.append("OBS_TURNS was not published")
    else:
        try:
            recorded = parse_turns(report.obs_turns)
        except ValueError as error:
            out.append(f"OBS_TURNS does not parse: {error}")
        else:
            if recorded != report.turns:
                out.append("OBS_TURNS does not equal thinker.turns()")
    return out


async def assert_invariants(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    *,
    expected_errors: tuple[type[BaseException], ...] = (),
) -> RunReport:
    """Run ``thinker`` on ``input`` (dispatcher, fake model answering by ``policy``) and raise
    :class:`InvariantViolation` if the run broke an invariant; else return its report."""
    report = await record_run(thinker, input, policy)
    problems = invariant_problems(report, expected_errors=expected_errors)
    if problems:
        raise InvariantViolation(problems, report)
    return report


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


def check_thinker(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    inputs: st.SearchStrategy[Artifact],
    *,
    policies: st.SearchStrategy[Policy] | None = None,
    expected_errors: tuple[type[BaseException], ...] = (),
    settings: hypothesis.settings | None = None,
) -> None:
    """Property-test a thinker: for drawn inputs and policies, every run keeps the invariants.

    Call it from a plain (not async) test. ``factory`` builds a fresh thinker for each run
    (e.g. the thinker class itself); ``policies`` defaults to
    :func:`harness.testing.strategies.policies` (every answer drawn). A failure raises
    :class:`InvariantViolation` for the shrunk run, with its turns and requests as text.
    Examples are saved in the settings' database under a key of the factory's module and
    qualified name, so two factories never replay each other's examples.
    """
    drawn: st.SearchStrategy[Policy] = policies if policies is not None else drawn_policies()

    @given(input=inputs, policy=drawn)
    def thinker_keeps_its_invariants(input: Artifact, policy: Policy) -> None:
        thinker = factory(Workflow())
        asyncio.run(assert_invariants(thinker, input, policy, expected_errors=expected_errors))

    chosen = settings or hypothesis.settings(deadline=None)
    database = chosen.database
    if database is not None:
        chosen = hypothesis.settings(
            chosen, database=_KeyedDatabase(database, _factory_key(factory))
        )
    chosen(thinker_keeps_its_invariants)()

"""The decision thinker: code lists the legal moves, the model only ranks them.

One turn, top to bottom (the seed page is the specification):

1. the world is the run's registry, in the order things came to be;
2. the legal moves are each palette tool (palette order) on each artifact of its input type (world
   order) whose pair has not run; the output candidates are the artifacts of the output type
   that tools produced (never the input, nor the iterands it came with);
3. one request asks everything at once: ``next`` (the tools, plus ``finish`` once a candidate
   exists), ``<tool>_input`` per offered tool, ``select_<ref>`` per candidate;
4. the model's ``next`` either runs a tool on its chosen input (a readable failure is a fact of
   the run, anything else fails it) or finishes with the candidates selected at the threshold.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Never, TypeVar

import attrs

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact, TextFormatterRegistry
from harness.decision import DecisionRequest, DecisionResponse, RefusedAnswer
from harness.errors import HarnessError
from harness.palette import thinker_input_of, validate_palette
from harness.thinker._call import DecisionCall
from harness.thinker._durable import (
    Approval,
    ApprovalRequiredError,
    CompletedTurn,
    IdempotencyKey,
    PendingApproval,
    ReplayedTurn,
    TurnHooks,
    approval_bar,
    moves_of,
    parse_move,
    probability,
    turn_hooks,
)
from harness.thinker._scheme import (
    DEFAULT_QUESTION_SCHEME,
    OBS_QUESTION_SCHEME,
    QUESTION_SCHEME_VERSIONS,
    QuestionScheme,
    build_request,
    check_scheme,
    input_ids,
)
from harness.thinker._tool_run import ToolRun
from harness.thinker._turn import FINISH, OBS_TURNS, DecisionTurn, turns_json
from harness.thinker._world import RunWorld
from harness.tools import ClassToolProvider, DecisionTool, Identifiable, list_iterand, tool_types

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.jobs import JobContext

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_SELECTION_THRESHOLD", "DecisionThinker"]

DEFAULT_MAX_TURNS: Final = 32
DEFAULT_SELECTION_THRESHOLD: Final = 0.5

log = logging.getLogger("harness.thinker")

I_contra = TypeVar("I_contra", bound=Artifact, contravariant=True)
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed names the output type O


class DecisionThinker(DecisionTool[I_contra, ListArtifact[O]], Generic[I_contra, O]):
    """An agent loop over a typed palette, one decision per turn.

    Subclass it with the ``(parent)`` constructor so it is itself a tool::

        @tool_name("triage")
        class Triage(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(parent, output_type=Verdict, key_tool=JudgeNote,
                                 palette=(SplitNote,), objective="Keep the verdicts worth keeping")

    The key tool is folded into the palette after the others, once. The answer is the
    candidates selected at ``selection_threshold`` or above, in world order, as a
    ``ListArtifact[O]`` whose instruction is the objective. Left out, the threshold is the one
    fitted for the run's catalog entry (its ``[entries.calibration]`` ``selection_threshold``,
    written by ``harness.evals``), else :data:`DEFAULT_SELECTION_THRESHOLD`.

    ``question_scheme`` says how a turn is put to the model (``"lean"``: each digest line once,
    in the state; ``"verbose"``: input options and selections repeat them; ``"shared"``: lean,
    with one input question for the tools that could take the same artifacts; see
    :mod:`harness.thinker._scheme`). A subclass may set the class attribute instead.
    """

    question_scheme: ClassVar[QuestionScheme] = DEFAULT_QUESTION_SCHEME

    def __init__(
        self,
        parent: Identifiable,
        *,
        output_type: type[O],
        key_tool: type[DecisionTool[Never, ListArtifact[O]]],
        palette: tuple[type[DecisionTool[Never, Artifact]], ...],
        objective: str,
        max_turns: int = DEFAULT_MAX_TURNS,
        selection_threshold: float | None = None,
        formatters: TextFormatterRegistry | None = None,
        question_scheme: QuestionScheme | None = None,
    ) -> None:
        super().__init__(parent)
        scheme = check_scheme(
            type(self).question_scheme if question_scheme is None else question_scheme
        )
        _require(output_type, "output_type", "the artifact class of the answer's items")
        _require(key_tool, "key_tool", "the tool producing ListArtifact[O]")
        _require(palette, "palette", "a tuple of tool classes (it may be empty)")
        if not (isinstance(output_type, type) and issubclass(output_type, Artifact)):
            raise ValueError(
                f"output_type must be an Artifact subclass (the answer's item type), not "
                f"{output_type!r}"
            )
        shape: object = palette  # a caller without a type checker may pass anything
        if not isinstance(shape, tuple):
            raise ValueError(
                "palette must be a tuple of tool classes, e.g. palette=(SplitNote,), not "
                f"{type(palette).__name__}"
            )
        if not isinstance(objective, str) or not objective.strip():
            raise ValueError("objective must be a non-blank string: say what the run is for")
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be an integer >= 1, got {max_turns!r}")
        if selection_threshold is not None and (
            isinstance(selection_threshold, bool)
            or not isinstance(selection_threshold, int | float)
            or not 0.0 <= selection_threshold <= 1.0
        ):
            raise ValueError(
                f"selection_threshold must be a number in [0, 1], got {selection_threshold!r}"
            )
        _check_declared_output(type(self), output_type)
        _validate(type(self), output_type, key_tool, tuple(palette))
        folded = [cls for cls in palette if cls is not key_tool]
        folded.append(key_tool)  # the key tool comes after the others, once
        self.output_type = output_type
        self.key_tool = key_tool
        self.palette: tuple[type[DecisionTool[Never, Artifact]], ...] = tuple(folded)
        self.objective = objective
        self.max_turns = max_turns
        self._given_threshold = selection_threshold
        self.formatters = formatters if formatters is not None else TextFormatterRegistry()
        self.scheme: QuestionScheme = scheme
        self._providers = tuple(ClassToolProvider(cls) for cls in self.palette)
        self._last = _RunState(ArtifactRegistry(), None, self._threshold_for(None))

    # -- a thin view of the last run (each run keeps its own state) -------------------------

    def turns(self) -> tuple[DecisionTurn, ...]:
        """The turns of the run that started last on this instance (complete once it returns).

        Each run keeps its own turns and world, so one instance may run several inputs at once;
        this view then shows the latest. The run API's result (``harness.run_sync(Triage, ...)``)
        holds each run's own.
        """
        return tuple(self._last.turns)

    @property
    def registry(self) -> ArtifactRegistry:
        """The world of the run that started last on this instance (see :meth:`turns`)."""
        return self._last.registry

    @property
    def selection_threshold(self) -> float:
        """The threshold of the run that started last on this instance (see :meth:`turns`):
        the one given to the constructor, else the run's entry's fitted one, else 0.5. Before
        any run: the one given, else 0.5."""
        return self._last.threshold

    def _threshold_for(self, entry: object) -> float:
        """The threshold a run on ``entry`` answers at (see :attr:`selection_threshold`)."""
        if self._given_threshold is not None:
            return float(self._given_threshold)
        fitted = getattr(getattr(entry, "calibration", None), "selection_threshold", None)
        if isinstance(fitted, int | float) and not isinstance(fitted, bool):
            return float(fitted)
        return DEFAULT_SELECTION_THRESHOLD

    def declared_output(self) -> type[ListArtifact[O]]:
        """The answer's type, ``ListArtifact[output_type]``: known at run time even when the
        class's type arguments are erased (``DecisionThinker[Note, Verdict](...)``), so the tool
        run checks the answer against it."""
        answer: type[ListArtifact[O]] = ListArtifact[self.output_type]  # type: ignore[name-defined]  # a runtime alias
        return answer

    @property
    def _option_limit(self) -> int | None:
        """The running run's ``max_options`` (per run: a task-local value, not instance state)."""
        state = _CURRENT.get(None)
        return None if state is None else state.option_limit

    # -- the loop --------------------------------------------------------------------------

    async def execute(self, input: I_contra, context: JobContext) -> ListArtifact[O]:
        """Run the loop on ``input`` until the model finishes, the moves run out or the budget
        is spent. Each run keeps its own state, so one instance may run several inputs at once."""
        world = RunWorld(input, self._providers, self.output_type, self.formatters)
        entry = _decision_entry(context)
        limit = entry.max_options if entry is not None else None
        state = _RunState(world.registry, limit, self._threshold_for(entry))
        self._last = state
        token = _CURRENT.set(state)  # this run's task only: concurrent runs never share it
        try:
            return await self._loop(world, state, context)
        finally:
            _CURRENT.reset(token)

    async def _loop(
        self, world: RunWorld, state: _RunState, context: JobContext
    ) -> ListArtifact[O]:
        turns = state.turns
        context.metadata[OBS_QUESTION_SCHEME] = QUESTION_SCHEME_VERSIONS[self.scheme]
        done: list[str] = []
        tools = {p.name: p for p in self._providers}
        hooks = turn_hooks(context)  # a durable run's, for its top thinker only
        while True:
            moves = self._moves(world)
            candidates = self._candidates(world)
            number = len(turns) + 1
            if not candidates and (not moves or number > self.max_turns):
                return self._finish(context, world, turns, number, None, {}, ())
            if not moves or number > self.max_turns:
                request = self._request(world, done, (), candidates)
                response, replay = await self._ask(context, hooks, number, request)
                selection = self._selection(response, candidates)
                answer = self._finish(context, world, turns, number, None, selection, candidates)
                await _completed(hooks, replay, number, request, response, turns[-1])
                return answer
            request = self._request(world, done, moves, candidates)
            response, replay = await self._ask(context, hooks, number, request)
            chosen = response.choice("next")
            move, ref, approval = self._steer(
                hooks, replay, number, response, moves, bool(candidates)
            )
            if move == FINISH:
                selection = self._selection(response, candidates)
                answer = self._finish(
                    context, world, turns, number, chosen.probabilities, selection, candidates
                )
                await _completed(hooks, replay, number, request, response, turns[-1])
                return answer
            provider = tools[move]
            argument = response.choice(self._input_id(moves, provider.name))
            ref = argument.choice if ref is None else ref
            self._spend(world, provider.name, ref)
            if replay is not None and replay.done:  # journalled: its product, not a new run
                turn, line = _restored(world, number, provider.name, ref, replay)
            elif approval is not None and approval.kind == "reject":
                reason = approval.reason or "rejected by a person"
                turn = DecisionTurn(number, None, provider.name, artifact=ref, failure=reason)
                line = f"{provider.name} on {ref} failed: {reason}"
            else:
                if hooks is not None:
                    await hooks.synced()  # the turns before are on disk before this tool runs
                turn, line = await self._run_tool(context, world, number, provider, ref)
            turns.append(
                attrs.evolve(turn, next=chosen.probabilities, argument=argument.probabilities)
            )
            done.append(line)
            if hooks is not None and (replay is None or not replay.done):
                product = None if turn.result is None else world.get(turn.result)
                await hooks.completed(
                    CompletedTurn(
                        number,
                        request,
                        response,
                        provider.name,
                        ref,
                        approval,
                        product,
                        turn.failure,
                        line,
                        turns[-1],
                    )
                )
            self._publish(context, turns)
            context.progress(
                f"turn {number}: {provider.name} on {ref}" + (" failed" if turn.failure else "")
            )

    async def _ask(
        self, context: JobContext, hooks: TurnHooks | None, number: int, request: DecisionRequest
    ) -> tuple[DecisionResponse, ReplayedTurn | None]:
        """The turn's decision: journalled (replayed, the model not asked) or asked now."""
        replay = None if hooks is None else hooks.replayed(number, request)
        if replay is not None:
            return replay.response, replay
        return await self._decide(context, request), None

    def _steer(
        self,
        hooks: TurnHooks | None,
        replay: ReplayedTurn | None,
        number: int,
        response: DecisionResponse,
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        finishable: bool,
    ) -> tuple[str, str | None, Approval | None]:
        """The move taken: the model's, a forced one (branching), or a person's verdict on a
        move below its approval bar. Returns the move, its ref if fixed, and the verdict."""
        chosen = response.choice("next")
        legal = moves_of([(p.name, refs) for p, refs in moves])
        forced = None if hooks is None else hooks.forced(number)
        if forced is not None:
            move, ref = parse_move(forced, number, chosen.probabilities, legal, finishable)
            return move, ref, None
        if chosen.choice == FINISH:
            return FINISH, None, None
        provider = next(p for p, _ in moves if p.name == chosen.choice)
        bar = approval_bar(provider.tool_class) or approval_bar(type(self))
        p = probability(chosen.probabilities, chosen.choice)
        if bar is None or p >= bar:
            return chosen.choice, None, None
        ref = response.choice(self._input_id(moves, chosen.choice)).choice
        if replay is not None and replay.approval is not None:
            approval = replay.approval
        elif hooks is None:
            raise ApprovalRequiredError(
                f"turn {number}: {chosen.choice} on {ref} needs a person's approval "
                f"({p:.2f} < {bar:.2f}); run with a journal (journal=PATH, --journal FILE) "
                "to pause, or give an approver (approver=..., --approve yes|no)"
            )
        else:
            pending = PendingApproval(
                number, chosen.choice, ref, p, bar, legal, dict(chosen.probabilities)
            )
            approval = hooks.approve(pending, response)
            pending.check(approval)
        if approval.kind == "pick":
            return str(approval.tool), approval.artifact, approval
        return chosen.choice, ref, approval

    # The steps below are methods so a test can plant a broken thinker and watch the property
    # suite catch it (harness.testing.invariants).

    def _moves(self, world: RunWorld) -> list[tuple[ClassToolProvider[Never, Artifact], list[str]]]:
        return world.moves()

    def _candidates(self, world: RunWorld) -> tuple[str, ...]:
        return tuple(world.candidates)

    def _input_id(
        self, moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]], tool: str
    ) -> str:
        """The question ``tool``'s argument is read from (its own, or its group's)."""
        return input_ids(self.scheme, [(p.name, "", refs) for p, refs in moves])[tool]

    def _spend(self, world: RunWorld, tool: str, ref: str) -> None:
        world.spend(tool, ref)

    def _request(
        self,
        world: RunWorld,
        done: Sequence[str],
        moves: Sequence[tuple[ClassToolProvider[Never, Artifact], Sequence[str]]],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        return build_request(
            self.scheme,
            objective=self.objective,
            lines=world.lines,
            words=world.words,
            line=world.line,
            done=done,
            moves=[(p.name, p.description, refs) for p, refs in moves],
            candidates=candidates,
            option_limit=self._option_limit,
            finish=FINISH,
        )

    async def _decide(self, context: JobContext, request: DecisionRequest) -> DecisionResponse:
        call = DecisionCall(context, request, upstream_retries=context.upstream_retries)
        return await context.run(call)

    def _selection(self, response: DecisionResponse, candidates: Sequence[str]) -> dict[str, float]:
        selection: dict[str, float] = {}
        for ref in candidates:
            qid = f"select_{ref}"
            if isinstance(response.answers.get(qid), RefusedAnswer):
                selection[ref] = 0.0  # a refused selection selects nothing, at any threshold
                state = _CURRENT.get(None)
                if state is not None:
                    state.refused.add(ref)
                log.info("the model refused to answer %s: counted as not selected", qid)
            else:
                selection[ref] = response.noul(qid).probability
        return selection

    async def _run_tool(
        self,
        context: JobContext,
        world: RunWorld,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        tool: DecisionTool[Any, Artifact] = provider.create(context)  # typed by the palette rules
        key = _key(context, turn_hooks(context), number, provider.name, ref)
        job = ToolRun(
            context,
            tool,
            world.get(ref),
            name=provider.name,
            upstream_retries=context.upstream_retries,
            idempotency_key=key,
        )
        try:
            product = await context.run(job)
        except HarnessError as failure:
            if not failure.llm_readable:
                raise
            if failure.correctable:
                log.info("%s on %s: %s", provider.name, ref, failure.message)
            else:
                log.warning("%s on %s failed", provider.name, ref, exc_info=failure)
            turn = DecisionTurn(number, None, provider.name, artifact=ref, failure=failure.message)
            return turn, f"{provider.name} on {ref} failed: {failure.explain_to_llm()}"
        result = world.adopt(product)
        turn = DecisionTurn(number, None, provider.name, artifact=ref, result=result)
        return turn, f"{provider.name} on {ref} produced {result}"

    def _finish(
        self,
        context: JobContext,
        world: RunWorld,
        turns: list[DecisionTurn],
        number: int,
        next_: Mapping[str, float] | None,
        selection: dict[str, float],
        candidates: Sequence[str],
    ) -> ListArtifact[O]:
        chosen: list[O] = []
        state = _CURRENT.get(None)
        threshold = state.threshold if state is not None else self.selection_threshold
        refused = state.refused if state is not None else set()  # 0.0 on the record, not chosen
        for ref in candidates:
            artifact = world.get(ref)
            if (
                selection[ref] >= threshold
                and ref not in refused
                and isinstance(artifact, self.output_type)
            ):
                chosen.append(artifact)  # isinstance narrows for the type checker: always true
        answer = ListArtifact(self.output_type, tuple(chosen), self.objective)
        world.adopt(answer)
        turns.append(DecisionTurn(number, next_, FINISH, selection=selection))
        self._publish(context, turns)
        return answer

    def _publish(self, context: JobContext, turns: Sequence[DecisionTurn]) -> None:
        context.metadata[OBS_TURNS] = turns_json(turns)


@attrs.define
class _RunState:
    """One run's own state: its world's registry, its turns, its entry's ``max_options``, the
    selection threshold it answers at."""

    registry: ArtifactRegistry
    option_limit: int | None
    threshold: float
    turns: list[DecisionTurn] = attrs.Factory(list)
    refused: set[str] = attrs.Factory(set)  # selections the model refused: never selected


async def _completed(
    hooks: TurnHooks | None,
    replay: ReplayedTurn | None,
    number: int,
    request: DecisionRequest,
    response: DecisionResponse,
    turn: DecisionTurn,
) -> None:
    """Journal a live finishing turn (a replayed one is in the journal already)."""
    if hooks is not None and replay is None:
        await hooks.completed(
            CompletedTurn(number, request, response, FINISH, None, None, None, None, None, turn)
        )


def _restored(
    world: RunWorld, number: int, tool: str, ref: str, replay: ReplayedTurn
) -> tuple[DecisionTurn, str]:
    """A journalled tool step: its product adopted as the run adopted it, or its failure."""
    if replay.product is None:
        failure = replay.failure or "failed"
        turn = DecisionTurn(number, None, tool, artifact=ref, failure=failure)
        return turn, replay.line or f"{tool} on {ref} failed: {failure}"
    result = world.adopt(replay.product)
    turn = DecisionTurn(number, None, tool, artifact=ref, result=result)
    return turn, replay.line or f"{tool} on {ref} produced {result}"


def _key(
    context: JobContext, hooks: TurnHooks | None, number: int, tool: str, ref: str
) -> IdempotencyKey:
    """The idempotency key of this turn's tool run: under the run's id for the top thinker,
    under the key of the tool run it executes in for a nested one."""
    within = getattr(context.job, "idempotency_key", None)
    if hooks is not None or not isinstance(within, IdempotencyKey):
        run_id = hooks.run_id if hooks is not None else context.job.identity.job_id
        return IdempotencyKey(run_id, number, tool, ref)
    return IdempotencyKey(within.run_id, number, tool, ref, within)


_CURRENT: ContextVar[_RunState] = ContextVar("harness_thinker_run")
"""The state of the run executing in this task (set by :meth:`DecisionThinker.execute`)."""


# Palettes already proved legal, by thinker class (weakly: classes made at run time may go).
_LEGAL: weakref.WeakKeyDictionary[type, set[tuple[object, ...]]] = weakref.WeakKeyDictionary()


def _validate(thinker: type, output_type: type, key_tool: type, palette: tuple[type, ...]) -> None:
    """The runtime palette validator (the mypy plugin's verdicts, for every type checker),
    once per thinker class and palette."""
    key: tuple[object, ...] = (output_type, key_tool, palette)
    proved = _LEGAL.setdefault(thinker, set())
    if key in proved:
        return
    validate_palette(
        thinker_input=thinker_input_of(thinker),
        output_type=output_type,
        key_tool=key_tool,
        palette=palette,
    )
    proved.add(key)


def _check_declared_output(thinker: type, output_type: type) -> None:
    """A subclass that binds O (``DecisionThinker[Note, Verdict]``) must pass that O."""
    try:
        _, declared = tool_types(thinker)
    except TypeError:
        return  # O left open (a direct DecisionThinker[...](...) call): nothing to compare
    item = list_iterand(declared)
    if item is not None and item is not output_type:
        raise ValueError(
            f"{thinker.__qualname__} declares its answer as ListArtifact[{item.__qualname__}] "
            f"but passes output_type={output_type.__qualname__}: pass output_type="
            f"{item.__qualname__}"
        )


def _decision_entry(context: JobContext) -> CatalogEntry | None:
    """The entry the run's decisions resolve to (its ``max_options``, its fitted threshold)."""
    try:
        return context.dispatcher.catalog.resolve_decision(None, asked_by=context.job.describe())
    except ValueError:
        return None  # no decision entry: the first decision call reports it, naming the job


def _require(value: object, name: str, what: str) -> None:
    if value is None:
        raise ValueError(f"{name} is required: pass {what}")

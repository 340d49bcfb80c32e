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

One concern, the turn loop, kept whole (past 400 lines) so a turn reads top to bottom in one
place, with the steps a test may plant broken as methods; the constructor's checks are
``_checks.py``, a durable run's steps ``_durable_steps.py``, the request ``_scheme.py``, the
world ``_world.py``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Final, Generic, Never, TypeVar, cast

import attrs

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact, TextFormatterRegistry
from harness.decision import DecisionRequest, DecisionResponse, RefusedAnswer
from harness.errors import HarnessError
from harness.thinker._call import DecisionCall
from harness.thinker._checks import check_arguments
from harness.thinker._durable import CompletedTurn, ReplayedTurn, TurnHooks, turn_hooks
from harness.thinker._durable_steps import journal_finish, restored_step, steer, tool_run_key
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
from harness.tools import ClassToolProvider, DecisionTool, Identifiable

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
        check_arguments(
            type(self), output_type, key_tool, palette, objective, max_turns, selection_threshold
        )
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
        if getattr(entry, "provider", None) == "fitted":
            from harness.providers import fitted_model

            found = fitted_model(cast("CatalogEntry", entry)).selection_threshold
            if found is not None:
                return found
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
                await journal_finish(hooks, replay, number, request, response, turns[-1])
                return answer
            request = self._request(world, done, moves, candidates)
            response, replay = await self._ask(context, hooks, number, request)
            chosen = response.choice("next")
            move, ref, approval = steer(
                hooks,
                replay,
                number,
                response,
                [(p.name, p.tool_class, refs) for p, refs in moves],
                bool(candidates),
                type(self),
                functools.partial(self._input_id, moves),
            )
            if move == FINISH:
                selection = self._selection(response, candidates)
                answer = self._finish(
                    context, world, turns, number, chosen.probabilities, selection, candidates
                )
                await journal_finish(hooks, replay, number, request, response, turns[-1])
                return answer
            provider = tools[move]
            argument = response.choice(self._input_id(moves, provider.name))
            ref = argument.choice if ref is None else ref
            self._spend(world, provider.name, ref)
            if replay is not None and replay.done:  # journalled: its product, not a new run
                turn, line = restored_step(world, number, provider.name, ref, replay)
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
        key = tool_run_key(context, turn_hooks(context), number, provider.name, ref)
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


_CURRENT: ContextVar[_RunState] = ContextVar("harness_thinker_run")
"""The state of the run executing in this task (set by :meth:`DecisionThinker.execute`)."""


def _decision_entry(context: JobContext) -> CatalogEntry | None:
    """The entry the run's decisions resolve to (its ``max_options``, its fitted threshold)."""
    try:
        return context.dispatcher.catalog.resolve_decision(None, asked_by=context.job.describe())
    except ValueError:
        return None  # no decision entry: the first decision call reports it, naming the job

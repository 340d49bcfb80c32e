"""One thinker run through the dispatcher against a fake model, recorded for the invariants.

:func:`report_run` runs a thinker on an input with a policy (through a real
:class:`~harness.jobs.Dispatcher`, a :class:`~harness.providers.FakeDecisionModel` and upstream
retries 0, so every decision is asked exactly once) and returns a :class:`RunReport`: every request,
the answers the model's responses carried, the wire bodies, the turns, ``OBS_TURNS``, the world, and
the answer or the error. The run is bounded: the decision past ``max_turns + 1`` is refused and
stops the run (``report.runaway``), and with ``run_timeout`` a run that outlives it is stopped
and says where it was waiting (``report.hang``). :meth:`RunReport.render` shows it as text.

Over 400 lines for one reason: the recorder and the report it fills (with its rendering for a
failure's text) change together, field for field.
"""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Mapping, Sequence
from types import FrameType, TracebackType
from typing import Any

import attrs

from harness.artifacts import Artifact, ListArtifact, TextFormatterRegistry
from harness.catalog import Catalog, CatalogEntry
from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
)
from harness.decision import systemone as systemone_codec
from harness.jobs import Dispatcher, Pacing
from harness.providers import FakeDecisionModel, Policy
from harness.testing._rerun import Rerun, outcome_text, rerun_moves
from harness.testing._run_facts import (
    Hang,
    RecordedWorld,
    RunReport,
    _is_framework,
    user_frames,
)
from harness.testing._wall_clock import RunHung, disarm
from harness.thinker import (
    FINISH,
    OBS_TURNS,
    DecisionThinker,
    DecisionTurn,
    ThinkerRun,
)
from harness.tools import Workflow

__all__ = ["ENTRY", "report_run", "run_digest"]

ENTRY = CatalogEntry.fake("fake", "fake-decider")


class _Runaway(BaseException):
    """Stops a run at the decision past its bound (a BaseException: no handler takes it for
    the run's own failure)."""


class _RecordingModel(FakeDecisionModel):
    """The fake model, bounded: it answers ``limit`` decisions and refuses the next, and it
    keeps the answers its responses carried and which request the policy is answering."""

    def __init__(self, policy: Policy, limit: int) -> None:
        super().__init__(policy)
        self.limit = limit
        self.answers: list[Mapping[str, Answer]] = []
        self.asking: int | None = None

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Answer with the policy, or stop the run past the bound."""
        if len(self.requests) >= self.limit:
            self.requests.append(request)
            self.bodies.append(systemone_codec.encode_body(request, entry.wire_model_id))
            raise _Runaway
        self.asking = len(self.requests) + 1
        try:
            response = await super().decide(request, entry, timeout=timeout)
        except Exception:
            self.asking = None
            raise
        self.asking = None
        self.answers.append(dict(response.answers))
        return response


def _during(
    model: _RecordingModel, thinker: DecisionThinker[Any, Any], world: RecordedWorld
) -> str:
    """What a stopped run was doing: the policy, a tool on a ref, or the thinker itself."""
    if model.asking is not None:
        return f"the model's policy answering request {model.asking}"
    if model.answers and len(thinker.turns()) < len(model.answers):
        given = model.answers[-1]
        chosen = given.get("next")
        if isinstance(chosen, ChoiceAnswer) and chosen.choice != FINISH:
            argument = given.get(f"{chosen.choice}_input")
            ref = argument.choice if isinstance(argument, ChoiceAnswer) else "?"
            input_ref = world[0][0] if world else None
            shown = f"{ref} (the input)" if ref == input_ref else ref
            return f"tool {chosen.choice} on {shown} (the move of request {len(model.answers)})"
    return f"the thinker between decisions (after request {len(model.requests)})"


def _awaiting_frames(task: asyncio.Task[Any]) -> list[FrameType]:
    """The frames a task is suspended in, outermost first, down the chain of awaits (the
    task's own ``get_stack`` shows only its outermost coroutine)."""
    frames: list[FrameType] = []
    awaited: object = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if not isinstance(frame, FrameType):
            break
        frames.append(frame)
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    return frames


def _task_stacks() -> str:
    """Where every other task of the loop is waiting, the caller's own frames first."""
    here = asyncio.current_task()
    stacks = []
    for task in asyncio.all_tasks():
        if task is here or task.done():
            continue
        frames = [
            traceback.FrameSummary(f.f_code.co_filename, f.f_lineno or 0, f.f_code.co_name)
            for f in _awaiting_frames(task)
        ]
        if frames:
            stacks.append(frames)
    own = [frames for frames in stacks if any(not _is_framework(f.filename) for f in frames)]
    return "\n".join(user_frames(frames, keep=2) for frames in (own or stacks))


def _frames_of(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return list(traceback.extract_tb(tb))


async def report_run(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    *,
    run_timeout: float | None = None,
    decision_limit: int | None = None,
    max_options: int | None = None,
) -> RunReport:
    """Run ``thinker`` on ``input`` with the fake model answering by ``policy``; never raises
    for the run's own failure (it is the report's ``error``).

    At most ``decision_limit`` decisions are answered (default ``thinker.max_turns + 1``); the
    next stops the run (``report.runaway``). With ``run_timeout`` seconds, a run still waiting
    then is cancelled and reported with where it waited (``report.hang``); code that blocks the
    event loop needs :func:`harness.testing.invariants.check_thinker`'s guard as well.
    ``max_options`` is the fake entry's (``None``: it states none). Each tool move is run again
    on the artifact its turn names (``report.reruns``, see :mod:`harness.testing._rerun`).
    """
    limit = decision_limit if decision_limit is not None else thinker.max_turns + 1
    model = _RecordingModel(_awaited(policy), limit)
    entry = ENTRY if max_options is None else attrs.evolve(ENTRY, max_options=max_options)
    catalog = Catalog([entry], {"decision": entry.id})
    job = ThinkerRun(Workflow(), thinker, input, upstream_retries=0)
    answer: ListArtifact[Artifact] | None = None
    error: Exception | None = None
    runaway = False
    hang: Hang | None = None
    try:
        async with Dispatcher(catalog, clients={entry.id: model}, pacing=Pacing.immediate()) as d:
            task = asyncio.ensure_future(d.run(job))
            try:
                done, _ = await asyncio.wait({task}, timeout=run_timeout)
                if done:
                    answer = task.result()
                else:
                    during = _during(model, thinker, tuple(thinker.registry.world()))
                    hang = Hang(run_timeout or 0.0, during, _task_stacks())
                    task.cancel()
                    await asyncio.wait({task}, timeout=1.0)
            except _Runaway:
                runaway = True
            except Exception as failure:  # the run's own failure goes on the report
                error = failure
    except RunHung as hung:  # blocking code interrupted (while running or while cancelled)
        disarm()
        if hang is None:
            during = _during(model, thinker, tuple(thinker.registry.world()))
            stack = user_frames(_frames_of(hung.__traceback__))
            hang = Hang(run_timeout or 0.0, during, stack)
    if hang is not None:
        disarm()  # reported: nothing more to interrupt
    obs = job.metadata.get(OBS_TURNS)
    turns = tuple(thinker.turns())
    world = tuple(thinker.registry.world())
    reruns: tuple[Rerun, ...] = ()
    moved: tuple[tuple[int, str], ...] = ()
    if hang is None:
        reruns = await rerun_moves(thinker, turns, world, timeout=run_timeout)
        moved = await _where_moves_ran(thinker, turns, world, reruns, run_timeout)
    # same shape as EvalReport(...) in evals/_run.py: keyword arguments, other fields
    return RunReport(
        thinker=thinker,
        input=input,
        requests=tuple(model.requests),
        answers=tuple(model.answers),
        bodies=tuple(model.bodies),
        turns=turns,
        obs_turns=obs if isinstance(obs, str) else None,
        world=world,
        answer=answer,
        error=error,
        runaway=runaway,
        hang=hang,
        reruns=reruns,
        max_options=max_options,
        moved=moved,
        entry_threshold=_fitted_threshold(entry),
    )


def _fitted_threshold(entry: CatalogEntry) -> float | None:
    """The selection threshold fitted for ``entry`` (its calibration's), if any."""
    fitted = getattr(getattr(entry, "calibration", None), "selection_threshold", None)
    if isinstance(fitted, int | float) and not isinstance(fitted, bool):
        return float(fitted)
    return None


def _recorded_outcome(
    turn: DecisionTurn, refs: Mapping[str, Artifact], formatters: TextFormatterRegistry
) -> str | None:
    """A tool turn's outcome as its record says it (``None`` when the record is incomplete)."""
    if turn.result is not None and turn.result in refs:
        return outcome_text(refs[turn.result], None, formatters)
    if turn.failure is not None:
        return outcome_text(None, turn.failure, formatters)
    return None


async def _where_moves_ran(
    thinker: DecisionThinker[Any, Any],  # any thinker: its palette and formatters are read
    turns: Sequence[DecisionTurn],
    world: RecordedWorld,
    reruns: Sequence[Rerun],
    timeout: float | None,
) -> tuple[tuple[int, str], ...]:
    """For each move whose recorded outcome is not what its tool makes of the recorded
    artifact: the first other artifact of the world (in world order) on which the tool, run
    again, gives the recorded outcome. Only a move already found wrong is searched."""
    refs = dict(world)
    by_turn = {turn.turn: turn for turn in turns}
    found: list[tuple[int, str]] = []
    for rerun in reruns:
        turn = by_turn.get(rerun.turn)
        if turn is None or rerun.unchecked is not None:
            continue
        recorded = _recorded_outcome(turn, refs, thinker.formatters)
        again = outcome_text(rerun.product, rerun.failure, thinker.formatters)
        if recorded is None or recorded == again:
            continue
        tried = [attrs.evolve(turn, artifact=ref) for ref, _ in world if ref != rerun.ref]
        for other in await rerun_moves(thinker, tried, world, timeout=timeout):
            if other.unchecked is None and (
                outcome_text(other.product, other.failure, thinker.formatters) == recorded
            ):
                found.append((rerun.turn, other.ref))
                break
    return tuple(found)


def _awaited(policy: Policy) -> Policy:
    """``policy`` as an async function, so a policy's own hang is awaited inside the run."""

    async def answering(request: DecisionRequest) -> Mapping[str, Answer]:
        produced = policy(request)
        return await produced if inspect.isawaitable(produced) else produced

    return answering


async def run_digest(thinker: DecisionThinker[Any, Any], input: Artifact, policy: Policy) -> str:
    """The :meth:`RunReport.digest` of one run (compare it across runs and interpreters)."""
    return (await report_run(thinker, input, policy)).digest()

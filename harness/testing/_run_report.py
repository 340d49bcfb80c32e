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
import base64
import hashlib
import inspect
import json  # the stdlib: json's default separators and escapes, which orjson cannot write
import pathlib
import traceback
from collections.abc import Iterable, Mapping, Sequence
from types import FrameType, TracebackType
from typing import Any

import attrs

from harness.artifacts import Artifact, ListArtifact, digest_line
from harness.catalog import Catalog, CatalogEntry
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
)
from harness.decision import systemone as systemone_codec
from harness.decision._internal import load_json
from harness.jobs import Dispatcher, Pacing
from harness.providers import FakeDecisionModel, Policy
from harness.testing._rerun import Rerun, outcome_text, rerun_moves
from harness.testing._wall_clock import RunHung, disarm
from harness.thinker import (
    DEFAULT_SELECTION_THRESHOLD,
    FINISH,
    OBS_TURNS,
    DecisionThinker,
    DecisionTurn,
    ThinkerRun,
    turns_json,
)
from harness.tools import Workflow

__all__ = [
    "Hang",
    "RunBytes",
    "RunReport",
    "World",
    "given_refs",
    "given_with",
    "ref_of",
    "report_run",
    "run_digest",
    "user_frames",
]

World = tuple[tuple[str, Artifact], ...]
"""A run's world: ``(ref, artifact)`` pairs in the order things came to be."""

ENTRY = CatalogEntry.fake("fake", "fake-decider")

_FRAMEWORK = (
    pathlib.Path(__file__).resolve().parents[1],  # harness/
    pathlib.Path(asyncio.__file__).resolve().parent,
)


@attrs.frozen
class Hang:
    """Where a run was when the wall-clock limit stopped it."""

    seconds: float
    during: str  # what was running: the policy, a tool on a ref, the thinker
    stack: str  # the frames it was stuck in (the caller's own first)


@attrs.frozen
class RunBytes:
    """What must repeat byte for byte when an example runs again: the wire bodies, the turns
    as JSON, ``OBS_TURNS``, the world's digest lines and the outcome."""

    bodies: tuple[bytes, ...]
    turns: str
    obs_turns: str | None
    world: tuple[str, ...]
    outcome: str

    def to_json(self) -> str:
        """The fingerprint as JSON (bodies in base64), for another interpreter to send back."""
        data = attrs.asdict(self)
        data["bodies"] = [base64.b64encode(body).decode("ascii") for body in self.bodies]
        data["world"] = list(self.world)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> RunBytes:
        """Read a fingerprint written by :meth:`to_json`."""
        data: Any = load_json(text)  # Any: read by key; a malformed file fails as before
        return cls(
            bodies=tuple(base64.b64decode(body) for body in data["bodies"]),
            turns=str(data["turns"]),
            obs_turns=None if data["obs_turns"] is None else str(data["obs_turns"]),
            world=tuple(str(line) for line in data["world"]),
            outcome=str(data["outcome"]),
        )


@attrs.frozen
class RunReport:
    """What one run did, for the invariants and for a person reading a failure.

    ``answers`` are the answers the model's responses carried, request by request (what the
    thinker read). ``runaway`` says the checker refused a decision past ``max_turns + 1`` and
    stopped the run there (the refused request is the last of ``requests``); ``hang`` says the
    run outlived its wall-clock limit and where it was.
    """

    thinker: DecisionThinker[Any, Any]  # any thinker: the checker reads its public attributes
    input: Artifact
    requests: tuple[DecisionRequest, ...]
    answers: tuple[Mapping[str, Answer], ...]
    bodies: tuple[bytes, ...]
    turns: tuple[DecisionTurn, ...]
    obs_turns: str | None
    world: World
    answer: ListArtifact[Artifact] | None
    error: Exception | None
    runaway: bool = False
    hang: Hang | None = None
    reruns: tuple[Rerun, ...] = ()  # each tool move run again on its recorded artifact
    # (turn, ref): a move whose recorded outcome is not what its tool makes of the recorded
    # artifact, but is what it makes of another artifact of the world (the move ran there)
    moved: tuple[tuple[int, str], ...] = ()
    entry_threshold: float | None = None  # the run's entry's fitted selection threshold

    @property
    def threshold(self) -> float:
        """The selection threshold the run must answer at, derived as the runtime derives it
        but from the inputs, never from the thinker's own account: the constructor's
        ``selection_threshold`` argument, else the run's entry's fitted threshold, else
        :data:`~harness.thinker.DEFAULT_SELECTION_THRESHOLD`."""
        given = vars(self.thinker).get("_given_threshold")  # the argument, as the base stored it
        if isinstance(given, int | float) and not isinstance(given, bool):
            return float(given)
        if self.entry_threshold is not None:
            return self.entry_threshold
        return DEFAULT_SELECTION_THRESHOLD

    max_options: int | None = None  # the fake entry's max_options for this run

    @property
    def world_before_answer(self) -> World:
        """The world as the run's last decision saw it: everything before the answer list was
        adopted (the whole world when there is no registered answer). Legal moves and
        candidates are counted over this, never over the answer itself."""
        for index, (_, artifact) in enumerate(self.world):
            if artifact is self.answer:
                return self.world[:index]
        return self.world

    @property
    def stopped(self) -> bool:
        """Whether the checker stopped the run (a runaway or a hang) before it ended itself."""
        return self.runaway or self.hang is not None

    def describe_ref(self, ref: str) -> str:
        """``ref``, marked ``(the input)`` or ``(an item of the input)`` when it is one."""
        given = given_refs(self.world, self.input)
        if self.world and ref == self.world[0][0]:
            return f"{ref} (the input)"
        if ref in given:
            return f"{ref} (an item of the input)"
        return ref

    def describe_refs(self, refs: Iterable[str]) -> str:
        """A list of refs as text, each marked as :meth:`describe_ref` does."""
        return "[" + ", ".join(self.describe_ref(ref) for ref in refs) + "]"

    def outcome(self) -> str:
        """How the run ended, in words."""
        if self.hang is not None:
            return f"stopped after {self.hang.seconds:g} s: {self.hang.during} did not return"
        if self.runaway:
            return (
                f"stopped by the checker at decision {len(self.requests)}, past max_turns + 1 "
                f"= {self.thinker.max_turns + 1}"
            )
        if self.error is not None:
            return f"failed with {type(self.error).__qualname__}: {self.error}"
        if self.answer is not None:
            refs = [ref_of(self.world, item) for item in self.answer.iterands]
            return f"answered [{', '.join(refs)}]"
        return "did not finish"

    def fingerprint(self) -> RunBytes:
        """The bytes that must repeat when the same example runs again."""
        formatters = self.thinker.formatters
        return RunBytes(
            bodies=self.bodies,
            turns=turns_json(self.turns),
            obs_turns=self.obs_turns,
            world=tuple(digest_line(ref, a, formatters) for ref, a in self.world),
            outcome=self.outcome(),
        )

    def digest(self) -> str:
        """The sha256 of the wire bodies and ``OBS_TURNS``: equal for byte-identical runs."""
        hasher = hashlib.sha256()
        for body in self.bodies:
            hasher.update(len(body).to_bytes(8, "big") + body)
        hasher.update((self.obs_turns or "").encode("utf-8"))
        return hasher.hexdigest()

    def render(self) -> str:
        """The run as text: outcome, world, each request with its answers, each turn."""
        name = type(self.thinker).__qualname__
        lines = [
            f"run of {name} (max_turns {self.thinker.max_turns}, threshold "
            f"{self.threshold}): {self.outcome()}",
            "world:",
        ]
        for ref, artifact in self.world:
            shown = self.describe_ref(ref)
            marker = shown[len(ref) :]
            lines.append(f"  {ref}: {type(artifact).__qualname__} {_short(artifact)}{marker}")
        for number, request in enumerate(self.requests, 1):
            given = self.answers[number - 1] if number <= len(self.answers) else None
            refused = " (refused by the checker: past max_turns + 1)" if given is None else ""
            lines.append(f"request {number}:{refused if self.runaway else ''}")
            for qid, question in request.questions.items():
                answered = _answered(given.get(qid)) if given is not None else "(not answered)"
                lines.append(f"  {qid}: {_asked(question)} -> {answered}")
        for turn in self.turns:
            lines.append(f"turn {turn.turn}: {_turn_text(turn)}")
        if self.hang is not None and self.hang.stack:
            lines.append(f"where it hung:\n{self.hang.stack}")
        return "\n".join(lines)


def ref_of(world: Sequence[tuple[str, Artifact]], artifact: Artifact) -> str:
    """The ref of ``artifact`` (by identity) in ``world``, else ``"<unregistered ...>"``."""
    return next((ref for ref, a in world if a is artifact), f"<unregistered {artifact!r}>")


def given_with(input: Artifact) -> frozenset[int]:
    """The identities of ``input`` and the iterands it brings (recursively): the input's are
    never candidates, since only what a tool produced can be an answer."""
    given: set[int] = set()
    pending = [input]
    while pending:
        artifact = pending.pop()
        given.add(id(artifact))
        if isinstance(artifact, ListArtifact):
            pending.extend(artifact.iterands)
    return frozenset(given)


def given_refs(world: Sequence[tuple[str, Artifact]], input: Artifact) -> frozenset[str]:
    """The refs of the input and the iterands it brought (recursively)."""
    given = given_with(input)
    return frozenset(ref for ref, a in world if id(a) in given)


def user_frames(frames: Sequence[traceback.FrameSummary], *, keep: int = 3) -> str:
    """The frames outside harness and asyncio (a user's tool, policy or thinker code) as
    traceback text; the last ``keep`` frames when every frame is the framework's."""
    own = [frame for frame in frames if not _is_framework(frame.filename)]
    chosen = own or list(frames)[-keep:]
    return "".join(traceback.format_list(chosen)).rstrip("\n")


def _is_framework(filename: str) -> bool:
    path = pathlib.Path(filename).resolve()
    return any(path.is_relative_to(root) for root in _FRAMEWORK)


def _short(artifact: Artifact) -> str:
    text = repr(artifact)
    return text if len(text) <= 100 else text[:97] + "..."


def _asked(question: object) -> str:
    if isinstance(question, Choice):
        return f"choice [{', '.join(question.options)}]"
    return type(question).__name__.lower()


def _answered(answer: Answer | None) -> str:
    if isinstance(answer, ChoiceAnswer):
        return f"{answer.choice} ({answer.probabilities[answer.choice]:g})"
    if isinstance(answer, NoulAnswer):
        return f"{answer.probability:g}"
    return "(no answer)" if answer is None else repr(answer)


def _turn_text(turn: DecisionTurn) -> str:
    if turn.artifact is None:
        selection = ", ".join(f"{ref} {p:g}" for ref, p in turn.selection.items())
        asked = "" if turn.next is not None else " (selection only)"
        return f"{turn.tool}{asked}, selection {{{selection}}}"
    outcome = f"failed: {turn.failure}" if turn.failure is not None else f"-> {turn.result}"
    return f"{turn.tool} on {turn.artifact} {outcome}"


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


def _during(model: _RecordingModel, thinker: DecisionThinker[Any, Any], world: World) -> str:
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
    turn: DecisionTurn, refs: Mapping[str, Artifact], formatters: object
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
    world: World,
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

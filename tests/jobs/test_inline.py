"""Jobs run in the task that awaits them (``Job.runs_inline``): a decision call awaited
through ``Dispatcher.run`` or ``JobContext.run`` makes no task of its own, and still keeps every
promise a job in its own task keeps: its time limit, its events, cancellation from outside,
``aclose``, and a turn of the loop for others when many run back to back."""

from __future__ import annotations

import asyncio
from typing import ClassVar, TypeVar

import pytest

from harness.catalog import CatalogEntry
from harness.errors import JobTimeoutError
from harness.jobs import Dispatcher, EventKind, Job, JobContext, JobEvent
from harness.jobs._intake import INTAKE_PER_SLICE
from harness.record import RecordingDispatcher
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionCall
from harness.tools import Identifiable, Workflow

from .stack import REQUEST, catalog_of, eventually

R = TypeVar("R")


def _entry() -> CatalogEntry:
    return CatalogEntry(
        id="local", provider="fake", wire_model_id="m", max_context_tokens=100, max_concurrent=4
    )


class _Waits(Job[asyncio.Task[object] | None]):
    """Sleeps ``seconds`` (none: never suspends), then answers the task it ran in."""

    def __init__(self, parent: Identifiable, seconds: float | None = None, **kw: object) -> None:
        super().__init__(parent, **kw)  # type: ignore[arg-type]  # timeout only
        self.seconds = seconds
        self.ended = False

    async def run(self, context: JobContext) -> asyncio.Task[object] | None:
        try:
            if self.seconds is not None:
                await asyncio.sleep(self.seconds)
            return asyncio.current_task()
        finally:
            self.ended = True


class _Inline(_Waits):
    runs_inline: ClassVar[bool] = True


class _Parent(Job[list[asyncio.Task[object] | None]]):
    """Runs an inline child and a task-of-its-own child through its context."""

    async def run(self, context: JobContext) -> list[asyncio.Task[object] | None]:
        return [await context.run(_Inline(context)), await context.run(_Waits(context))]


async def _carry_on(dispatcher: Dispatcher, job: _Waits, outcome: list[str]) -> None:
    """Await ``job``; on a cancellation, note how many the task still carries and carry on."""
    try:
        await dispatcher.run(job)
    except asyncio.CancelledError:
        here = asyncio.current_task()
        assert here is not None
        outcome.append(f"cancelled, cancelling={here.cancelling()}")
        return
    outcome.append("finished")


def _kinds(events: list[JobEvent], job: Job[R]) -> list[EventKind]:
    return [e.kind for e in events if e.job.job_id == job.identity.job_id]


@pytest.mark.parametrize("kind", [_Waits, _Inline], ids=["own task", "inline"])
async def test_a_job_runs_in_the_awaiting_task_only_when_it_runs_inline(
    kind: type[_Waits],
) -> None:
    events: list[JobEvent] = []
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        dispatcher.subscribe(events.append)
        job = kind(Workflow(), 0.01)
        ran_in = await dispatcher.run(job)
        here = asyncio.current_task()
        assert (ran_in is here) is (kind is _Inline)
        parent = _Parent(Workflow())
        inline_child, own_child = await dispatcher.run(parent)
        submitted = await dispatcher.submit(_Inline(Workflow())).result()
    assert submitted is not here  # submit always makes the job a task
    assert inline_child is not None
    assert own_child is not None
    assert inline_child is not own_child  # the inline child ran in its parent's task
    assert _kinds(events, job) == [EventKind.SCHEDULED, EventKind.STARTED, EventKind.COMPLETED]
    assert _kinds(events, parent)[-1] is EventKind.COMPLETED


@pytest.mark.parametrize("kind", [_Waits, _Inline], ids=["own task", "inline"])
async def test_a_time_limit_ends_the_job_and_leaves_the_awaiting_task_uncancelled(
    kind: type[_Waits],
) -> None:
    events: list[JobEvent] = []
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        dispatcher.subscribe(events.append)
        job = kind(Workflow(), 30.0, timeout=0.05)
        with pytest.raises(JobTimeoutError, match=r"within its timeout of 0\.05 s"):
            await dispatcher.run(job)
        here = asyncio.current_task()
        assert here is not None
        assert here.cancelling() == 0
        assert job.ended
        assert _kinds(events, job)[-1] is EventKind.TIMED_OUT
        assert await dispatcher.run(kind(Workflow(), 0.0)) is not None  # the task goes on


@pytest.mark.parametrize("kind", [_Waits, _Inline], ids=["own task", "inline"])
async def test_cancelling_the_awaiter_cancels_the_job_and_gives_its_permit_back(
    kind: type[_Waits],
) -> None:
    events: list[JobEvent] = []
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        dispatcher.subscribe(events.append)
        job = kind(Workflow(), 30.0)
        waiter = asyncio.ensure_future(dispatcher.run(job))
        await eventually(lambda: any(e.kind is EventKind.STARTED for e in events))
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert job.ended
        assert _kinds(events, job)[-1] is EventKind.CANCELLED
        entry = dispatcher.catalog.resolve_decision(None, asked_by="test")
        gate = dispatcher.admission.gate_for(entry)
        assert gate.available == entry.max_concurrent  # nothing held


@pytest.mark.parametrize("kind", [_Waits, _Inline], ids=["own task", "inline"])
async def test_aclose_cancels_a_running_job_and_returns_once_it_has_ended(
    kind: type[_Waits],
) -> None:
    dispatcher = Dispatcher(catalog_of(_entry()))
    job = kind(Workflow(), 30.0)
    outcome: list[str] = []
    waiting = asyncio.ensure_future(_carry_on(dispatcher, job, outcome))
    await asyncio.sleep(0.02)
    await dispatcher.aclose()
    assert job.ended  # aclose returned only once the job had ended
    await waiting
    assert outcome == ["cancelled, cancelling=0"]
    assert not waiting.cancelled()
    with pytest.raises(RuntimeError, match="the dispatcher is closed"):
        await dispatcher.run(kind(Workflow()))


async def test_inline_jobs_back_to_back_still_give_the_loop_a_turn() -> None:
    """A job that never suspends, run inline many times in a row: the intake lets at most
    INTAKE_PER_SLICE through a turn, so another task still runs in between."""
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(other())
    await asyncio.sleep(0)
    async with Dispatcher(catalog_of(_entry())) as dispatcher:
        before = turns
        for _ in range(INTAKE_PER_SLICE * 4):
            await dispatcher.run(_Inline(Workflow()))
        assert turns - before >= 3
    ticking.cancel()


async def test_a_recording_dispatcher_keeps_decisions_run_inline() -> None:
    model = FakeDecisionModel()
    dispatcher = RecordingDispatcher(catalog_of(_entry()), clients={"local": model})
    async with dispatcher:
        first = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(first)
        second = DecisionCall(Workflow(), REQUEST)
        await dispatcher.submit(second).result()
    assert dispatcher.decisions == [first, second]


async def test_aclose_twice_at_once_cancels_an_inline_job_once() -> None:
    dispatcher = Dispatcher(catalog_of(_entry()))
    job = _Inline(Workflow(), 30.0)
    seen: list[str] = []
    waiting = asyncio.ensure_future(_carry_on(dispatcher, job, seen))
    await asyncio.sleep(0.02)
    await asyncio.wait_for(asyncio.gather(dispatcher.aclose(), dispatcher.aclose()), 10)
    await waiting
    assert job.ended
    assert seen == ["cancelled, cancelling=0"]

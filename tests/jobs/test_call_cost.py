"""The fixed cost of a call kept small without giving up the contract: events are built only for the
kinds someone subscribed to, jobs coming one at a time pass the intake without scheduling
anything, a job's record is made on first use, a workflow has one root identity."""

from __future__ import annotations

import asyncio
import gc

import attrs
import pytest

from harness.catalog import Catalog, CatalogEntry
from harness.decision import systemone
from harness.errors import BudgetExceededError
from harness.jobs import (
    DecisionBinding,
    Dispatcher,
    EventKind,
    Job,
    JobContext,
    JobEvent,
    JobRecord,
    JobSnapshot,
    ModelCall,
    Requirements,
    ResolvedBinding,
)
from harness.jobs import _dispatcher as dispatcher_module
from harness.jobs import _events as events_module
from harness.jobs import _requirements as requirements_module
from harness.jobs._intake import INTAKE_PER_SLICE, Intake
from harness.scope import Budget, Workflow
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionCall

from .stack import REQUEST, catalog_of

ENTRY = CatalogEntry(
    id="fake", provider="fake", wire_model_id="m", max_context_tokens=10**6, max_concurrent=4
)


class _Plain(Job[int]):
    """A job that calls no model."""

    async def run(self, context: JobContext) -> int:
        context.progress("half way")
        return 7


def _count_snapshots(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    built: list[object] = []
    real = JobSnapshot

    def counting(**fields: object) -> object:
        built.append(fields["job_id"])
        return real(**fields)  # type: ignore[arg-type]  # the dispatcher's own fields

    monkeypatch.setattr(events_module, "JobSnapshot", counting)
    return built


async def test_no_event_is_built_when_nobody_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _count_snapshots(monkeypatch)
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        response = await dispatcher.run(DecisionCall(Workflow(), REQUEST))
        assert await dispatcher.run(_Plain(Workflow())) == 7
    assert response.success
    assert built == []


async def test_only_the_kinds_subscribed_to_are_built_and_delivered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = _count_snapshots(monkeypatch)
    seen: list[EventKind] = []
    judged: list[EventKind] = []

    def predicate(event: JobEvent) -> bool:
        judged.append(event.kind)
        return True

    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        subscription = dispatcher.subscribe(
            lambda event: seen.append(event.kind), predicate, kinds=[EventKind.COMPLETED]
        )
        job = _Plain(Workflow())
        await dispatcher.run(job)
        await dispatcher.run(DecisionCall(Workflow(), REQUEST))
        assert seen == judged == [EventKind.COMPLETED, EventKind.COMPLETED]
        assert len(built) == 2
        assert built[0] == job.identity.job_id
        subscription.cancel()
        await dispatcher.run(_Plain(Workflow()))  # built once more, delivered to nobody, dropped
        await dispatcher.run(_Plain(Workflow()))
    assert seen == [EventKind.COMPLETED] * 2
    assert len(built) == 3


async def test_a_subscription_without_kinds_still_hears_every_kind() -> None:
    seen: list[EventKind] = []
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        dispatcher.subscribe(lambda event: seen.append(event.kind))
        await dispatcher.run(_Plain(Workflow()))
    assert seen == [
        EventKind.SCHEDULED,
        EventKind.STARTED,
        EventKind.PROGRESS,
        EventKind.COMPLETED,
    ]


async def test_jobs_coming_one_at_a_time_pass_the_intake_without_waiting() -> None:
    loop = asyncio.get_running_loop()
    intake = Intake(INTAKE_PER_SLICE)
    assert all(intake.passes(loop) for _ in range(INTAKE_PER_SLICE))
    assert not intake.passes(loop)  # the slice is full: the next one waits for a later turn
    waiting = asyncio.ensure_future(intake.wait(loop))
    for _ in range(5):
        await asyncio.sleep(0)
    assert waiting.done()
    # The next slice opened in a later turn for the one in line, which it counts.
    assert sum(intake.passes(loop) for _ in range(INTAKE_PER_SLICE)) == INTAKE_PER_SLICE - 1


async def test_many_jobs_in_a_row_all_run_through_one_dispatcher() -> None:
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        results = [await dispatcher.run(_Plain(Workflow())) for _ in range(5 * INTAKE_PER_SLICE)]
        calls = [DecisionCall(Workflow(), REQUEST) for _ in range(3 * INTAKE_PER_SLICE)]
        responses = await asyncio.gather(*(dispatcher.run(call) for call in calls))
    assert results == [7] * 5 * INTAKE_PER_SLICE
    assert all(response.success for response in responses)
    assert all(len(call.record) == 1 and call.record.calls[0].success for call in calls)


async def test_a_record_is_made_on_first_use_and_kept() -> None:
    job = _Plain(Workflow())
    first = job.record
    assert job.record is first
    assert len(first) == 0
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        call = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(call)
    assert call.record is call.record
    assert [c.success for c in call.record] == [True]


def test_a_workflow_has_one_root_identity_carrying_its_budget() -> None:
    workflow = Workflow(budget=Budget(max_decisions=3))
    assert workflow.identity is workflow.identity
    assert workflow.identity.job_id == workflow.identity.workflow_id == workflow.workflow_id
    assert workflow.identity.budgets == (workflow.account,)
    child = DecisionCall(workflow, REQUEST).identity
    assert child.parent_id == workflow.workflow_id
    assert child.budgets == (workflow.account,)
    assert Workflow(workflow_id="w") == Workflow(workflow_id="w")


class _Failing(Job[int]):
    """A job that fails."""

    async def run(self, context: JobContext) -> int:
        raise ValueError("no")


async def test_a_job_leaves_the_running_set_when_it_ends_and_its_failure_is_retrieved() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        async with Dispatcher(catalog_of(ENTRY)) as dispatcher:
            assert await dispatcher.run(_Plain(Workflow())) == 7
            failing = dispatcher.submit(_Failing(Workflow()))  # nobody awaits its result
            for _ in range(3):  # its step, then its done callback
                await asyncio.sleep(0)
            assert failing.done()
            assert dispatcher._tasks == set()
            del failing
            gc.collect()
        assert reported == []  # no "exception never retrieved"
    finally:
        loop.set_exception_handler(None)


async def test_jobs_cancelled_before_they_ran_are_swept_from_the_running_set() -> None:
    async with Dispatcher(catalog_of(ENTRY)) as dispatcher:
        for _ in range(10):
            for _ in range(dispatcher_module._SWEEP_AT):
                handle = dispatcher.submit(_Plain(Workflow()))
                handle.cancel()  # cancelled before its first step: it never runs its own end
            await asyncio.sleep(0)
        assert 0 < len(dispatcher._tasks) <= 2 * dispatcher_module._SWEEP_AT
        assert await dispatcher.run(_Plain(Workflow())) == 7


async def test_a_pin_changed_between_calls_is_followed_and_each_entry_is_admitted() -> None:
    other = CatalogEntry(
        id="other", provider="fake", wire_model_id="n", max_context_tokens=10**6, max_concurrent=1
    )
    catalog = Catalog([ENTRY, other], {"decision": "fake"})
    model = FakeDecisionModel()
    async with Dispatcher(catalog, clients={"fake": model, "other": model}) as dispatcher:
        first = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(first)
        catalog.pin("decision", "other")
        second = DecisionCall(Workflow(), REQUEST)
        await dispatcher.run(second)
        gate = dispatcher.admission.gate_for(other)
        assert (gate.in_use, gate.waiting) == (0, 0)
    assert [e.id for e in model.entries] == ["fake", "other"]
    assert [c.entry_id for c in (*first.record, *second.record)] == ["fake", "other"]


async def test_the_record_made_on_read_holds_every_field_of_the_call() -> None:
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        call = DecisionCall(Workflow(), REQUEST)
        response = await dispatcher.run(call)
    assert len(call.record) == 1
    (made,) = call.record.calls
    assert call.record.calls[0] is made  # made once
    assert made == ModelCall(
        entry_id="fake",
        provider="fake",
        success=True,
        answers=response.answers,
        reason=None,
        input_tokens=response.input_tokens,
        counted_input_tokens=len(systemone.encode_body(REQUEST, "m")),
        latency=response.latency,
        model=response.model,
        request_id=response.request_id,
        cost=None,
        counted_by="bytes",
        reading=None,
        calibrated=None,
    )
    record = JobRecord()
    record.add(made)
    assert list(record) == [made]


async def test_a_jobs_identity_is_made_on_first_read_with_the_id_drawn_when_it_was_made() -> None:
    workflow = Workflow(budget=Budget(max_decisions=1))
    first = DecisionCall(workflow, REQUEST)
    second = DecisionCall(workflow, REQUEST)
    assert int(second.identity.job_id.rsplit("-", 1)[1]) > int(
        first.identity.job_id.rsplit("-", 1)[1]
    )
    assert first.identity is first.identity
    assert first.identity.parent_id == workflow.workflow_id
    mine = first.identity.child("mine")
    first.identity = mine
    assert first.identity is mine
    assert first.describe().endswith(" mine")
    async with Dispatcher(catalog_of(ENTRY), clients={"fake": FakeDecisionModel()}) as dispatcher:
        await dispatcher.run(DecisionCall(workflow, REQUEST))  # charged without its identity
        with pytest.raises(BudgetExceededError):
            await dispatcher.run(DecisionCall(workflow, REQUEST))
    assert workflow.account is not None
    assert workflow.account.decisions == 1


def test_the_fast_constructors_make_what_the_public_ones_make() -> None:
    made = Requirements.decision(REQUEST, "fake")
    public = Requirements((DecisionBinding(pinned="fake", request=REQUEST),))
    assert made == public
    assert hash(made) == hash(public)
    assert repr(made) == repr(public)
    assert type(made.bindings[0]) is DecisionBinding
    assert made.bindings[0].seat == "decision"
    assert made.bindings[0].flat_tokens is None
    assert Requirements.decision(REQUEST) == Requirements((DecisionBinding(request=REQUEST),))
    with pytest.raises(ValueError, match="prices a request or a flat token count"):
        Requirements.decision(None)  # type: ignore[arg-type]  # refused as the public way does
    reservation = DecisionBinding(request=REQUEST).reserve(ENTRY)
    binding = made.bindings[0]
    fast = requirements_module.resolved(binding, ENTRY, reservation)
    assert fast == ResolvedBinding(binding, ENTRY, reservation)
    assert (fast.binding, fast.entry, fast.reservation) == (binding, ENTRY, reservation)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fast.entry = ENTRY  # type: ignore[misc]  # still frozen
    assert reservation is DecisionBinding(request=REQUEST).reserve(ENTRY)  # one per byte length

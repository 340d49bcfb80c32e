"""What lands on the record and in events: cost, request ids, counts, user ids, whose timeout."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from harness.catalog import Catalog, tokenizer
from harness.decision import Answer, Choice, DecisionRequest, DecisionResponse, Noul
from harness.errors import ExternalServiceError, TransientError
from harness.jobs import Dispatcher, EventKind, Job, JobContext, JobEvent, JobTimeoutError, Pacing
from harness.providers import FakeDecisionModel
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall, ThinkerRun
from harness.tools import Workflow

from .notes import Note, Triage, fake_catalog, triage_policy

REQUEST = DecisionRequest(
    "The invoice is overdue by ten days.",
    {"act": Choice("What now?", {"remind": "send a reminder", "wait": None}), "late": Noul("?")},
)


async def test_an_answered_call_is_priced_from_the_billed_tokens_and_keeps_its_request_id() -> None:
    async with FakeSystemOneServer() as server:
        entry = server.entry(input_price_per_million=2.0, wire_model_id="pinned-model")
        catalog = Catalog([entry], {"decision": entry.id})
        call = DecisionCall(Workflow(), REQUEST).pin_model(entry)
        async with Dispatcher(catalog) as dispatcher:
            response = await dispatcher.run(call)
        sent = server.bodies[0]
    (record,) = call.record.calls
    assert record.input_tokens == response.input_tokens
    assert record.input_tokens is not None
    assert record.cost == pytest.approx(record.input_tokens * 2.0 / 1_000_000)
    assert record.request_id == response.request_id == "fake-1"
    assert record.counted_input_tokens == tokenizer(entry.tokenizer).count(sent)
    assert b'"model":"pinned-model"' in sent


async def test_a_failed_call_costs_nothing_and_keeps_the_servers_request_id() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.unavailable("warming up"))
        entry = server.entry(input_price_per_million=2.0)
        catalog = Catalog([entry], {"decision": entry.id})
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=0)
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            with pytest.raises(ExternalServiceError) as failure:
                await dispatcher.run(call)
    (record,) = call.record.calls
    assert not record.success
    assert record.cost is None
    assert record.request_id == "fake-1"
    assert failure.value.request_id == "fake-1"


async def test_snapshots_carry_the_workflow_and_the_user() -> None:
    events: list[JobEvent] = []
    async with Dispatcher(fake_catalog(), clients={"fake": FakeDecisionModel()}) as dispatcher:
        dispatcher.subscribe(events.append, lambda e: e.kind is EventKind.COMPLETED)
        await dispatcher.run(DecisionCall(Workflow("flow-7", user_id="ada"), REQUEST))
    (event,) = events
    assert event.job.workflow_id == "flow-7"
    assert event.job.user_id == "ada"
    assert event.job.parent_id == "flow-7"


async def test_the_retry_budget_is_one_counter_per_execution() -> None:
    """A thinker with a budget of 1 whose every decision fails once still completes."""
    failed: set[int] = set()

    def flaky(request: DecisionRequest) -> Mapping[str, Answer]:
        key = len(request.questions) * 1000 + len(str(request.state))
        if key not in failed:
            failed.add(key)
            raise TransientError("HTTP 503: loading", status=503)
        return triage_policy(request)

    events: list[JobEvent] = []
    thinker = Triage(Workflow())
    async with Dispatcher(
        fake_catalog(), clients={"fake": FakeDecisionModel(flaky)}, pacing=Pacing.immediate()
    ) as dispatcher:
        dispatcher.subscribe(events.append, lambda e: e.kind is EventKind.RETRY)
        answer = await dispatcher.run(
            ThinkerRun(Workflow(), thinker, Note("alpha is due; beta can wait"), upstream_retries=1)
        )
    assert [v.note for v in answer] == ["alpha is due"]
    assert len(events) == len(thinker.turns()) == 4
    assert all(e.job.job_class == "DecisionCall" and e.attempt == 1 for e in events)


class Parent(Job[DecisionResponse]):
    """A job with no timeout of its own that asks one impatient decision."""

    async def run(self, context: JobContext) -> DecisionResponse:
        return await context.run(DecisionCall(context, REQUEST, timeout=0.2, upstream_retries=0))


async def test_a_childs_timeout_fails_its_parent_without_calling_it_timed_out() -> None:
    events: list[JobEvent] = []
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.hang())
        entry = server.entry()
        async with Dispatcher(Catalog([entry], {"decision": entry.id})) as dispatcher:
            dispatcher.subscribe(events.append, lambda e: e.kind.terminal)
            with pytest.raises(JobTimeoutError):
                await dispatcher.run(Parent(Workflow()))
    kinds = {e.job.job_class: e.kind for e in events}
    assert kinds == {"DecisionCall": EventKind.TIMED_OUT, "Parent": EventKind.FAILED}

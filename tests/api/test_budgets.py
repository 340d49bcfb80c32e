"""Budgets per run and per workflow: each kind refused before the wire, the partial record kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from examples.triage import Note, Triage, TriageVerdict
from harness import (
    Budget,
    BudgetExceededError,
    Catalog,
    DecisionCall,
    DecisionRequest,
    Dispatcher,
    Noul,
    RunFailedError,
    RunResult,
    Workflow,
    run,
)
from harness.record import load_record
from harness.testing import FakeSystemOneServer

from .policies import triage_policy

TEXT = "alpha is due today; beta can wait"


async def _run(budget: Budget | None, *, price: float = 1_000.0) -> tuple[object, int]:
    """Run the triage thinker against a loopback server; the outcome and the server's count."""
    async with FakeSystemOneServer(policy=triage_policy) as server:
        entry = server.entry(input_price_per_million=price)
        catalog = Catalog([entry], {"decision": entry.id})
        try:
            outcome: object = await run(Triage, Note(TEXT), catalog=catalog, budget=budget)
        except RunFailedError as failed:
            outcome = failed
        return outcome, server.requests


def _unbounded() -> RunResult[TriageVerdict]:
    result, requests = asyncio.run(_run(None))
    assert isinstance(result, RunResult)
    assert requests == result.usage.decisions == 4
    return result


@pytest.mark.parametrize("kind", ["decisions", "input_tokens", "cost"])
def test_each_kind_refuses_the_call_that_would_pass_it_before_the_wire(kind: str) -> None:
    full = _unbounded()
    first_two = full.calls[:2]
    tokens = sum(c.counted_input_tokens or 0 for c in first_two)
    cost = tokens * 1_000.0 / 1_000_000
    budget = {
        "decisions": Budget(max_decisions=2),
        "input_tokens": Budget(max_input_tokens=tokens),
        "cost": Budget(max_cost=cost * 1.0000001),
    }[kind]
    failed, requests = asyncio.run(_run(budget))
    assert isinstance(failed, RunFailedError)
    error = failed.error
    assert isinstance(error, BudgetExceededError)
    assert error.kind == kind
    assert error.scope == "run"
    assert "nothing was sent" in error.message
    assert f"max_{kind}" in error.message
    assert requests == 2  # the third call never reached the server
    assert failed.result.usage.decisions == 2
    assert len(failed.result.turns) == 2  # the partial record keeps the turns so far
    assert failed.record.failure is not None
    assert failed.record.failure.startswith("BudgetExceededError: the run budget refused")
    assert len(failed.record.calls) == 2


def test_the_partial_record_is_written_and_reads_back(tmp_path: Path) -> None:
    failed, _ = asyncio.run(_run(Budget(max_decisions=1)))
    assert isinstance(failed, RunFailedError)
    path = failed.result.write_record(tmp_path / "partial.json")
    record = load_record(path)
    assert len(record.turns) == 1
    assert record.answer == ()
    assert record.failure is not None
    assert "max_decisions" in record.failure


def test_a_budget_of_zero_decisions_sends_nothing_at_all() -> None:
    failed, requests = asyncio.run(_run(Budget(max_decisions=0)))
    assert isinstance(failed, RunFailedError)
    assert requests == 0
    assert failed.result.turns == ()


def test_a_budget_that_is_not_reached_changes_nothing() -> None:
    result, requests = asyncio.run(_run(Budget(max_decisions=4, max_cost=10.0)))
    assert isinstance(result, RunResult)
    assert requests == 4
    assert [v.note for v in result.items] == ["alpha is due today"]


def test_an_entry_without_a_price_costs_nothing_against_a_cost_budget() -> None:
    async def scenario() -> tuple[object, int]:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            result = await run(Triage, Note(TEXT), catalog=catalog, budget=Budget(max_cost=0.0))
            return result, server.requests

    result, requests = asyncio.run(scenario())
    assert isinstance(result, RunResult)
    assert requests == 4


def test_a_workflow_budget_spans_runs() -> None:
    workflow = Workflow(budget=Budget(max_decisions=6))

    async def scenario() -> tuple[RunResult[TriageVerdict], RunFailedError, int]:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            first = await run(Triage, Note(TEXT), catalog=catalog, workflow=workflow)
            with pytest.raises(RunFailedError) as caught:
                await run(Triage, Note(TEXT), catalog=catalog, workflow=workflow)
            return first, caught.value, server.requests

    first, failed, requests = asyncio.run(scenario())
    assert first.usage.decisions == 4
    assert isinstance(failed.error, BudgetExceededError)
    assert failed.error.scope == f"workflow {workflow.workflow_id}"
    assert requests == 6
    assert workflow.account is not None
    assert workflow.account.decisions == 6


def test_a_workflow_budget_applies_to_jobs_run_on_a_dispatcher_directly() -> None:
    workflow = Workflow(budget=Budget(max_decisions=1))
    request = DecisionRequest("the state", {"q": Noul("Is it so?")})

    async def scenario() -> tuple[int, BudgetExceededError]:
        async with FakeSystemOneServer() as server:
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            async with Dispatcher(catalog) as dispatcher:
                await dispatcher.run(DecisionCall(workflow, request))
                with pytest.raises(BudgetExceededError) as caught:
                    await dispatcher.run(DecisionCall(workflow, request))
            return server.requests, caught.value

    requests, error = asyncio.run(scenario())
    assert requests == 1
    assert error.spent == 1
    assert error.limit == 1
    assert error.asked == 1
    assert not error.llm_readable


def test_a_refused_call_charges_no_account() -> None:
    workflow = Workflow(budget=Budget(max_decisions=10))
    failed, _ = asyncio.run(_run(Budget(max_decisions=1)))
    assert isinstance(failed, RunFailedError)
    assert workflow.account is not None
    assert workflow.account.decisions == 0

    async def scenario() -> RunFailedError:
        async with FakeSystemOneServer(policy=triage_policy) as server:
            catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
            with pytest.raises(RunFailedError) as caught:
                await run(
                    Triage,
                    Note(TEXT),
                    catalog=catalog,
                    workflow=workflow,
                    budget=Budget(max_decisions=1),
                )
            return caught.value

    refused = asyncio.run(scenario())
    assert isinstance(refused.error, BudgetExceededError)
    assert refused.error.scope == "run"
    assert workflow.account.decisions == 1  # the one call sent; the refused one charged nowhere


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"max_decisions": -1}, "max_decisions must be an integer >= 0"),
        ({"max_decisions": 1.5}, "max_decisions must be an integer"),
        ({"max_input_tokens": True}, "max_input_tokens must be an integer"),
        ({"max_cost": float("nan")}, "max_cost must be a number >= 0"),
        ({"max_cost": -0.1}, "max_cost must be a number >= 0"),
    ],
)
def test_a_bad_limit_is_refused_naming_it(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Budget(**fields)  # type: ignore[arg-type]

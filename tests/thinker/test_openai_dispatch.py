"""The OpenAI Decisions provider through the dispatcher: pricing, retries and the record."""

from __future__ import annotations

import pytest

from harness.catalog import Catalog, tokenizer
from harness.decision import Choice, DecisionRequest, Noul, Score, openai
from harness.errors import UpstreamThrottleError
from harness.jobs import Dispatcher, EventKind, JobEvent
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from ..jobs.stack import RecordedPacing

REQUEST = DecisionRequest(
    {"ticket": "The invoice is overdue by ten days."},
    {
        "act": Choice("What now?", {"remind": "send a reminder", "wait": None}),
        "late": Noul("Is it late?"),
        "severity": Score("How bad is it?", ["low", "medium", "high"]),
    },
)


async def test_a_429_is_paced_by_its_hint_then_answered_and_recorded() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.rate_limited(retry_after=2))
        entry = server.entry(
            id="decisions",
            provider="openai",
            wire_model_id="gpt-6-luna",
            input_price_per_million=1.0,
        )
        pacing = RecordedPacing()
        events: list[JobEvent] = []
        call = DecisionCall(Workflow(), REQUEST)
        async with Dispatcher(Catalog([entry], {"decision": entry.id}), pacing=pacing) as d:
            d.subscribe(events.append, lambda e: e.kind is EventKind.RETRY)
            response = await d.run(call)
        paths, bodies = list(server.paths), list(server.bodies)
    assert paths == ["/v1/decisions", "/v1/decisions"]
    assert pacing.slept == [2.0]
    assert [e.attempt for e in events] == [1]
    assert response.choice("act").choice in {"remind", "wait"}
    assert 0.0 <= response.noul("late").probability <= 1.0
    assert response.score("severity").levels == ("low", "medium", "high")
    failed, answered = call.record.calls
    assert not failed.success
    assert failed.reason is not None
    assert "HTTP 429" in failed.reason
    assert answered.success
    assert answered.answers == response.answers
    assert bodies[1] == openai.encode_body(REQUEST, "gpt-6-luna")
    assert answered.counted_input_tokens == tokenizer(entry.tokenizer).count(bodies[1])


async def test_a_spent_budget_on_the_openai_wire_names_it() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.rate_limited(retry_after=0), times=3)
        entry = server.entry(id="decisions", provider="openai", wire_model_id="gpt-6-luna")
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=1)
        async with Dispatcher(
            Catalog([entry], {"decision": entry.id}), pacing=RecordedPacing()
        ) as d:
            with pytest.raises(UpstreamThrottleError, match=r"retry budget \(1\)"):
                await d.run(call)
    assert [c.success for c in call.record.calls] == [False, False]

"""CONTRACT.md "Decision call"."""

from __future__ import annotations

import attrs
import pytest

from harness.catalog import Catalog, tokenizer
from harness.decision import Choice, DecisionRequest, Noul, systemone
from harness.errors import ExternalServiceError, LLMReadableError
from harness.jobs import DecisionBinding, Dispatcher, Pacing
from harness.providers import FakeDecisionModel
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall, MissingRequestError
from harness.tools import Workflow

REQUEST = DecisionRequest(
    "The invoice is overdue by ten days.",
    {
        "act": Choice("What now?", {"remind": "send a reminder", "wait": None}),
        "late": Noul("Late?"),
    },
)


def test_requirements_without_a_request_are_refused_naming_the_request() -> None:
    call = DecisionCall(Workflow())
    with pytest.raises(MissingRequestError, match="request"):
        call.requirements()


def test_requirements_are_one_unpinned_read_only_binding_and_the_timeout_is_60_s() -> None:
    call = DecisionCall(Workflow(), REQUEST)
    requirements = call.requirements()
    assert len(requirements.bindings) == 1
    (binding,) = requirements.bindings
    assert binding.pinned is None
    assert binding.seat == "decision"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        binding.pinned = "x"  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        requirements.bindings = ()  # type: ignore[misc]
    assert call.timeout == 60.0


def test_a_decision_call_has_no_tool_name() -> None:
    assert DecisionCall(Workflow(), REQUEST).tool_name is None


async def test_pin_model_binds_that_exact_entry() -> None:
    async with FakeSystemOneServer() as server:
        pinned = server.entry(id="pinned", wire_model_id="pinned-model")
        other = server.entry(id="other")
        catalog = Catalog([other, pinned], {"decision": "other"})
        call = DecisionCall(Workflow(), REQUEST).pin_model(pinned)
        assert call.requirements().bindings[0].pinned == "pinned"
        async with Dispatcher(catalog) as dispatcher:
            response = await dispatcher.run(call)
        assert response.success
        assert call.record.calls[0].entry_id == "pinned"
        assert b'"model":"pinned-model"' in server.bodies[0]


def test_the_reservation_is_the_wire_body_counted_under_the_entrys_tokenizer() -> None:
    server = FakeSystemOneServer(port=1)  # never started: only its entry helper is used
    entry = server.entry(id="counted", wire_model_id="jev-1.13.0", tokenizer="o200k_base")
    binding = DecisionBinding(pinned="counted", request=REQUEST)
    reservation = binding.price(entry)
    body = systemone.encode_body(REQUEST, "jev-1.13.0")
    assert reservation.input_tokens == tokenizer("o200k_base").count(body)
    assert reservation.input_tokens > 0
    assert reservation.output_tokens == 0


async def test_an_answered_call_lands_on_its_record() -> None:
    async with FakeSystemOneServer(model="served-1.2") as server:
        catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
        call = DecisionCall(Workflow(), REQUEST)
        async with Dispatcher(catalog) as dispatcher:
            response = await dispatcher.run(call)
    assert server.requests == 1
    (record,) = call.record.calls
    assert record.success
    assert record.answers == response.answers
    assert record.answers["act"] == response.choice("act")
    assert record.input_tokens is not None
    assert record.input_tokens > 0
    assert record.input_tokens == response.input_tokens
    assert record.latency > 0
    assert record.model == "served-1.2"
    assert record.output_tokens == 0
    assert response.output_tokens == 0


async def test_a_failed_call_lands_on_the_record_and_fails_the_submit() -> None:
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.unavailable("warming up"))
        catalog = Catalog([server.entry()], {"decision": "fake-systemone"})
        call = DecisionCall(Workflow(), REQUEST, upstream_retries=0)
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            with pytest.raises(ExternalServiceError) as failure:
                await dispatcher.run(call)
    (record,) = call.record.calls
    assert not record.success
    assert record.reason is not None
    assert "HTTP 503" in record.reason
    chain = []
    error: BaseException | None = failure.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__
    assert any(record.reason in text for text in chain)
    assert isinstance(failure.value, LLMReadableError)


async def test_a_fake_model_call_round_trips_once() -> None:
    model = FakeDecisionModel()
    catalog = Catalog(
        [FakeSystemOneServer(port=1).entry(id="fake", provider="fake")], {"decision": "fake"}
    )
    async with Dispatcher(catalog, clients={"fake": model}) as dispatcher:
        response = await dispatcher.run(DecisionCall(Workflow(), REQUEST))
    assert len(model.requests) == 1
    assert response.success

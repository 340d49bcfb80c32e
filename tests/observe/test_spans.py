"""The span tree and the metrics of real runs, read back from the SDK's in-memory exporters."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest
from opentelemetry.sdk.metrics.export import HistogramDataPoint, NumberDataPoint
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

import harness.observe
from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, DecisionRequest, DecisionResponse, Noul, NoulAnswer
from harness.errors import OverloadedError
from harness.jobs import Dispatcher, Pacing
from harness.providers import FakeDecisionModel
from harness.thinker import DecisionCall, DecisionThinker, ThinkerRun
from harness.tools import Identifiable, Workflow, tool_name
from tests.observe.conftest import Telemetry
from tests.thinker.notes import (
    JudgeNote,
    Note,
    SplitNote,
    Triage,
    Verdict,
    pick,
    triage_policy,
)


@tool_name("review")
class Review(DecisionThinker[Note, Verdict]):
    """Reviews a note by running the triage thinker on it."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=Triage,
            palette=(),
            objective="Review the note through a triage",
        )


def review_policy(request: DecisionRequest) -> Mapping[str, Answer]:
    """The outer run: triage the note, then select; the nested run: the triage policy."""
    nxt = request.questions.get("next")
    if isinstance(nxt, Choice) and "triage" in nxt.options:
        chosen = request.questions["triage_input"]
        assert isinstance(chosen, Choice)
        return {"next": pick(nxt, "triage"), "triage_input": pick(chosen, "note#1")}
    return triage_policy(request)


class FailsFirst:
    """A client whose first call answers 503 (a retryable failure), then the inner model's."""

    def __init__(self, inner: FakeDecisionModel) -> None:
        self.inner = inner
        self.calls = 0

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        self.calls += 1
        if self.calls == 1:
            raise OverloadedError("HTTP 503: loading", status=503)
        return await self.inner.decide(request, entry, timeout=timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()


def priced_catalog() -> Catalog:
    entry = CatalogEntry(
        id="fake",
        provider="fake",
        wire_model_id="fake-decider",
        max_context_tokens=100_000,
        max_concurrent=4,
        input_price_per_million=2.0,
    )
    return Catalog([entry], {"decision": "fake"})


async def run_review(client: FailsFirst) -> None:
    async with Dispatcher(
        priced_catalog(), clients={"fake": client}, pacing=Pacing.immediate()
    ) as dispatcher:
        answer = await dispatcher.run(
            ThinkerRun(Workflow(), Review(Workflow()), Note("alpha is due; beta can wait"))
        )
    assert [v.note for v in answer.iterands] == ["alpha is due"]


def number(span: ReadableSpan, key: str) -> float:
    value = (span.attributes or {})[key]
    assert isinstance(value, int | float)
    return value


def by_name(spans: Sequence[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def parent_of(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(
        s for s in spans if s.context is not None and s.context.span_id == span.parent.span_id
    )


def chain(span: ReadableSpan, spans: Sequence[ReadableSpan]) -> list[str]:
    names = []
    current: ReadableSpan | None = span
    while current is not None:
        names.append(current.name)
        current = parent_of(current, spans)
    return names


async def test_a_two_turn_run_with_a_nested_thinker_and_a_retried_call(
    telemetry: Telemetry,
) -> None:
    await run_review(FailsFirst(FakeDecisionModel(review_policy)))
    spans = telemetry.spans.get_finished_spans()
    named = by_name(spans)
    (outer,) = named["run review"]
    (inner,) = named["run triage"]
    assert outer.parent is None
    assert outer.attributes is not None
    assert inner.attributes is not None
    assert outer.attributes["harness.objective"] == "Review the note through a triage"
    assert outer.attributes["harness.max_turns"] == 32
    assert outer.attributes["harness.outcome"] == "completed"
    assert outer.attributes["harness.turns"] == 2
    assert inner.attributes["harness.turns"] == 4
    # one trace, parented along the job tree: the nested run is the tool of the outer's turn 1
    assert {s.context.trace_id for s in spans if s.context is not None} == {outer.context.trace_id}
    assert chain(inner, spans) == ["run triage", "turn 1", "run review"]
    assert inner.attributes["harness.input_ref"] == "note#1"
    # the outer's first decision was retried: one span, a retry event, status of the last try
    outer_turns = [s for s in named["turn 1"] if parent_of(s, spans) is outer]
    (outer_turn1,) = outer_turns
    assert outer_turn1.attributes is not None
    assert outer_turn1.attributes["harness.move"] == "triage"
    assert outer_turn1.attributes["harness.chosen_ref"] == "note#1"
    decisions = named["decision fake-decider"]
    assert len(decisions) == 2 + 4  # outer: triage, selection; nested: split, 2 judges, finish
    first = next(d for d in decisions if parent_of(d, spans) is outer_turn1)
    assert first.kind is SpanKind.CLIENT
    assert first.attributes is not None
    assert first.attributes["harness.retries"] == 1
    assert [e.name for e in first.events] == ["retry"]
    retry = first.events[0].attributes
    assert retry is not None
    assert retry["http.response.status_code"] == 503
    assert retry["harness.retry.kind"] == "OverloadedError"
    for decision in decisions:
        attributes = decision.attributes
        assert attributes is not None
        assert attributes["gen_ai.operation.name"] == "decision"
        assert attributes["gen_ai.request.model"] == "fake-decider"
        assert attributes["harness.entry"] == "fake"
        assert attributes["harness.decision.questions"] >= 1  # type: ignore[operator]
        assert attributes["harness.usage.counted_input_tokens"] > 0  # type: ignore[operator]
        assert attributes["harness.cost"] > 0  # type: ignore[operator]
        assert decision.status.status_code is StatusCode.UNSET
    # the nested run's tools sit in its own turns, each with its input and product refs
    tools = named["tool split_note"] + named["tool judge_note"]
    assert len(tools) == 3
    for tool in tools:
        assert chain(tool, spans)[1:] == [
            chain(tool, spans)[1],
            "run triage",
            "turn 1",
            "run review",
        ]
        assert tool.attributes is not None
        assert str(tool.attributes["harness.input_ref"]).startswith("note#")
        assert "harness.product_ref" in tool.attributes
    split = named["tool split_note"][0]
    assert split.attributes is not None
    assert split.attributes["harness.input_ref"] == "note#1"
    # children end within their parents
    for span in spans:
        parent = parent_of(span, spans)
        if parent is not None:
            assert parent.start_time is not None
            assert span.start_time is not None
            assert parent.start_time <= span.start_time
            assert parent.end_time is not None
            assert span.end_time is not None
            assert span.end_time <= parent.end_time, (span.name, parent.name)


async def test_a_failed_run_marks_its_span_and_the_failing_decision(telemetry: Telemetry) -> None:
    def broken(request: DecisionRequest) -> Mapping[str, Answer]:
        raise OverloadedError("HTTP 503: still loading", status=503)

    catalog = priced_catalog()
    model = FakeDecisionModel(broken)
    async with Dispatcher(catalog, clients={"fake": model}, pacing=Pacing.immediate()) as d:
        with pytest.raises(Exception, match="retry budget") as failed:
            await d.run(ThinkerRun(Workflow(), Triage(Workflow()), Note("alpha; beta")))
    named = by_name(telemetry.spans.get_finished_spans())
    (run,) = named["run triage"]
    (decision,) = named["decision fake-decider"]
    assert run.status.status_code is StatusCode.ERROR
    assert decision.status.status_code is StatusCode.ERROR
    assert decision.attributes is not None
    assert decision.attributes["error.type"] == "UpstreamThrottleError"
    assert decision.attributes["http.response.status_code"] == 503
    retries = decision.attributes["harness.retries"]
    assert isinstance(retries, int)
    assert retries >= 1
    assert len(decision.events) == retries  # one retry event per re-run
    assert f"retry budget ({retries})" in str(failed.value)
    # without opting in, the status says the error's type, not its message
    assert decision.status.description == "UpstreamThrottleError"


def points(telemetry: Telemetry, name: str) -> list[NumberDataPoint | HistogramDataPoint]:
    data = telemetry.metrics.get_metrics_data()
    assert data is not None
    found: list[NumberDataPoint | HistogramDataPoint] = []
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(metric.data.data_points)  # type: ignore[arg-type]
    return found


async def test_the_metrics_of_a_known_run(telemetry: Telemetry) -> None:
    model = FakeDecisionModel(review_policy)
    client = FailsFirst(model)
    await run_review(client)
    duration = points(telemetry, "gen_ai.client.operation.duration")
    by_outcome = {
        str(p.attributes.get("error.type", "ok")): p.count
        for p in duration
        if isinstance(p, HistogramDataPoint) and p.attributes is not None
    }
    assert by_outcome == {"ok": 6, "failed": 1}  # every round trip, the 503 included
    retries = points(telemetry, "harness.decision.retries")
    assert [(p.attributes, p.value) for p in retries if isinstance(p, NumberDataPoint)] == [
        (
            {
                "harness.retry.kind": "OverloadedError",
                "http.response.status_code": 503,
                "harness.entry": "fake",
            },
            1,
        )
    ]
    assert points(telemetry, "harness.decision.throttles") == []
    tokens = {
        p.attributes["harness.tokens.kind"]: p.value  # type: ignore[index]
        for p in points(telemetry, "harness.decision.input_tokens")
        if isinstance(p, NumberDataPoint)
    }
    cost = [
        p.value
        for p in points(telemetry, "harness.decision.cost")
        if isinstance(p, NumberDataPoint)
    ]
    spans = by_name(telemetry.spans.get_finished_spans())["decision fake-decider"]
    counted = sum(number(s, "harness.usage.counted_input_tokens") for s in spans)
    assert tokens["counted"] == counted
    # the cost is the billed tokens at the entry's price (a failed round trip costs nothing)
    billed = sum(number(s, "gen_ai.usage.input_tokens") for s in spans)
    assert tokens["billed"] == billed
    assert cost == [pytest.approx(billed * 2.0 / 1_000_000)]
    assert cost == [pytest.approx(sum(number(s, "harness.cost") for s in spans))]
    in_flight = points(telemetry, "harness.decision.in_flight")
    assert [p.value for p in in_flight if isinstance(p, NumberDataPoint)] == [0]


async def test_content_appears_only_for_a_run_that_opts_in(telemetry: Telemetry) -> None:
    model = FakeDecisionModel(triage_policy)
    catalog = priced_catalog()
    async with Dispatcher(catalog, clients={"fake": model}, pacing=Pacing.immediate()) as d:
        await d.run(ThinkerRun(Workflow(), Triage(Workflow()), Note("alpha SECRET-ONE; beta")))
        with harness.observe.capture_content():
            await d.run(ThinkerRun(Workflow(), Triage(Workflow()), Note("alpha SECRET-TWO; b")))
    spans = telemetry.spans.get_finished_spans()
    shown = [str(dict(s.attributes or {})) for s in spans]
    assert not any("SECRET-ONE" in text for text in shown)
    assert any("SECRET-TWO" in text for text in shown)


def test_an_instrumentation_attaches_to_one_dispatcher_only(telemetry: Telemetry) -> None:
    harness.observe.disable()
    plain = Dispatcher(priced_catalog(), clients={"fake": FakeDecisionModel()})
    traced = Dispatcher(priced_catalog(), clients={"fake": FakeDecisionModel()})
    harness.observe.instrument(traced, tracer_provider=telemetry.tracer_provider)
    assert len(traced._events.subscriptions) == 1
    assert plain._events.subscriptions == []


__all__ = ["JudgeNote", "SplitNote"]


async def test_a_call_that_waits_for_admission_has_a_wait_span(telemetry: Telemetry) -> None:
    release = asyncio.Event()

    async def slow(request: DecisionRequest) -> Mapping[str, Answer]:
        await release.wait()
        return {"q": NoulAnswer(0.5)}

    catalog = Catalog(
        [
            CatalogEntry(
                id="fake",
                provider="fake",
                wire_model_id="fake-decider",
                max_context_tokens=100_000,
                max_concurrent=1,
            )
        ],
        {"decision": "fake"},
    )
    request = DecisionRequest({"text": "x"}, {"q": Noul("is it?")})
    async with Dispatcher(catalog, clients={"fake": FakeDecisionModel(slow)}) as d:
        first = d.submit(DecisionCall(Workflow(), request))
        second = d.submit(DecisionCall(Workflow(), request))
        await asyncio.sleep(0.05)
        release.set()
        await first.result()
        await second.result()
    spans = telemetry.spans.get_finished_spans()
    (wait,) = by_name(spans)["admission wait"]
    parent = parent_of(wait, spans)
    assert parent is not None
    assert parent.name == "decision fake-decider"
    assert wait.attributes is not None
    assert "gate" in str(wait.attributes["harness.admission.waited_for"])
    waits = [
        p for p in points(telemetry, "harness.admission.wait") if isinstance(p, HistogramDataPoint)
    ]
    assert sum(p.count for p in waits) == 1
    assert waits[0].sum > 0

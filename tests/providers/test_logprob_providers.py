"""The logprob providers on the loopback test server: label variants, the mass floor, more
options than top_logprobs, servers without logprobs, redaction, the record and the span."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import harness.observe
from examples.triage import Note, Triage
from harness import run
from harness.catalog import Catalog, CatalogEntry, CatalogError, entry_for_model
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    RefusedAnswer,
    Score,
)
from harness.errors import ExternalServiceError, UnauthorizedError
from harness.providers import (
    ChatLogprobsClient,
    CompletionLogprobsClient,
    LogprobsUnavailableError,
    client_for,
)
from harness.testing import BigramModel, LogprobServer

STATE = {"ticket": "The invoice from March charges twice; please refund the second charge."}


@pytest.fixture
async def server() -> AsyncIterator[LogprobServer]:
    async with LogprobServer() as running:
        yield running


def entry(server: LogprobServer, provider: str, **fields: object) -> CatalogEntry:
    return CatalogEntry(
        id=f"{provider}-test",
        provider=provider,
        wire_model_id="bigram-test",
        base_url=server.root,
        max_context_tokens=32_768,
        max_concurrent=4,
        **fields,  # type: ignore[arg-type]  # the entry's own keyword fields
    )


def team(count: int) -> DecisionRequest:
    options = ["billing", "tech", "sales", "legal", "support", "ops", "hr", "security"]
    options += [f"team {i}" for i in range(count - len(options))]
    return DecisionRequest(STATE, {"team": Choice("Which team?", options[:count])})


async def test_label_variants_add_up_instead_of_overwriting_each_other() -> None:
    # " A" is the single most likely token, but " B", "B" and " b" together outweigh it.
    text = "<|assistant|> A\n" * 4 + "<|assistant|> B\n<|assistant|>B\n<|assistant|> b\n" * 2
    model = BigramModel(text)
    async with LogprobServer(model) as server:
        client = ChatLogprobsClient()
        try:
            request = DecisionRequest(STATE, {"team": Choice("Which team?", ["billing", "tech"])})
            response = await client.decide(request, entry(server, "openai-chat"))
        finally:
            await client.aclose()
    context = model.encode("x\n<|assistant|>")
    (first, _), *_ = model.top(context, 1)
    assert model.token_bytes(first) == b" A"
    answer = response.choice("team")
    assert answer.choice == "tech"
    assert answer.probabilities["tech"] == pytest.approx(0.6, abs=0.02)  # 6 of 10, smoothed
    assert response.reading is not None
    mass = response.reading["mass"]
    assert isinstance(mass, dict)
    assert mass["team"] > 0.85  # the variants all count as mass on the labels


async def test_mass_below_the_floor_is_a_refusal_naming_the_mass(server: LogprobServer) -> None:
    client = ChatLogprobsClient()
    try:
        response = await client.decide(team(3), entry(server, "openai-chat"))  # floor 0.5
        lowered = await client.decide(team(3), entry(server, "openai-chat", mass_floor=0.1))
    finally:
        await client.aclose()
    refused = response.answers["team"]
    assert isinstance(refused, RefusedAnswer)
    assert response.reading is not None
    mass = response.reading["mass"]
    assert isinstance(mass, dict)
    assert mass["team"] < 0.5
    assert refused.reason is not None
    assert f"{mass['team']:.1%}" in refused.reason
    assert "mass_floor 50%" in refused.reason
    assert isinstance(lowered.answers["team"], ChoiceAnswer)


@pytest.mark.parametrize(("count", "top"), [(8, 5), (30, 20), (12, 6)])
async def test_more_options_than_top_logprobs_never_read_a_silent_zero(
    server: LogprobServer, count: int, top: int
) -> None:
    client = ChatLogprobsClient()
    try:
        response = await client.decide(
            team(count), entry(server, "openai-chat", top_logprobs=top, mass_floor=0.01)
        )
    finally:
        await client.aclose()
    answer = response.choice("team")
    assert len(answer.probabilities) == count
    assert all(p > 0 for p in answer.probabilities.values())
    assert math.fsum(answer.probabilities.values()) == pytest.approx(1.0)
    assert response.reading is not None
    assert response.reading["hierarchy"] == ["team"]
    calls = response.reading["upstream_calls"]
    assert isinstance(calls, int)
    assert calls >= 1 + math.ceil(count / top) - 1


async def test_labels_below_the_shown_top_logprobs_are_read_in_another_round(
    server: LogprobServer,
) -> None:
    # After "<|assistant|>" the five most likely tokens hold only labels A and B of A-D.
    client = ChatLogprobsClient()
    try:
        response = await client.decide(
            team(4), entry(server, "openai-chat", top_logprobs=5, mass_floor=0.05)
        )
    finally:
        await client.aclose()
    answer = response.choice("team")
    assert all(p > 0 for p in answer.probabilities.values())
    assert response.reading is not None
    assert response.reading["bounded"] == ["team"]
    assert response.reading["upstream_calls"] == 2
    bounded = answer.probabilities["sales"] + answer.probabilities["legal"]
    assert bounded < answer.probabilities["billing"]  # at most half the bound, below the shown


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
async def test_a_server_without_logprobs_is_refused_with_the_fix(provider: str) -> None:
    async with LogprobServer(logprobs=False) as server:
        the_entry = entry(server, provider)
        client = client_for(the_entry)
        try:
            with pytest.raises(LogprobsUnavailableError, match="return logprobs"):
                await client.served_model(the_entry)  # type: ignore[attr-defined]  # ours has it
            with pytest.raises(LogprobsUnavailableError, match=r"docs/providers\.md"):
                await client.decide(team(2), the_entry)
        finally:
            await client.aclose()


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
async def test_errors_never_show_the_key_or_the_request_text(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-test-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("LOGPROB_TEST_KEY", key)
    async with LogprobServer(api_key="another-key-entirely") as server:
        client = client_for(entry(server, provider, api_key_env="LOGPROB_TEST_KEY"))
        try:
            with pytest.raises(UnauthorizedError) as refused:
                await client.decide(
                    team(2), entry(server, provider, api_key_env="LOGPROB_TEST_KEY")
                )
        finally:
            await client.aclose()
    assert key not in str(refused.value)
    assert key[:12] not in str(refused.value)
    async with LogprobServer(fail_with=400) as server:
        client = client_for(entry(server, provider))
        try:
            with pytest.raises(ExternalServiceError) as failed:
                await client.decide(team(2), entry(server, provider))
        finally:
            await client.aclose()
    message = str(failed.value)
    assert "HTTP 400" in message
    assert "charges twice" not in message
    assert "second charge" not in message


async def test_completions_send_every_question_in_one_call_and_tell_prefixes_apart(
    server: LogprobServer,
) -> None:
    request = DecisionRequest(
        STATE,
        {
            "team": Choice("Which team?", ["billing", "billing dispute", "tech"]),
            "refund": Noul("Does the customer ask for a refund?"),
            "anger": Score("How angry?", ["calm", "annoyed", "furious"]),
        },
    )
    client = CompletionLogprobsClient()
    try:
        response = await client.decide(request, entry(server, "openai-completions", orderings=3))
    finally:
        await client.aclose()
    assert server.calls == 1
    assert server.prompts == 3 * 3 + 2 * 2 + 3 * 3  # options x orderings, in one list
    probabilities = response.choice("team").probabilities
    assert probabilities["billing"] != pytest.approx(probabilities["billing dispute"], abs=1e-3)
    assert 0 < response.noul("refund").probability < 1
    assert response.reading is not None
    assert response.reading["orderings"] == 3
    assert response.input_tokens is not None
    assert response.input_tokens > 0


def test_model_strings_name_the_provider_the_model_and_the_server() -> None:
    made = entry_for_model("openai-chat:llama3@http://127.0.0.1:8080/v1/", {})
    assert made is not None
    assert (made.provider, made.wire_model_id) == ("openai-chat", "llama3")
    assert made.url == "http://127.0.0.1:8080/v1/chat/completions"
    plain = entry_for_model("openai-completions:gpt-3.5-turbo-instruct", {"OPENAI_API_KEY": "k"})
    assert plain is not None
    assert plain.url == "https://api.openai.com/v1/completions"
    assert plain.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(CatalogError, match="base URL"):
        entry_for_model("openai-chat:llama3@localhost:8080", {})
    with pytest.raises(CatalogError, match="top_logprobs"):
        CatalogEntry(
            id="x",
            provider="openai-chat",
            wire_model_id="m",
            base_url="http://127.0.0.1:1",
            max_context_tokens=10,
            max_concurrent=1,
            top_logprobs=40,
        )


@pytest.mark.parametrize("provider", ["openai-chat", "openai-completions"])
async def test_the_triage_example_runs_and_the_record_and_span_say_how_it_was_read(
    server: LogprobServer, provider: str
) -> None:
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    harness.observe.enable(tracer_provider=tracer)
    floor = 0.01 if provider == "openai-chat" else 0.0  # the test model spreads its mass
    the_entry = entry(server, provider, mass_floor=floor)
    try:
        result = await run(
            Triage,
            Note("alpha is due today; beta can wait; gamma shipped"),
            catalog=Catalog([the_entry], {"decision": the_entry.id}),
        )
    finally:
        harness.observe.disable()
        tracer.shutdown()
    assert result.failure is None
    assert result.calls
    method = "chat-labels" if provider == "openai-chat" else "completion-echo"
    for call in result.calls:
        assert call.reading is not None
        assert call.reading["method"] == method
    decisions = [s for s in exporter.get_finished_spans() if s.name.startswith("decision")]
    assert decisions
    for span in decisions:
        assert span.attributes is not None
        assert span.attributes["harness.reading.method"] == method
        calls = span.attributes["harness.reading.upstream_calls"]
        assert isinstance(calls, int)
        assert calls >= 1


async def test_position_bias_correction_averages_the_cyclic_orderings(
    server: LogprobServer,
) -> None:
    options = ["billing", "tech", "sales"]
    rotated = options[1:] + options[:1]  # the second of two cyclic orderings of three options
    client = ChatLogprobsClient()
    try:
        plain = entry(server, "openai-chat", mass_floor=0.05)
        corrected = await client.decide(
            team(3), entry(server, "openai-chat", mass_floor=0.05, orderings=2)
        )
        first = await client.decide(team(3), plain)
        second = await client.decide(
            DecisionRequest(STATE, {"team": Choice("Which team?", rotated)}), plain
        )
    finally:
        await client.aclose()
    got = corrected.choice("team").probabilities
    one, two = first.choice("team").probabilities, second.choice("team").probabilities
    for option in options:
        assert got[option] == pytest.approx((one[option] + two[option]) / 2, abs=1e-12)
    assert one["billing"] != pytest.approx(two["billing"], abs=1e-3)  # the order mattered
    assert corrected.reading is not None
    assert corrected.reading["upstream_calls"] == 2
    assert corrected.reading["orderings"] == 2


async def test_a_server_taking_one_prompt_a_call_is_asked_one_prompt_a_call() -> None:
    request = DecisionRequest(
        STATE, {"team": Choice("Which team?", ["billing", "tech"]), "refund": Noul("Refund?")}
    )
    async with LogprobServer() as batched, LogprobServer(max_prompts=1) as single:
        client = CompletionLogprobsClient()
        try:
            expected = await client.decide(request, entry(batched, "openai-completions"))
            first = await client.decide(request, entry(single, "openai-completions"))
            again = await client.decide(request, entry(single, "openai-completions"))
        finally:
            await client.aclose()
    for response in (first, again):
        assert response.choice("team").probabilities == pytest.approx(
            dict(expected.choice("team").probabilities), abs=1e-12
        )
        assert response.noul("refund").probability == pytest.approx(
            expected.noul("refund").probability, abs=1e-12
        )
    assert first.reading is not None
    assert again.reading is not None
    assert first.reading["upstream_calls"] == 1 + 4  # the refused list, then one prompt a call
    assert again.reading["upstream_calls"] == 4  # remembered for the entry

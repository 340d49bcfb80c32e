"""The logprob providers' option distributions equal brute-force enumeration under the test
server's known token model (computed here, independently of the providers' parsing)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.catalog import CatalogEntry
from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.providers import ChatLogprobsClient, CompletionLogprobsClient
from harness.providers._chat_logprobs import label_of
from harness.providers._completion_logprobs import question_prompt
from harness.providers._logprob_reading import asked_questions, cyclic_orders
from harness.testing import BigramModel, LogprobServer
from harness.testing._bigram import bigram_chat_text

MODEL = BigramModel()


@pytest.fixture(scope="module")
def server() -> Iterator[LogprobServer]:
    with LogprobServer(MODEL).in_thread() as running:
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


def brute_force_completion(request: DecisionRequest, orderings: int) -> dict[str, list[float]]:
    """P(prompt + " " + option + "\\n") for every option, normalised, averaged over orderings:
    each whole text scored token by token under the model (no offsets, no shared prefix)."""
    found: dict[str, list[float]] = {}
    state = request.state if isinstance(request.state, str) else None
    assert state is not None
    for asked in asked_questions(request):
        reads = []
        for order in cyclic_orders(len(asked.names), orderings):
            prompt = question_prompt(state, asked, order)
            scores = [MODEL.sequence_logprob(f"{prompt} {name}\n") for name in asked.names]
            top = max(scores)
            weights = [math.exp(s - top) for s in scores]
            reads.append([w / sum(weights) for w in weights])
        found[asked.question_id] = [
            sum(r[i] for r in reads) / len(reads) for i in range(len(asked.names))
        ]
    return found


def as_list(response_answer: object) -> list[float]:
    from harness.decision import ChoiceAnswer, NoulAnswer, ScoreAnswer

    if isinstance(response_answer, ChoiceAnswer):
        return list(response_answer.probabilities.values())
    if isinstance(response_answer, NoulAnswer):
        return [response_answer.probability, 1 - response_answer.probability]
    assert isinstance(response_answer, ScoreAnswer)
    return list(response_answer.probabilities)


WORDS = st.sampled_from(["billing", "bill", "tech", "sales", "b", "billing dispute", "yes", "x"])


@st.composite
def option_sets(draw: st.DrawFn) -> list[str]:
    """2-5 distinct options, often prefixes of one another ("bill", "billing", ...)."""
    base = draw(st.lists(WORDS, min_size=1, max_size=4, unique=True))
    extended = [f"{base[0]} {draw(st.sampled_from(['dispute', 'x', 'team']))}"]
    options = list(dict.fromkeys(base + extended))
    return options if len(options) >= 2 else [*options, "other"]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(options=option_sets(), orderings=st.sampled_from([1, 2, 3]))
def test_completion_distributions_equal_brute_force_enumeration(
    server: LogprobServer, options: list[str], orderings: int
) -> None:
    request = DecisionRequest(
        "A ticket: the invoice is wrong.",
        {
            "team": Choice("Which team handles the ticket?", options),
            "refund": Noul("Refund?", when_true="money back"),
            "anger": Score("How angry?", ["calm", "annoyed", "furious"]),
        },
    )
    client = CompletionLogprobsClient()
    calls_before = server.calls

    async def ask() -> object:
        try:
            return await client.decide(
                request, entry(server, "openai-completions", orderings=orderings)
            )
        finally:
            await client.aclose()

    response = asyncio.run(ask())
    from harness.decision import DecisionResponse

    assert isinstance(response, DecisionResponse)
    expected = brute_force_completion(request, orderings)
    for question_id, probabilities in expected.items():
        got = as_list(response.answers[question_id])
        assert got == pytest.approx(probabilities, abs=1e-9), question_id
    assert server.calls - calls_before == 1  # every prompt of the request in one call
    assert response.reading is not None
    assert response.reading["upstream_calls"] == 1
    assert response.reading["method"] == "completion-echo"


def brute_force_labels(content: str, labels: list[str], top: int | None) -> list[float]:
    """P(label) summed over every token that spells it (among the model's ``top`` most likely
    tokens, or the whole vocabulary when ``top`` is None), normalised over the labels."""
    context = MODEL.encode(bigram_chat_text([{"role": "user", "content": content}]))
    wanted = {label.casefold(): i for i, label in enumerate(labels)}
    mass = [0.0] * len(labels)
    tokens = (
        [t for t, _ in MODEL.top(context, top)] if top is not None else range(MODEL.vocabulary_size)
    )
    for token in tokens:
        try:
            text = MODEL.token_bytes(token).decode("utf-8", errors="replace")
        except KeyError:
            continue  # an id the encoding leaves unused
        index = wanted.get(label_of(text))
        if index is not None:
            mass[index] += MODEL.probability(context, token)
    return [m / sum(mass) for m in mass]


def test_chat_label_distributions_equal_enumeration_over_the_whole_vocabulary(
    server: LogprobServer,
) -> None:
    request = DecisionRequest(
        "A ticket: the invoice is wrong.",
        {
            "team": Choice("Which team?", {"billing": "Invoices", "tech": None, "sales": None}),
            "refund": Noul("Refund?"),
        },
    )
    the_entry = entry(server, "openai-chat", mass_floor=0.05)
    client = ChatLogprobsClient()

    async def ask() -> object:
        try:
            return await client.decide(request, the_entry)
        finally:
            await client.aclose()

    response = asyncio.run(ask())
    from harness.decision import DecisionResponse

    assert isinstance(response, DecisionResponse)
    for asked in asked_questions(request):
        words = asked.kind == "noul"
        labels = list(asked.names) if words else ["A", "B", "C"][: len(asked.names)]
        items = [(i,) for i in range(len(asked.names))]
        body = client.body(the_entry, "A ticket: the invoice is wrong.", asked, items, labels)
        messages = body["messages"]
        assert isinstance(messages, list)
        content = str(messages[0]["content"])
        got = as_list(response.answers[asked.question_id])
        # Exactly the label mass among the 20 tokens the server shows, variants summed ...
        assert got == pytest.approx(brute_force_labels(content, labels, 20), abs=1e-12)
        # ... and within what the unshown variants can hold of the whole vocabulary's.
        context = MODEL.encode(bigram_chat_text([{"role": "user", "content": content}]))
        least = math.exp(MODEL.top(context, 20)[-1][1])
        whole = brute_force_labels(content, labels, None)
        assert got == pytest.approx(whole, abs=20 * least)
        assert got != pytest.approx(whole, abs=1e-9)  # the shown 20 are not the whole story

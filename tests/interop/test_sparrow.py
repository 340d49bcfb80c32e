"""Interop with ``sparrow-decider serve``: a tiny real model behind HTTP.

Its choices are sensible; it refuses a one-option choice and anything else it cannot answer with
a 422 ``{"error": "..."}``. It reports zero usage and has no model listing.
"""

from __future__ import annotations

import pytest

from harness.catalog import Catalog, CatalogEntry
from harness.decision import Choice, ChoiceAnswer, DecisionRequest, DecisionResponse, Noul, Score
from harness.errors import ExternalServiceError, InvalidInputError
from harness.jobs import Dispatcher, Pacing
from harness.providers import SystemOneClient
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .peers import Peer, peer_entry

pytestmark = pytest.mark.interop

TEAMS = {
    "billing": "invoices, charges and refunds",
    "engineering": "software bugs, crashes and outages",
    "sales": "new customers buying the product",
}

TICKETS = {
    "The customer says the invoice total is wrong and they were charged twice.": "billing",
    "The app crashes every time I open the settings page.": "engineering",
    "We would like a quote for 200 seats for our new office.": "sales",
}


def sparrow_entry(peer: Peer, **overrides: object) -> CatalogEntry:
    """An entry at the sparrow server; its wire model id is whatever it serves."""
    return peer_entry(peer.root, id="sparrow", wire_model_id="sparrow-decider", **overrides)


async def run(entry: CatalogEntry, request: DecisionRequest) -> DecisionCall:
    """Run one decision call through the dispatcher; the call, for its record."""
    async with Dispatcher(Catalog([entry], {"decision": entry.id}), pacing=Pacing.immediate()) as d:
        call = DecisionCall(Workflow(), request, upstream_retries=2)
        await d.run(call)
    return call


@pytest.mark.parametrize(("ticket", "team"), list(TICKETS.items()))
async def test_a_real_model_routes_tickets_sensibly(
    sparrow_server: Peer, ticket: str, team: str
) -> None:
    request = DecisionRequest(ticket, {"team": Choice("Which team should handle this?", TEAMS)})
    call = await run(sparrow_entry(sparrow_server), request)
    (recorded,) = call.record.calls
    assert recorded.success
    answer = recorded.answers["team"]
    assert isinstance(answer, ChoiceAnswer)
    assert answer.choice == team
    assert answer.probabilities[team] > 0.5
    assert recorded.model == "sparrow-nano-general-v1.1"
    assert recorded.input_tokens == 0  # sparrow reports zero usage: tolerated
    assert recorded.counted_input_tokens is not None
    assert recorded.counted_input_tokens > 0


async def test_every_shape_is_answered_and_a_one_option_choice_is_never_sent(
    sparrow_server: Peer,
) -> None:
    request = DecisionRequest(
        "Add two cups of flour and bake for twenty minutes.",
        {
            "topic": Choice("What is the text about?", {"weather": None, "cooking": "food"}),
            "only": Choice("Pick the only one", {"recipe": None}),
            "edible": Noul("Is the result edible?"),
            "effort": Score("How much effort?", ("none", "some", "a lot")),
        },
    )
    # sparrow answers 422 to a request holding a one-option choice: success proves it was
    # answered here and only the rest went on the wire.
    client = SystemOneClient()
    try:
        response = await client.decide(request, sparrow_entry(sparrow_server))
    finally:
        await client.aclose()
    assert isinstance(response, DecisionResponse)
    assert response.choice("topic").choice == "cooking"
    only = response.choice("only")
    assert (only.choice, dict(only.probabilities), only.confidence) == (
        "recipe",
        {"recipe": 1.0},
        1.0,
    )
    assert 0.0 <= response.noul("edible").probability <= 1.0
    assert 0.0 <= response.score("effort").score <= 2.0
    assert list(response.answers) == ["topic", "only", "edible", "effort"]


async def test_a_request_of_only_one_option_choices_makes_no_round_trip() -> None:
    # Nothing listens at this entry's address: a round trip would fail.
    entry = CatalogEntry(
        id="nowhere",
        provider="systemone",
        wire_model_id="sparrow-decider",
        base_url="http://127.0.0.1:9",
        max_context_tokens=4096,
        max_concurrent=1,
    )
    request = DecisionRequest("x", {"only": Choice("Pick", {"it": None})})
    call = await run(entry, request)
    (recorded,) = call.record.calls
    assert recorded.success
    assert recorded.answers["only"] == ChoiceAnswer("it", {"it": 1.0}, confidence=1.0)


async def test_a_422_error_string_body_is_read_for_the_message(sparrow_server: Peer) -> None:
    eleven = tuple(f"level {i}" for i in range(11))
    request = DecisionRequest("state", {"how": Score("How much?", eleven)})
    entry = sparrow_entry(sparrow_server)
    async with Dispatcher(Catalog([entry], {"decision": entry.id})) as dispatcher:
        call = DecisionCall(Workflow(), request, upstream_retries=3)
        with pytest.raises(ExternalServiceError) as caught:
            await dispatcher.run(call)
    assert type(caught.value) is ExternalServiceError
    assert caught.value.status == 422
    assert "a score question needs criteria: a list of 2-10 levels" in caught.value.message
    assert len(call.record) == 1  # a refusal is not re-run


async def test_the_entrys_max_levels_refuses_before_sending(sparrow_server: Peer) -> None:
    eleven = tuple(f"level {i}" for i in range(11))
    request = DecisionRequest("state", {"how": Score("How much?", eleven)})
    entry = sparrow_entry(sparrow_server, max_levels=10)
    async with Dispatcher(Catalog([entry], {"decision": entry.id})) as dispatcher:
        call = DecisionCall(Workflow(), request, upstream_retries=3)
        with pytest.raises(InvalidInputError) as caught:
            await dispatcher.run(call)
    assert "at most 10 levels" in str(caught.value)
    assert not call.record.calls[0].success

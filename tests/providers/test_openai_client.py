"""OpenAIDecisionsClient against the fake server's /v1/decisions: answers, refusals, statuses."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pytest

from harness.catalog import CatalogEntry
from harness.decision import Answer, Choice, DecisionRequest, Noul, RefusedAnswer
from harness.errors import (
    ExternalServiceError,
    NotAnAnswerError,
    RetryableError,
    TransientError,
    UnauthorizedError,
)
from harness.providers._fake import default_answers
from harness.providers._openai import OpenAIDecisionsClient
from harness.testing._fake_server import FakeSystemOneServer
from harness.testing._faults import Fault

from .wire_cases import CANARY_KEY, CASES, StatusCase, assert_classified, sample_request


def decisions_entry(server: FakeSystemOneServer, **overrides: object) -> CatalogEntry:
    return server.entry(id="fake-openai", provider="openai", **overrides)


async def test_an_answer_goes_through_v1_decisions(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    entry = decisions_entry(server, wire_model_id="decider-1")
    assert entry.url.endswith("/v1/decisions")
    response = await decisions.decide(sample_request(), entry)
    assert server.paths == ["/v1/decisions"]
    sent = json.loads(server.bodies[0])
    assert sent["model"] == "decider-1"
    assert [q["name"] for q in sent["questions"]] == ["team", "urgent", "anger"]
    assert [q["type"] for q in sent["questions"]] == ["choice", "predicate", "score"]
    assert response.choice("team").choice == "billing"
    assert response.noul("urgent").probability == pytest.approx(0.5)
    assert response.score("anger").probabilities[1] == pytest.approx(0.9)
    assert response.input_tokens == math.ceil(len(server.bodies[0]) / 4)
    assert response.request_id == "fake-1"
    assert response.model == "decider-1"


async def test_a_refusal_is_kept_for_its_question_alone(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    def refuse_urgency(request: DecisionRequest) -> Mapping[str, Answer]:
        answers: dict[str, Answer] = dict(default_answers(request))
        answers["urgent"] = RefusedAnswer()
        return answers

    server.policy = refuse_urgency
    response = await decisions.decide(sample_request(), decisions_entry(server))
    assert response.success
    assert isinstance(response.answers["urgent"], RefusedAnswer)
    assert response.choice("team").choice == "billing"
    with pytest.raises(LookupError, match="refused question 'urgent'"):
        response.noul("urgent")


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_status_class(
    case: StatusCase, server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    server.fail_next(case.fault)
    entry = decisions_entry(server)
    with pytest.raises(case.error) as caught:
        await decisions.decide(sample_request(), entry)
    assert_classified(caught.value, case, entry.url)
    assert "OpenAI Decisions server" in str(caught.value)
    assert (await decisions.decide(sample_request(), entry)).success


async def test_a_server_refusing_the_body_is_a_4xx_naming_its_problems(
    decisions: OpenAIDecisionsClient,
) -> None:
    # a server that speaks System One on the path an OpenAI entry names refuses the body
    async with FakeSystemOneServer(
        systemone_path="/v1/decisions", decisions_path="/other"
    ) as server:
        with pytest.raises(ExternalServiceError) as caught:
            await decisions.decide(sample_request(), decisions_entry(server))
    # the System One server refuses the OpenAI body as a 422 naming what is wrong
    assert caught.value.status == 422
    assert "HTTP 422" in caught.value.message


async def test_an_answer_missing_a_question_is_not_an_answer(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    server.fail_next(
        Fault.not_an_answer(
            {"model": "m", "answers": [{"name": "team", "type": "choice"}], "usage": {}}
        )
    )
    with pytest.raises(NotAnAnswerError, match="not an answer"):
        await decisions.decide(sample_request(), decisions_entry(server))


async def test_a_stopped_server_and_an_unknown_host(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    entry = decisions_entry(server)
    await server.stop()
    with pytest.raises(TransientError, match="could not be reached"):
        await decisions.decide(sample_request(), entry)
    nowhere = CatalogEntry(
        id="nowhere",
        provider="openai",
        wire_model_id="decider-1",
        base_url="http://decisions.no-such-host.invalid",
        max_context_tokens=4096,
        max_concurrent=1,
    )
    with pytest.raises(ExternalServiceError) as caught:
        await decisions.decide(sample_request(), nowhere)
    assert not isinstance(caught.value, RetryableError)
    assert "decisions.no-such-host.invalid" in caught.value.message


async def test_bearer_only_with_a_key_and_never_in_messages(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = decisions_entry(server, api_key_env="TEST_DECISIONS_KEY")
    monkeypatch.delenv("TEST_DECISIONS_KEY", raising=False)
    await decisions.decide(sample_request(), entry)
    assert "Authorization" not in server.headers[-1]
    monkeypatch.setenv("TEST_DECISIONS_KEY", CANARY_KEY)
    await decisions.decide(sample_request(), entry)
    assert server.headers[-1]["Authorization"] == f"Bearer {CANARY_KEY}"
    server.fail_next(Fault.unauthorized(f"key {CANARY_KEY} revoked"))
    with pytest.raises(UnauthorizedError) as caught:
        await decisions.decide(sample_request(), entry)
    assert CANARY_KEY not in str(caught.value)
    assert "revoked" in str(caught.value)


async def test_one_option_choices_are_answered_locally(
    server: FakeSystemOneServer, decisions: OpenAIDecisionsClient
) -> None:
    request = DecisionRequest("s", {"only": Choice("Which?", ["go"]), "ok": Noul("Ok?")})
    response = await decisions.decide(request, decisions_entry(server))
    assert response.choice("only").probabilities == {"go": 1.0}
    sent = json.loads(server.bodies[0])
    assert [q["name"] for q in sent["questions"]] == ["ok"]

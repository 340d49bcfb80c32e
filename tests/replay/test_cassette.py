"""The cassette file: no key ever (the state stays), stable bytes and key order, one interaction
per block, a format version with a clear error; run records kept with bodies replay too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import harness
from harness.catalog import CatalogEntry
from harness.decision import Choice, DecisionRequest, Noul
from harness.jobs import Dispatcher
from harness.providers import FakeDecisionModel, SystemOneClient
from harness.record import load_record, record_run
from harness.replay import (
    Cassette,
    CassetteError,
    cassette_from_json,
    cassette_from_record,
    load_cassette,
)
from harness.testing import FakeSystemOneServer, ReplayClient
from harness.thinker import DecisionCall
from harness.tools import Workflow
from tests.thinker.notes import Note, Triage, fake_catalog, triage_policy

SECRET = "sk-test-cassette-0123456789"

REQUEST = DecisionRequest(
    {"objective": "triage", "artifacts": ["note#1 (note): the customer's own words"]},
    {"next": Choice("Which tool?", {"split": "splits", "judge": None}), "keep": Noul("Keep?")},
)


async def record_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *requests: DecisionRequest
) -> Path:
    """Record ``requests`` through a real System One client, with a key, to a loopback server."""
    monkeypatch.setenv("CASSETTE_TEST_KEY", SECRET)
    server = FakeSystemOneServer(api_key=SECRET)
    await server.start()
    try:
        entry = CatalogEntry(
            id="keyed",
            provider="systemone",
            wire_model_id="fake-decider",
            base_url=server.root,
            api_key_env="CASSETTE_TEST_KEY",
            max_context_tokens=100_000,
            max_concurrent=2,
        )
        client = SystemOneClient()
        recorder = ReplayClient(Cassette(), fallback=client, record=True)
        try:
            for request in requests:
                await recorder.decide(request, entry)
        finally:
            await client.aclose()
        assert all(f"Bearer {SECRET}" == h.get("Authorization") for h in server.headers)
    finally:
        await server.stop()
    path = tmp_path / "keyed.json"
    recorder.cassette().write(path)
    return path


async def test_no_key_ever_and_the_state_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = await record_over_http(tmp_path, monkeypatch, REQUEST)
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    assert "Bearer" not in text
    assert "CASSETTE_TEST_KEY" not in text
    assert "the customer's own words" in text  # the state is the user's data: it stays


async def test_the_file_is_stable_keyed_in_a_fixed_order_one_block_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = DecisionRequest("second", {"keep": Noul("Keep?")})
    path = await record_over_http(tmp_path, monkeypatch, REQUEST, other)
    text = path.read_text(encoding="utf-8")
    assert load_cassette(path).dumps() == text  # read and written again: the same bytes
    data = json.loads(text)
    assert list(data) == ["format", "version", "interactions"]
    assert [list(i) for i in data["interactions"]] == [["request", "reply"]] * 2
    assert list(data["interactions"][0]["reply"]) == [
        "model",
        "request_id",
        "input_tokens",
        "answers",
    ]
    assert list(data["interactions"][0]["request"]) == ["model", "state", "questions"]
    assert list(data["interactions"][0]["request"]["questions"]["next"]["criteria"]) == [
        "split",
        "judge",
    ]
    # Each interaction is its own indented block: a request starts on its own line.
    assert text.count('\n    {\n      "request": {') == 2
    assert text.endswith("}\n")


def test_a_version_mismatch_is_refused_saying_how_to_fix_it(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": "harness-cassette", "version": 0, "interactions": []}))
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert "version 0" in str(caught.value)
    assert "reads version 1" in str(caught.value)
    assert "--harness-record=all" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"format": "harness-record", "version": 1}, "is not a harness cassette"),
        ({"format": "harness-cassette", "version": 1, "interactions": {}}, "interactions must be"),
        (
            {"format": "harness-cassette", "version": 1, "interactions": [{"request": {}}]},
            "interactions[0].reply is missing",
        ),
        (
            {
                "format": "harness-cassette",
                "version": 1,
                "interactions": [
                    {
                        "request": {"state": "s", "questions": {"q": {}}},
                        "reply": {"answers": {}, "input_tokens": "x"},
                    }
                ],
            },
            "interactions[0].reply.input_tokens must be an integer or null",
        ),
    ],
)
def test_a_broken_cassette_names_the_place(data: object, named: str) -> None:
    with pytest.raises(CassetteError) as caught:
        cassette_from_json(data, "c.json")
    assert named in str(caught.value)


def test_a_broken_json_file_says_it_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "merged.json"
    path.write_text('{"format": "harness-cassette",\n<<<<<<< HEAD\n')
    with pytest.raises(CassetteError, match=r"is not JSON \(line 2"):
        load_cassette(path)


async def test_a_record_kept_with_bodies_replays_as_an_override(tmp_path: Path) -> None:
    fake = FakeDecisionModel(triage_policy)
    first = await record_run(
        Triage(Workflow()),
        Note("alpha is due; beta can wait"),
        catalog=fake_catalog(),
        command="test",
        keep_bodies=True,
        clients={"fake": fake},
    )
    path = tmp_path / "record.json"
    first.record.write(path)
    assert len(cassette_from_record(load_record(path)).interactions) == len(fake.requests)
    with harness.override(model=path):
        again = await record_run(
            Triage(Workflow()),
            Note("alpha is due; beta can wait"),
            catalog=fake_catalog(),
            command="test",
        )
    assert [t.to_json() for t in again.record.turns] == [t.to_json() for t in first.record.turns]
    assert [a.to_json() for a in again.record.answer] == [a.to_json() for a in first.record.answer]
    assert len(fake.requests) == len(first.record.turns)  # the fake was not asked again


async def test_a_record_without_bodies_says_how_to_keep_them(tmp_path: Path) -> None:
    run = await record_run(
        Triage(Workflow()),
        Note("alpha is due"),
        catalog=fake_catalog(),
        command="test",
        clients={"fake": FakeDecisionModel(triage_policy)},
    )
    with pytest.raises(CassetteError, match="harness run --bodies"):
        cassette_from_record(run.record)


def test_a_decision_call_replays_through_the_dispatcher(tmp_path: Path) -> None:
    recorder = ReplayClient(Cassette(), fallback=FakeDecisionModel(), record=True)

    async def ask() -> float:
        async with Dispatcher(fake_catalog()) as dispatcher:
            call = DecisionCall(Workflow(), REQUEST, upstream_retries=0)
            return (await dispatcher.run(call)).noul("keep").probability

    with harness.override(model=recorder):
        recorded = asyncio.run(ask())
    recorder.cassette().write(tmp_path / "c.json")
    with harness.override(model=tmp_path / "c.json"):
        assert asyncio.run(ask()) == recorded

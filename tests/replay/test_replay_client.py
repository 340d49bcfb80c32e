"""The replay client: matched by the digest of the canonical wire body, identical requests in
recorded order, concurrent calls in any order, strict misses with a diff, lenient fallback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from harness.catalog import CatalogEntry
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    JsonValue,
    Noul,
    RefusedAnswer,
    Score,
)
from harness.decision import systemone as systemone_codec
from harness.providers import FakeDecisionModel, choose, rate, yes
from harness.replay import Cassette, CassetteError, Interaction, RecordedReply, load_cassette
from harness.replay._cassette import body_digest
from harness.testing import ReplayClient, ReplayMissError

ENTRY = CatalogEntry(
    id="jev",
    provider="systemone",
    wire_model_id="jev-latest",
    base_url="http://127.0.0.1:9",
    api_key_env="REPLAY_TEST_KEY",
    max_context_tokens=100_000,
    max_concurrent=4,
)


def state(*artifacts: str, done: tuple[str, ...] = ("nothing yet",)) -> JsonValue:
    return {"objective": "keep what matters", "artifacts": list(artifacts), "done": list(done)}


def request(
    *artifacts: str, options: tuple[str, ...] = ("split", "judge"), done: tuple[str, ...] = ()
) -> DecisionRequest:
    return DecisionRequest(
        state(*artifacts, done=done or ("nothing yet",)),
        {
            "next": Choice("Which tool next?", {key: f"runs {key}" for key in options}),
            "select_note#1": Noul("Keep note#1?"),
        },
    )


def counting_policy() -> FakeDecisionModel:
    """A fake whose `next` answer says how many requests it has seen (to tell answers apart)."""
    fake = FakeDecisionModel()

    def policy(asked: DecisionRequest) -> dict[str, object]:
        question = asked.questions["next"]
        assert isinstance(question, Choice)
        keys = list(question.options)
        pick = keys[len(fake.requests) % len(keys)]
        return {"next": choose(question, pick), "select_note#1": yes(len(fake.requests) / 10)}

    fake.policy = policy  # type: ignore[assignment]  # answers by id, as a policy gives
    return fake


async def recorded(*asked: DecisionRequest) -> tuple[ReplayClient, list[Mapping[str, Answer]]]:
    """Record ``asked`` in order through a recording replay over a counting fake."""
    recorder = ReplayClient(Cassette(), fallback=counting_policy(), record=True)
    answers = [(await recorder.decide(r, ENTRY)).answers for r in asked]
    return recorder, answers


async def test_a_recorded_run_replays_with_the_same_answers() -> None:
    first, second = request("note#1 (note): alpha"), request("note#1 (note): beta")
    recorder, answers = await recorded(first, second)
    replay = ReplayClient(recorder.cassette())
    assert (await replay.decide(second, ENTRY)).answers == answers[1]
    assert (await replay.decide(first, ENTRY)).answers == answers[0]
    assert replay.played == 2
    assert replay.unplayed == ()


async def test_identical_requests_are_answered_in_recorded_order() -> None:
    same = request("note#1 (note): alpha")
    recorder, answers = await recorded(same, same, same)
    assert answers[0] != answers[1]  # the fake answered each differently
    replay = ReplayClient(recorder.cassette())
    again = [(await replay.decide(same, ENTRY)).answers for _ in range(3)]
    assert again == answers
    with pytest.raises(ReplayMissError, match="recorded 3 time"):
        await replay.decide(same, ENTRY)


async def test_concurrent_calls_match_whatever_their_order() -> None:
    asked = [request(f"note#1 (note): {word}") for word in ("a", "b", "c", "d", "e")]
    recorder, answers = await recorded(*asked)
    replay = ReplayClient(recorder.cassette())
    backwards = await asyncio.gather(*(replay.decide(r, ENTRY) for r in reversed(asked)))
    assert [r.answers for r in reversed(backwards)] == answers


async def test_a_replay_answers_with_the_recorded_metadata_and_no_latency() -> None:
    one = request("note#1 (note): alpha")
    recorder, _ = await recorded(one)
    response = await ReplayClient(recorder.cassette()).decide(one, ENTRY)
    assert response.model == "jev-latest"
    assert response.request_id == "fake-1"
    assert response.input_tokens is not None
    assert response.input_tokens > 0
    assert response.latency == 0.0


async def test_an_unknown_request_names_the_nearest_and_what_differs() -> None:
    recorder, _ = await recorded(
        request("note#1 (note): alpha is due"),
        request("note#1 (note): alpha is due", "list#1 (list): a list of 2 note", done=("x",)),
    )
    replay = ReplayClient(recorder.cassette(), source="cassettes/triage.json")
    changed = request("note#1 (note): alpha is LATE", options=("split", "judge", "archive"))
    with pytest.raises(ReplayMissError) as caught:
        await replay.decide(changed, ENTRY)
    miss = caught.value
    assert miss.nearest == 0
    assert "cassettes/triage.json" in miss.message
    assert "interaction 1 of 2" in miss.message
    assert "question 'next' option 'archive' is new" in miss.message
    assert "state.artifacts[0] changed" in miss.message
    assert "alpha is LATE" not in miss.message  # the message never quotes the state
    assert '"note#1 (note): alpha is due"' in miss.details
    assert '"note#1 (note): alpha is LATE"' in miss.details
    assert "--harness-record=new" in miss.message  # it says how to fix it
    assert replay.refused == (miss,)


async def test_a_miss_names_changed_instructions_types_and_levels() -> None:
    base = DecisionRequest(
        "a note",
        {
            "kind": Choice("Which kind?", {"bug": None, "idea": None}),
            "rank": Score("How bad?", ["low", "high"]),
        },
    )
    recorder = ReplayClient(Cassette(), fallback=FakeDecisionModel(), record=True)
    await recorder.decide(base, ENTRY)
    other = DecisionRequest(
        "a note\nwith a second line",
        {"kind": Choice("Which kind is it?", {"idea": None, "bug": None}), "rank": Noul("Bad?")},
    )
    with pytest.raises(ReplayMissError) as caught:
        await ReplayClient(recorder.cassette()).decide(other, ENTRY)
    summaries = [d.summary() for d in caught.value.differences]
    assert "question 'kind' has other instructions" in summaries
    assert "question 'kind' options are offered in another order" in summaries
    assert "question 'rank' changed type ('score' -> 'noul')" in summaries
    assert "state line 2 is new" in summaries


async def test_a_different_model_is_a_miss_naming_it() -> None:
    one = request("note#1 (note): alpha")
    recorder, _ = await recorded(one)
    other_entry = CatalogEntry(
        id="jev2", provider="fake", wire_model_id="jev-2", max_context_tokens=1000, max_concurrent=1
    )
    with pytest.raises(ReplayMissError, match=r"model changed \('jev-latest' -> 'jev-2'\)"):
        await ReplayClient(recorder.cassette()).decide(one, other_entry)


async def test_lenient_mode_asks_the_fallback_and_reports_the_miss() -> None:
    one, two = request("note#1 (note): alpha"), request("note#1 (note): beta")
    recorder, answers = await recorded(one)
    fallback = FakeDecisionModel()
    lenient = ReplayClient(recorder.cassette(), fallback=fallback)
    assert (await lenient.decide(one, ENTRY)).answers == answers[0]
    answered = await lenient.decide(two, ENTRY)
    assert answered.request_id == "fake-1"  # the fallback's answer
    assert fallback.requests == [two]
    (miss,) = lenient.misses
    assert "state.artifacts[0] changed" in miss.message
    assert lenient.new_interactions == ()  # lenient, not recording


async def test_recording_appends_new_interactions_in_the_order_asked(tmp_path: Path) -> None:
    one, two, three = (request(f"note#1 (note): {w}") for w in ("one", "two", "three"))
    recorder, _ = await recorded(one)
    more = ReplayClient(recorder.cassette(), fallback=FakeDecisionModel(), record=True)
    await asyncio.gather(
        more.decide(two, ENTRY), more.decide(one, ENTRY), more.decide(three, ENTRY)
    )
    path = tmp_path / "c.json"
    more.cassette().write(path)
    bodies = [i.body for i in load_cassette(path).interactions]
    expected = [systemone_codec.encode_body(r, "jev-latest") for r in (one, two, three)]
    assert bodies == expected
    assert [i.digest for i in load_cassette(path).interactions] == [
        body_digest(b) for b in expected
    ]


async def test_refusals_and_scores_survive_the_file(tmp_path: Path) -> None:
    asked = DecisionRequest(
        {"objective": "x", "artifacts": [], "done": []},
        {"rank": Score("How bad?", ["low", "mid", "high"]), "why": Noul("Explain?")},
    )
    score = asked.questions["rank"]
    assert isinstance(score, Score)

    def policy(_: DecisionRequest) -> dict[str, object]:
        return {"rank": rate(score, 2, probability=0.7), "why": RefusedAnswer("policy")}

    recorder = ReplayClient(Cassette(), fallback=FakeDecisionModel(policy), record=True)  # type: ignore[arg-type]  # answers by id
    original = await recorder.decide(asked, ENTRY)
    path = tmp_path / "c.json"
    recorder.cassette().write(path)
    again = await ReplayClient(path).decide(asked, ENTRY)
    assert again.answers == original.answers
    assert again.answers["why"] == RefusedAnswer("policy")


async def test_a_one_option_choice_replays_from_the_full_body() -> None:
    asked = DecisionRequest("s", {"only": Choice("Pick", {"a": None})})
    recorder = ReplayClient(Cassette(), fallback=FakeDecisionModel(), record=True)
    await recorder.decide(asked, ENTRY)
    response = await ReplayClient(recorder.cassette()).decide(asked, ENTRY)
    assert response.answers["only"] == ChoiceAnswer("a", {"a": 1.0}, 1.0)


def test_an_interaction_is_the_wire_body_byte_for_byte() -> None:
    asked = request("note#1 (note): ünïcode ✓", options=("z", "a", "m"))
    body = systemone_codec.encode_body(asked, "jev-latest")
    item = Interaction(json.loads(body), RecordedReply(answers={}))
    assert item.body == body
    assert json.loads(item.body)["questions"]["next"]["criteria"] == {
        "z": "runs z",
        "a": "runs a",
        "m": "runs m",
    }
    assert list(json.loads(item.body)["questions"]["next"]["criteria"]) == ["z", "a", "m"]


def test_a_missing_cassette_is_refused_saying_how_to_record_it(tmp_path: Path) -> None:
    with pytest.raises(
        CassetteError, match=r"does not exist: record it first \(pytest --harness-record=new"
    ):
        ReplayClient(tmp_path / "nope.json")

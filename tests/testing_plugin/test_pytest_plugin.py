"""A project in a temporary folder that uses only the pytest plugin: record its cassettes with
--harness-record=new against a loopback `harness serve`, replay them with the server gone, and
see a changed objective fail the replay with the divergence in pytest's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.demo import corpus_path
from tests.serve.servers import harness_serve

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.slow

PROJECT = '''
import asyncio
import json
import os
from pathlib import Path

import pytest

from harness import Catalog, CatalogEntry, DecisionCall, DecisionRequest, Dispatcher, Noul
from harness import ThinkerRun, Workflow
from harness.demo import Folder, PriceDecisionFinder
from harness.providers import FakeDecisionModel, choose, default_answers, yes
from harness.catalog import load_catalog
from harness.testing import RealModelBlockedError


async def run_demo():
    """The demo thinker on the catalog's pinned entry; its turns as JSON."""
    objective = os.environ.get("OBJECTIVE", "Find the statements that decide a price change.")
    thinker = PriceDecisionFinder(Workflow(), objective=objective, max_turns=4)
    async with Dispatcher(load_catalog()) as dispatcher:
        await dispatcher.run(ThinkerRun(Workflow(), thinker, Folder(os.environ["FOLDER"])))
    return [turn.to_json() for turn in thinker.turns()]


def keep(name, turns):
    Path(os.environ["OUT"], name).write_text(json.dumps(turns), encoding="utf-8")


@pytest.mark.harness_cassette
def test_sync_run():
    keep("sync.json", asyncio.run(run_demo()))


@pytest.mark.harness_cassette("shared-name")
async def test_async_run(harness_cassette):
    turns = await run_demo()
    keep("async.json", turns)
    client = harness_cassette.client
    assert client.played + len(client.new_interactions) == len(turns)


def finish_and_keep_all(request):
    answers = default_answers(request)
    for qid, question in request.questions.items():
        if qid == "next" and "finish" in question.options:
            answers[qid] = choose(question, "finish")
        elif qid.startswith("select_"):
            answers[qid] = yes(1.0)
    return answers


@pytest.mark.harness_model(model=finish_and_keep_all)
def test_a_policy_marker_answers_every_decision():
    turns = asyncio.run(run_demo())
    assert turns[-1]["tool"] == "finish"
    assert all(p == 1.0 for p in turns[-1]["selection"].values())


def test_the_fixture_overrides_the_model(harness_model):
    fake = harness_model.use(FakeDecisionModel()).client
    turns = asyncio.run(run_demo())
    assert len(fake.requests) == len(turns)


def test_a_real_model_is_blocked_naming_how_to_allow_it():
    entry = CatalogEntry(
        id="remote", provider="systemone", wire_model_id="jev-latest",
        base_url="https://api.typesafe.invalid", max_context_tokens=4096, max_concurrent=1,
    )
    request = DecisionRequest("a note", {"q": Noul("Keep it?")})

    async def ask():
        async with Dispatcher(Catalog([entry], {"decision": "remote"})) as dispatcher:
            await dispatcher.run(DecisionCall(Workflow(), request, upstream_retries=0))

    with pytest.raises(RealModelBlockedError, match="harness_real_model") as caught:
        asyncio.run(ask())
    assert "'remote'" in str(caught.value)
    assert "api.typesafe.invalid" in str(caught.value)
'''

INI = """[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
"""


def catalog_text(root: str) -> str:
    return f"""
[pins]
decision = "served"

[[entries]]
id = "served"
provider = "systemone"
kind = "decision"
wire_model_id = "sparrow-decider"
base_url = "{root}"
tokenizer = "cl100k_base"
max_context_tokens = 32768
max_concurrent = 2
"""


def test_record_new_against_a_loopback_server_then_replay_with_it_gone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    name = "2027-01-20-cfo-pricing-update.txt"
    (folder / name).write_bytes((corpus_path() / "email" / name).read_bytes())
    recorded, replayed = tmp_path / "recorded", tmp_path / "replayed"
    recorded.mkdir()
    replayed.mkdir()
    pytester.makeini(INI)
    pytester.makepyfile(test_project=PROJECT)
    catalog = tmp_path / "catalog.toml"
    monkeypatch.setenv("HARNESS_CATALOG", str(catalog))
    monkeypatch.setenv("FOLDER", str(folder))
    cassettes = pytester.path / "cassettes" / "test_project"

    # Replay only (the default) with no cassette yet: the cassette tests fail, saying how.
    catalog.write_text(catalog_text("http://127.0.0.1:9"), encoding="utf-8")
    monkeypatch.setenv("OUT", str(recorded))
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    first.assert_outcomes(passed=3, errors=2)
    first.stdout.fnmatch_lines(["*does not exist: record it once*--harness-record=new*"])

    with harness_serve() as (_, root):
        catalog.write_text(catalog_text(root), encoding="utf-8")
        record = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--harness-record=new")
        record.assert_outcomes(passed=5)
    assert sorted(p.name for p in cassettes.iterdir()) == ["shared-name.json", "test_sync_run.json"]
    written = {p.name: p.read_bytes() for p in cassettes.iterdir()}
    cassette = json.loads(written["test_sync_run.json"])
    assert cassette["format"] == "harness-cassette"
    assert cassette["version"] == 1
    assert len(cassette["interactions"]) == len(json.loads((recorded / "sync.json").read_text()))

    # The server is gone: every test passes from the cassettes, with the same turns.
    monkeypatch.setenv("OUT", str(replayed))
    replay = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replay.assert_outcomes(passed=5)
    for kept in ("sync.json", "async.json"):
        assert (replayed / kept).read_text() == (recorded / kept).read_text()
    assert {p.name: p.read_bytes() for p in cassettes.iterdir()} == written  # replay writes none

    # A changed objective changes every request: the replay fails, showing what differs.
    monkeypatch.setenv("OBJECTIVE", "Find the statements about travel.")
    changed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    changed.assert_outcomes(passed=3, failed=2)
    changed.stdout.fnmatch_lines(
        [
            "*ReplayMissError*is not in cassette*",
            "*test_sync_run.json*",
            "*state.objective changed*",
            "*harness cassette*",
            '*recorded: "Find the statements that decide a price change."*',
            '*asked:    "Find the statements about travel."*',
        ]
    )

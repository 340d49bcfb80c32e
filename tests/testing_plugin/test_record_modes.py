"""The three record modes of a test's cassette, in process: the "real entry" is the dispatcher's
installed client (here a fake that counts what it is asked)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from harness.decision import DecisionRequest, Noul
from harness.jobs import Dispatcher
from harness.providers import FakeDecisionModel, yes
from harness.testing import ReplayMissError
from harness.testing.pytest_plugin import CassetteRun
from harness.thinker import DecisionCall
from harness.tools import Workflow
from tests.thinker.notes import fake_catalog


def asking(*states: str) -> list[DecisionRequest]:
    return [DecisionRequest(state, {"keep": Noul("Keep it?")}) for state in states]


def run(cassette: CassetteRun, real: FakeDecisionModel, requests: list[DecisionRequest]) -> None:
    async def go() -> None:
        async with Dispatcher(fake_catalog(), clients={"fake": real}) as dispatcher:
            for request in requests:
                await dispatcher.run(DecisionCall(Workflow(), request, upstream_retries=0))

    with cassette.override:
        asyncio.run(go())
    cassette.finish()


def real(probability: float) -> FakeDecisionModel:
    return FakeDecisionModel(lambda request: {"keep": yes(probability)})


def test_new_records_what_is_missing_and_none_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "cassettes" / "test_x.json"
    first = real(0.1)
    run(CassetteRun(path, "new"), first, asking("a", "b"))
    assert len(first.requests) == 2
    written = path.read_bytes()

    again = real(0.9)
    replay = CassetteRun(path, "none")
    run(replay, again, asking("a", "b"))
    assert again.requests == []  # the real entry was not asked
    assert replay.client.played == 2
    assert path.read_bytes() == written  # replaying writes nothing

    more = real(0.5)
    run(CassetteRun(path, "new"), more, asking("a", "b", "c"))
    assert [r.state for r in more.requests] == ["c"]  # only what was missing
    assert len(CassetteRun(path, "none").client.cassette().interactions) == 3


def test_none_fails_on_a_miss_and_all_re_records_everything(tmp_path: Path) -> None:
    path = tmp_path / "test_y.json"
    run(CassetteRun(path, "new"), real(0.1), asking("a"))
    with pytest.raises(ReplayMissError, match="state line 1 changed"):
        run(CassetteRun(path, "none"), real(0.1), asking("z"))

    fresh = real(0.7)
    run(CassetteRun(path, "all"), fresh, asking("z"))
    assert [r.state for r in fresh.requests] == ["z"]
    cassette = CassetteRun(path, "none").client.cassette()
    assert [i.request["state"] for i in cassette.interactions] == ["z"]  # "a" is gone


def test_a_missing_cassette_in_none_mode_fails_saying_how_to_record_it(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="--harness-record=new"):
        CassetteRun(tmp_path / "missing.json", "none")


def test_loading_the_plugin_imports_nothing_of_harness_but_its_flag() -> None:
    code = (
        "import sys, harness.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('harness')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['harness', 'harness._guard', 'harness.pytest_plugin']"

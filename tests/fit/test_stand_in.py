"""A distilled stand-in answers the cassette misses of a user's pytest suite: the loop from a
teacher's recorded answers to ``pytest --harness-fallback=fitted:FILE``, run as a user runs it
(pytest in a subprocess, in a project folder of its own)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from harness.decision import DecisionResponse, NoulAnswer, systemone
from harness.evals import DecisionPack
from harness.replay import Cassette, Interaction

from .conftest import TRIAGE_PACK

USER_TEST = """
import asyncio

import pytest

from harness.catalog import default_catalog
from harness.decision import DecisionRequest, Noul
from harness.jobs import Dispatcher
from harness.thinker import DecisionCall
from harness.tools import Workflow

LINE = 'verdict#1 (verdict): {"note":"call the bank about the card today","urgent":true}'


@pytest.mark.harness_cassette(path="teacher.json")
def test_a_request_the_cassette_does_not_hold():
    request = DecisionRequest(
        {"objective": "keep what needs action", "artifacts": [LINE], "done": ["x"]},
        {"select_verdict#1": Noul("Does verdict#1 belong in the answer to the objective?")},
    )

    async def ask():
        async with Dispatcher(default_catalog()) as dispatcher:
            return await dispatcher.run(DecisionCall(Workflow(), request))

    response = asyncio.run(ask())
    assert response.noul("select_verdict#1").probability > 0.5
    assert response.reading["stand_in"].startswith("not in the cassette")
"""


def _teacher(path: Path, *, noise: int) -> None:
    """A scripted teacher's cassette over the triage selections: the tool's rule, its answer
    turned around on 1 decision in ``noise`` (chosen by a digest of its name)."""
    interactions = []
    for decision in DecisionPack.load(TRIAGE_PACK):
        (qid,) = decision.request.questions
        truth = bool(decision.labels[qid])
        if noise and hashlib.sha256(decision.name.encode()).digest()[0] % noise == 0:
            truth = not truth
        response = DecisionResponse(
            decision.request, {qid: NoulAnswer(0.9 if truth else 0.1)}, model="teacher-2"
        )
        interactions.append(
            Interaction.of(systemone.encode_body(decision.request, "teacher-2"), response)
        )
    Cassette(tuple(interactions)).write(path)


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    _teacher(folder / "teacher.json", noise=6)
    (folder / "test_user.py").write_text(textwrap.dedent(USER_TEST))
    code = main(
        [
            "fit",
            str(folder / "teacher.json"),
            "--out",
            str(folder / "stand-in.json"),
            "--encoder",
            "tfidf",
            "--no-base",
            "--resamples",
            "200",
        ]
    )
    assert code == 0
    return folder


def test_without_a_stand_in_the_miss_fails_the_test(project: Path) -> None:
    done = _pytest(project)
    assert done.returncode == 1, done.stdout
    assert "ReplayMissError" in done.stdout


def test_the_stand_in_answers_the_miss_and_the_report_says_so(project: Path) -> None:
    done = _pytest(project, "--harness-fallback=fitted:stand-in.json", "-rA")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "harness stand-in" in done.stdout
    assert "1 request(s) not in teacher.json answered by the stand-in fitted:stand-in.json" in (
        done.stdout
    )
    assert (
        "1 request(s) no cassette held were answered by the stand-in fitted:stand-in.json, in 1 "
        "test(s): test_user.py::test_a_request_the_cassette_does_not_hold" in done.stdout
    )


def test_a_stand_in_below_the_agreement_gate_fails_the_session(project: Path) -> None:
    done = _pytest(
        project,
        "--harness-fallback=fitted:stand-in.json",
        "--harness-fallback-min-agreement",
        "0.99",
    )
    assert done.returncode == 4, done.stdout + done.stderr
    said = done.stderr + done.stdout
    assert "its held-out agreement with the model it was distilled from is" in said
    assert "below --harness-fallback-min-agreement 0.99" in said
    passing = _pytest(
        project,
        "--harness-fallback=fitted:stand-in.json",
        "--harness-fallback-min-agreement",
        "0.5",
    )
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_a_fallback_that_is_not_a_fitted_file_is_refused(project: Path) -> None:
    done = _pytest(project, "--harness-fallback=embedded")
    assert done.returncode == 4
    assert "a stand-in is a fitted decider, --harness-fallback=fitted:FILE" in (
        done.stderr + done.stdout
    )

"""A test failing through harness reads in a few lines: the first five name the problem and the
fix, the whole failure stays under 40 lines (harness's frames hidden, causes summarised)."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.slow

PROJECT = '''
import attrs
import pytest

from harness import run_sync
from harness.artifacts import Artifact, ListArtifact
from harness.thinker import DecisionThinker
from harness.jobs import JobContext
from harness.tools import DecisionTool, Identifiable, tool_name


@attrs.frozen
class Sentence(Artifact, alias="sentence"):
    text: str


@attrs.frozen
class Word(Artifact, alias="word"):
    text: str


@tool_name("split_words")
class SplitWords(DecisionTool[Sentence, ListArtifact[Word]]):
    """Splits a sentence into its words."""

    async def execute(self, input: Sentence, context: JobContext) -> ListArtifact[Word]:
        return ListArtifact.of(Word, [Word(w) for w in input.text.split()])


@tool_name("find_words")
class WordFinder(DecisionThinker[Sentence, Word]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(parent, output_type=Word, key_tool=SplitWords, palette=(),
                         objective="Keep the words that name a Greek letter")


@pytest.mark.harness_cassette(path="words.json")
def test_cassette_miss() -> None:
    result = run_sync(WordFinder, Sentence("alpha beta"))
    assert result.items


def test_blocked() -> None:
    result = run_sync(WordFinder, Sentence("alpha beta"), model="systemone:jev-latest")
    assert result.items
'''


def failure(lines: list[str], name: str) -> list[str]:
    """The lines of test ``name``'s failure report (up to the next header or the summary)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("_") and f" {name} " in line)
    end = next(
        i
        for i in range(start + 1, len(lines))
        if lines[i].startswith(("_", "=")) and not lines[i].startswith("-")
    )
    return lines[start + 1 : end]


@pytest.fixture
def outcome(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TYPESAFE_API_KEY", "sk-not-a-real-key")
    monkeypatch.delenv("HARNESS_CATALOG", raising=False)
    pytester.makepyfile(test_words=PROJECT)
    empty = {"format": "harness-cassette", "version": 1, "interactions": []}
    (pytester.path / "words.json").write_text(json.dumps(empty), encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    return result.outlines


def test_a_cassette_miss_reads_in_five_lines(outcome: list[str]) -> None:
    shown = failure(outcome, "test_cassette_miss")
    assert len(shown) < 40, "\n".join(shown)
    first = " ".join(line.strip() for line in shown[:5])
    assert shown[0].startswith("ReplayMissError (via RunFailedError): request ")
    assert "is not in cassette" in first
    assert "pytest --harness-record=new" in first  # the fix
    assert "at test_words.py:" in first  # the test's own line
    assert "run_sync(WordFinder" in first
    assert not any("harness/jobs" in line or "asyncio" in line for line in shown)


def test_a_blocked_real_model_reads_in_five_lines(outcome: list[str]) -> None:
    shown = failure(outcome, "test_blocked")
    assert len(shown) < 40, "\n".join(shown)
    first = " ".join(line.strip() for line in shown[:5])
    assert shown[0].startswith("RealModelBlockedError (via RunFailedError): catalog entry")
    assert "is a real model over the network" in first
    assert "@pytest.mark.harness_cassette" in first  # the fix, one of them
    assert "sk-not-a-real-key" not in "\n".join(outcome)


CHANGED = """
from test_words import Sentence, WordFinder
import pytest
from harness import run_sync


@pytest.mark.harness_cassette(path="recorded.json")
def test_changed_input() -> None:
    result = run_sync(WordFinder, Sentence(TEXT))
    assert result.items is not None
"""


def test_a_miss_of_a_changed_request_names_the_problem_and_the_fix_in_five_lines(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_CATALOG", raising=False)
    pytester.makepyfile(test_words=PROJECT.split("@pytest.mark.harness_cassette")[0])
    pytester.makepyfile(test_changed=CHANGED.replace("TEXT", '"alpha beta gamma delta"'))
    recorded = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--harness-record=new", "test_changed.py"
    )
    recorded.assert_outcomes(passed=1)
    assert (pytester.path / "recorded.json").is_file()
    # The test changes: the sentence the run reads is another, so its requests differ.
    pytester.makepyfile(test_changed=CHANGED.replace("TEXT", '"epsilon zeta eta theta"'))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_changed.py")
    result.assert_outcomes(failed=1)
    shown = failure(result.outlines, "test_changed_input")
    assert len(shown) < 40, "\n".join(shown)
    first = " ".join(line.strip() for line in shown[:5])
    assert shown[0].startswith("ReplayMissError (via RunFailedError): request ")
    assert "is not in cassette" in first  # the problem
    assert "pytest --harness-record=new" in first, "\n".join(shown)  # the fix
    assert "What differs" in "\n".join(shown)  # and then what differs

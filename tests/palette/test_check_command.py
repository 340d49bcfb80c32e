"""``harness check``: a fixture package with legal and illegal palettes, checked from the
command line; text, GitHub annotations, SARIF 2.1 and JUnit name the same problems on the same
lines, and the exit status follows the severity."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

TOOLS = """\
from __future__ import annotations

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.jobs import JobContext
from harness.tools import DecisionTool, Identifiable, tool_name


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class Orphan(Artifact, alias="orphan"):
    n: int


@attrs.frozen
class Verdict(Artifact, alias="verdict"):
    ok: bool


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_orphan")
class JudgeOrphan(DecisionTool[Orphan, ListArtifact[Verdict]]):
    async def execute(self, input: Orphan, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("twice")
class Twice(DecisionTool[Note, Note]):
    def __init__(self, parent: Identifiable, times: int) -> None:
        super().__init__(parent)

    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""

THINKERS = """\
from __future__ import annotations

from harness.thinker import DecisionThinker
from harness.tools import Identifiable

from shop.tools import JudgeNote, JudgeOrphan, Note, Verdict


class Good(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Verdict, key_tool=JudgeNote, palette=(), objective="Judge it"
        )


class Lost(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Verdict, key_tool=JudgeOrphan, palette=(), objective="Judge it"
        )


class Listed(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=[JudgeNote],  # type: ignore[arg-type]
            objective="Judge it",
        )
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(TOOLS)
    (package / "thinkers.py").write_text(THINKERS)
    return tmp_path


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(cwd)])}
    return subprocess.run(
        [sys.executable, "-m", "harness", "check", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


TEXT = re.compile(
    r"^(?P<path>[\w/.]+):(?P<line>\d+): (?P<severity>error|warning): .*  \[(?P<code>[\w-]+)\]$"
)
GITHUB = re.compile(
    r"^::(?P<severity>error|warning) file=(?P<path>[^,]+),line=(?P<line>\d+),"
    r"title=(?P<code>[\w-]+)::"
)


def test_every_format_names_the_same_problems_on_the_same_lines(shop: Path) -> None:
    text = _check(shop, "shop", "--sarif", "out.sarif", "--junit", "out.xml")
    github = _check(shop, "shop", "--format", "github")
    assert text.returncode == github.returncode == 1, text.stderr
    expected = {  # each on the line mypy's plugin reports it on
        (
            "shop/tools.py",
            _line_of(TOOLS, "def __init__(self, parent: Identifiable, times"),
            "harness-ctor",
        ),
        ("shop/thinkers.py", _line_of(THINKERS, "key_tool=JudgeOrphan"), "harness-graph"),
        ("shop/thinkers.py", _line_of(THINKERS, "palette=[JudgeNote]"), "harness-tool"),
    }
    from_text = {
        (m["path"], int(m["line"]), m["code"])
        for m in map(TEXT.match, text.stdout.splitlines())
        if m is not None
    }
    assert from_text == expected, text.stdout
    assert 'Tool "Twice" cannot be built from its parent alone' in text.stdout
    assert "note: Write it as a tuple: palette=(JudgeNote,)" in text.stdout
    assert "checked 6 class(es): 3 error(s), 0 warning(s)" in text.stderr
    from_github = {
        (m["path"], int(m["line"]), m["code"])
        for m in map(GITHUB.match, github.stdout.splitlines())
        if m is not None
    }
    assert from_github == expected, github.stdout
    assert len(github.stdout.splitlines()) == 3  # one line per problem, notes folded in

    log = json.loads((shop / "out.sarif").read_text())
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "harness check"
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {c for _, _, c in expected}
    from_sarif = set()
    for result in run["results"]:
        assert result["message"]["text"]  # required: a message with text
        assert result["level"] in ("error", "warning")
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        from_sarif.add(
            (physical["artifactLocation"]["uri"], physical["region"]["startLine"], result["ruleId"])
        )
    assert from_sarif == expected

    suite = ET.parse(shop / "out.xml").getroot()
    assert suite.tag == "testsuite"
    assert suite.get("failures") == "3"
    from_junit = set()
    for case in suite.iter("testcase"):
        failure = case.find("failure")
        assert failure is not None
        from_junit.add((case.get("file"), int(case.get("line") or 0), failure.get("type")))
    assert from_junit == expected


def test_a_legal_package_exits_0(shop: Path) -> None:
    (shop / "shop" / "thinkers.py").write_text(THINKERS.split("\n\nclass Lost")[0] + "\n")
    (shop / "shop" / "tools.py").write_text(TOOLS.split('\n\n@tool_name("twice")')[0] + "\n")
    done = _check(shop, "shop", "--junit", "ok.xml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert ET.parse(shop / "ok.xml").getroot().get("failures") == "0"


def test_a_path_works_like_a_package(shop: Path) -> None:
    done = _check(shop, "shop/thinkers.py")
    assert done.returncode == 1
    assert "shop/thinkers.py:" in done.stdout
    assert "[harness-graph]" in done.stdout


@pytest.mark.parametrize("target", ["no_such_package", "missing/file.py"])
def test_a_target_that_does_not_import_is_one_line_and_exit_2(shop: Path, target: str) -> None:
    done = _check(shop, target)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("harness check: error: "), done.stderr
    assert "Traceback" not in done.stderr


def test_a_thinker_needing_more_than_its_parent_is_a_warning(shop: Path) -> None:
    (shop / "shop" / "odd.py").write_text(
        textwrap.dedent(
            """\
            from __future__ import annotations

            from harness.thinker import DecisionThinker
            from harness.tools import Identifiable

            from shop.tools import JudgeNote, Note, Verdict


            class Odd(DecisionThinker[Note, Verdict]):
                def __init__(self, parent: Identifiable, mood: str) -> None:
                    super().__init__(
                        parent, output_type=Verdict, key_tool=JudgeNote, palette=(),
                        objective=mood,
                    )
            """
        )
    )
    done = _check(shop, "shop/odd.py")
    assert done.returncode == 0
    assert 'shop/odd.py:9: warning: Thinker "Odd" cannot be built from its parent alone' in (
        done.stdout
    )


def test_files_are_listed_in_path_order(shop: Path) -> None:
    """A folder's findings come file by file in path order, each file's in line order, however
    the classes were found (tools before thinkers)."""
    done = _check(shop, "shop")
    paths = [m["path"] for m in map(TEXT.match, done.stdout.splitlines()) if m is not None]
    lines = [(m["path"], int(m["line"])) for m in map(TEXT.match, done.stdout.splitlines()) if m]
    assert paths == sorted(paths), done.stdout
    assert paths[0] == "shop/thinkers.py", done.stdout  # before shop/tools.py
    assert lines == sorted(lines), done.stdout


def test_a_thinker_whose_input_is_unknown_is_not_called_legal(shop: Path) -> None:
    """A generic thinker built unsubscripted: nothing binds its input, so its palette's
    reachability is not judged; the check says so (a warning), never passes it in silence."""
    (shop / "shop" / "generic.py").write_text(
        textwrap.dedent(
            """\
            from __future__ import annotations

            from typing import Generic, TypeVar

            from harness.artifacts import Artifact
            from harness.thinker import DecisionThinker
            from harness.tools import Identifiable

            from shop.tools import JudgeNote, Verdict

            In = TypeVar("In", bound=Artifact)


            class Base(DecisionThinker[In, Verdict], Generic[In]):
                def __init__(self, parent: Identifiable) -> None:
                    super().__init__(  # type: ignore[harness-undecidable]
                        parent, output_type=Verdict, key_tool=JudgeNote, palette=(),
                        objective="Judge",
                    )
            """
        )
    )
    done = _check(shop, "shop/generic.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "shop/generic.py:14: warning: The thinker's input type is not known at run time: "
        "whether the key tool is reachable and every palette tool can run is not judged  "
        "[harness-undecidable]"
    ) in done.stdout, done.stdout

"""A module whose errors mypy silences (``follow_imports = silent``; also a module an in-process
mypy finds through ``sys.path``, which it takes for installed) is read without its function
bodies: a ``tool_name(...)(Cls)`` call in one of its functions is out of the plugin's sight.
Where such a module could name the class, the plugin says it cannot prove the name; it never
reports the certain "no @tool_name" it would report if it had seen every call. mypy runs as a
user runs it, on the command line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
KIT = HERE / "kit"

VENDOR = """
from harness.jobs import JobContext
from harness.tools import DecisionTool
from palette_kit import Note


class CsvReader(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""

#: Names the vendored class in a function it calls: the name is given when the module runs.
NAMING = """
from harness.tools import tool_name
from vendor import CsvReader


def name_it() -> None:
    tool_name("read_csv")(CsvReader)


name_it()
"""

#: Holds the class but not tool_name: no call of it can name the class.
NOT_NAMING = """
from vendor import CsvReader


def count() -> int:
    return len(CsvReader.__name__)
"""

APP = """
from palette_kit import DecisionThinker, Identifiable, JudgeNote, Note, Verdict

import naming
from vendor import CsvReader


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(CsvReader,),
            objective="Judge the note",
        )
"""

CONFIG = (HERE / "mypy.ini").read_text()
"""The plugin tests' own config: strict, the plugin on, harness's errors silenced."""


def _mypy(root: Path, naming: str, config: str) -> str:
    """mypy's output on ``app.py`` beside the vendored class and the ``naming`` module."""
    (root / "vendor.py").write_text(textwrap.dedent(VENDOR))
    (root / "naming.py").write_text(textwrap.dedent(naming))
    (root / "app.py").write_text(textwrap.dedent(APP))
    (root / "mypy.ini").write_text(config)
    env = {**os.environ, "MYPYPATH": os.pathsep.join([str(REPO), str(KIT)])}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", ".c", "app.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done.stdout


def _codes(out: str) -> set[str]:
    return {line.rsplit("[", 1)[1].rstrip("]") for line in out.splitlines() if "error:" in line}


@pytest.mark.slow
def test_a_call_in_a_silenced_modules_function_is_cannot_prove(tmp_path: Path) -> None:
    """The name given in a function of a module under ``follow_imports = silent``: "cannot
    prove", naming the module and how to let mypy read it, never the certain harness-name."""
    config = CONFIG + "\n[mypy-naming]\nfollow_imports = silent\n"
    out = _mypy(tmp_path, NAMING, config)
    assert _codes(out) == {"harness-undecidable"}, out
    assert 'does not read the function bodies of module "naming"' in out, out
    assert "follow_imports = normal" in out, out


@pytest.mark.slow
def test_the_same_module_read_gives_the_call_its_own_verdict(tmp_path: Path) -> None:
    """Read, the module's call is seen: "cannot prove" because it runs only when its function
    does (the control of the test above)."""
    out = _mypy(tmp_path, NAMING, CONFIG)
    assert _codes(out) == {"harness-undecidable"}, out
    assert "runs only when the code around it does" in out, out


@pytest.mark.slow
def test_a_silenced_module_that_cannot_call_tool_name_leaves_the_name_certain(
    tmp_path: Path,
) -> None:
    """A silenced module that holds the class but not ``tool_name`` names nothing: the class
    certainly has no name (harness-name), as when every module is read."""
    config = CONFIG + "\n[mypy-naming]\nfollow_imports = silent\n"
    out = _mypy(tmp_path, NOT_NAMING, config)
    assert _codes(out) == {"harness-name"}, out

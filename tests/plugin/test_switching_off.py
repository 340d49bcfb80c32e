"""Switching a check off in a way that works with and without the plugin.

mypy's own ``# mypy: disable-error-code="harness-dead-tool"`` (and ``disable_error_code`` in a
config section) names a code only the plugin registers: a mypy run without the plugin (a CI job
with plain mypy, an editor) stops with an internal error (mypy 1.19 up to at least 2.4.1 reads
the unknown code with ``error_codes[code]``, a ``KeyError``). The plugin reads its own module
switch, ``# harness: disable-error-code="..."``, a comment plain mypy ignores, and a line's
``# type: ignore[harness-dead-tool, unused-ignore]`` is silent in both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KIT = REPO / "tests" / "plugin" / "kit"

THINKER = """\
from __future__ import annotations
from palette_kit import DecisionThinker, Identifiable, JudgeNote, Note, ReadOrphan, Verdict


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(ReadOrphan,),{ignore}
            objective="Judge the note",
        )
"""

MODULES = {
    "switched_by_comment": '# harness: disable-error-code="harness-dead-tool"\n'
    + THINKER.format(ignore=""),
    "switched_on_the_line": THINKER.format(
        ignore="  # type: ignore[harness-dead-tool, unused-ignore]"
    ),
    "switched_off_another_code": '# harness: disable-error-code="harness-graph"\n'
    + THINKER.format(ignore=""),
}


def _mypy(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "MYPYPATH": os.pathsep.join([str(REPO), str(KIT)]),
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(folder / ".cache"), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("switching_off")
    for name, source in MODULES.items():
        (folder / f"{name}.py").write_text(source)
    common = (
        "[mypy]\npython_version = 3.11\nstrict = True\n[mypy-harness.*]\nfollow_imports = silent\n"
    )
    (folder / "with_plugin.ini").write_text(
        common.replace("[mypy]\n", "[mypy]\nplugins = mypy_plugin\n")
    )
    (folder / "plain.ini").write_text(common)
    return folder


def test_with_the_plugin_the_switches_hold_and_nothing_else_is_switched(modules: Path) -> None:
    done = _mypy(modules, "--config-file", "with_plugin.ini", *(f"{n}.py" for n in MODULES))
    assert "INTERNAL ERROR" not in done.stdout + done.stderr, done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors == [
        line for line in errors if line.startswith("switched_off_another_code.py:")
    ], done.stdout
    assert len(errors) == 1, done.stdout
    assert errors[0].endswith("[harness-dead-tool]"), done.stdout


def test_without_the_plugin_the_same_modules_pass(modules: Path) -> None:
    done = _mypy(modules, "--config-file", "plain.ini", *(f"{n}.py" for n in MODULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 3 source files" in done.stdout


def test_mypys_own_inline_switch_of_a_plugin_code_crashes_plain_mypy(tmp_path: Path) -> None:
    """Why docs/plugin.md does not show ``# mypy: disable-error-code="harness-..."``: with
    the mypy this project pins, it stops a run without the plugin (if this starts to pass, mypy
    fixed it: say so in docs/plugin.md)."""
    (tmp_path / "legacy.py").write_text(
        '# mypy: disable-error-code="harness-dead-tool"\nx: int = 1\n'
    )
    (tmp_path / "plain.ini").write_text("[mypy]\n")
    done = _mypy(tmp_path, "--config-file", "plain.ini", "--show-traceback", "legacy.py")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "INTERNAL ERROR" in done.stdout + done.stderr
    assert "KeyError: 'harness-dead-tool'" in done.stdout + done.stderr

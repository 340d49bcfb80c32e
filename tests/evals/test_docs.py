"""The eval pages run as written, in order, each in an empty folder: a page's Python blocks in
one namespace, its commands in a shell; the output it shows is the output they print."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    "evals.md": ("junit.xml", "calibration.toml"),
    "position-bias.md": ("choices/report.json",),
    "shipped-data.md": ("examples.json", "select-examples.json"),
}
"""Each eval page and files its blocks leave behind (what the page says they write)."""
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)


def shown_lines(text: str) -> list[str]:
    """The lines a block shows as output, trailing spaces dropped, "..." elisions left out."""
    return [line.rstrip() for line in text.splitlines() if line.strip() and line.strip() != "..."]


def check_shown(shown: list[str], printed: str, where: str) -> None:
    got = [line.rstrip() for line in printed.splitlines()]
    for line in shown:
        assert line in got, f"{where}: the docs show {line!r}, which was not printed:\n{printed}"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_eval_pages_run_as_written(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = BLOCK.findall((ROOT / "docs" / page).read_text(encoding="utf-8"))
    kinds = [kind for kind, _ in blocks]
    assert kinds.count("python") >= 2
    assert kinds.count("console") >= 1
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("HARNESS_CATALOG", None)
    namespace: dict[str, object] = {"__name__": "docs_" + page.removesuffix(".md")}
    printed = ""
    for number, (kind, code) in enumerate(blocks, 1):
        where = f"docs/{page} block {number}"
        if kind == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, where, "exec"), namespace)
            printed = out.getvalue()
        elif kind == "console":
            commands: list[tuple[str, list[str]]] = []
            for line in code.splitlines():
                if line.startswith("$ "):
                    commands.append((line[2:], []))
                elif commands:
                    commands[-1][1].append(line)
            for command, output in commands:
                done = subprocess.run(
                    command.replace("harness ", f"{sys.executable} -m harness ", 1),
                    shell=True,
                    cwd=tmp_path,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert done.returncode == 0, f"{where}: {command}: {done.stderr}"
                check_shown(shown_lines("\n".join(output)), done.stdout, f"{where}: {command}")
        elif kind == "":
            check_shown(shown_lines(code), printed, where)  # the output of the block before
    for written in PAGES[page]:
        assert (tmp_path / written).exists(), f"docs/{page} should have written {written}"

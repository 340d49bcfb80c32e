"""The commands docs/performance.md gives for reproducing its figures run as written, from a
clone, each in its tiny size (the page's own arguments first, the tiny ones after them, so the
run takes seconds) and print the figures the page quotes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"

sys.path.insert(0, str(ROOT / "benchmarks"))

from _results import TINY  # noqa: E402  # each benchmark's tiny size

SMALL: dict[str, tuple[list[str], str]] = {
    "embedded": (TINY["embedded"], "harness's own time / the model's"),
    "targets": (["--quick", "--runs", "1", "--only", "json_body"], "JSON encode + decode"),
    "fitted": (["--rounds", "2", "--calls", "2"], "tfidf / embedded"),
}
"""Each script the page runs: the arguments that make it tiny, and a line it must print."""


def page_commands() -> list[list[str]]:
    """The ``python benchmarks/...`` lines of the page's "How to reproduce" listing."""
    section = PAGE.read_text(encoding="utf-8").split("## How to reproduce", 1)[1]
    listing = re.search(r"```text\n(.*?)```", section, re.S)
    assert listing is not None, "docs/performance.md: no listing under 'How to reproduce'"
    lines = [line.split("#", 1)[0].strip() for line in listing.group(1).splitlines()]
    return [shlex.split(line) for line in lines if line]


def test_the_page_lists_only_scripts_this_test_runs() -> None:
    commands = page_commands()
    assert commands
    for command in commands:
        assert command[:1] == ["python"], command
        script = Path(command[1])
        assert script.parent == Path("benchmarks"), command
        assert (ROOT / script).is_file(), command
        assert script.stem in SMALL, f"{command}: give this test its tiny size"


@pytest.mark.slow
@pytest.mark.parametrize("command", page_commands(), ids=lambda c: Path(c[1]).stem)
def test_a_command_of_the_page_runs_and_prints_its_figure(
    command: list[str], tmp_path: Path
) -> None:
    tiny, printed = SMALL[Path(command[1]).stem]
    done = subprocess.run(
        [sys.executable, str(ROOT / command[1]), *command[2:], *tiny],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert printed in done.stdout, done.stdout[-2000:]

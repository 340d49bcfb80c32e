"""docs/durable.md runs as written, in order, in an empty folder where only harness imports.

A ``python`` block whose first line is ``# NAME.py`` is saved as that file; every other
``python`` block runs in a new interpreter; each ``$ `` line of a ``console`` block runs in
bash, exiting 0 unless the line ends with ``# exit N``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "durable.md"
BLOCK = re.compile(r"```(python|console)\n(.*?)```", re.DOTALL)
EXIT = re.compile(r"#\s*exit (\d+)\s*$")


def test_the_durable_page_runs_as_written(tmp_path: Path) -> None:
    site = tmp_path / "site"  # harness alone: not the repository's tests or examples
    site.mkdir()
    (site / "harness").symlink_to(ROOT / "harness")
    folder = tmp_path / "empty"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    ran = {"python": 0, "console": 0, "file": 0}
    for kind, text in blocks:
        first = text.splitlines()[0]
        if kind == "python" and re.fullmatch(r"# \w+\.py", first):
            (folder / first[2:]).write_text(text, encoding="utf-8")
            ran["file"] += 1
        elif kind == "python":
            done = subprocess.run(
                [sys.executable, "-c", text], cwd=folder, env=env, capture_output=True, timeout=300
            )
            assert done.returncode == 0, f"{text}\n{done.stderr.decode()}"
            ran["python"] += 1
        else:
            for line in text.splitlines():
                if not line.startswith("$ "):
                    continue
                command = line[2:]
                wanted = EXIT.search(command)
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=folder,
                    env=env,
                    capture_output=True,
                    timeout=300,
                )
                expected = int(wanted.group(1)) if wanted else 0
                status = done.returncode if done.returncode >= 0 else 128 - done.returncode
                assert status == expected, f"{command}\n{done.stderr.decode()}"
                ran["console"] += 1
    assert ran == {"python": 4, "console": 8, "file": 1}

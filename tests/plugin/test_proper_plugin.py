"""The plugin's own code passes mypy's ``proper_plugin`` (no unchecked ``isinstance`` on a type
that may be an alias: every type is narrowed through ``get_proper_type``).

CI runs the same check: ``mypy --config-file tests/plugin/proper_plugin.ini mypy_plugin``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_plugin_code_is_proper() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "tests" / "plugin" / "proper_plugin.ini"),
            "--cache-dir",
            "/dev/null",
            "mypy_plugin",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout

"""Running the `harness` command in a subprocess, offline, for the CLI tests."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).parents[2]


def harness(
    *args: str, cwd: pathlib.Path, timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """``python -m harness.cli ARGS`` in ``cwd`` with ``HARNESS_CATALOG`` unset; the repository
    root is on ``PYTHONPATH`` so ``tests.cli.words`` imports."""
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CATALOG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )

"""``harness run --otel-console``: the run's span tree on stderr, no collector needed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.cli import main


def test_harness_run_prints_the_span_tree_of_the_run(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    record = f"{tmp_path}/record.json"
    code = main(
        [
            "run",
            "tests.thinker.notes:Triage",
            "--input",
            json.dumps({"text": "alpha is due; beta can wait"}),
            "--record",
            record,
            "--otel-console",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    tree = captured.err[captured.err.index("spans (OpenTelemetry):") :].splitlines()[1:]
    assert tree[0].startswith("  run ")
    assert any(line.startswith("    turn 1") for line in tree)
    assert any(line.startswith("      decision ") for line in tree)
    assert any(line.lstrip().startswith("tool ") for line in tree)
    assert "outcome=completed" in tree[0]


def test_the_option_says_how_to_install_when_opentelemetry_is_missing(tmp_path: object) -> None:
    script = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'opentelemetry':\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from harness.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "run", "x:Y", "--input", "{}", "--otel-console"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "pip install 'harness[otel]'" in done.stderr

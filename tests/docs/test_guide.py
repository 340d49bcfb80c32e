"""Every Python example of docs/guide.md runs, in order, in one namespace, and type-checks.

The examples run twice: as written (on the embedded model) and with every ``model="embedded"``
replaced by the fake model of ``harness.testing`` answering with a triage policy.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

from harness.testing import FakeDecisionModel
from tests.api.policies import triage_policy

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def blocks(name: str) -> list[str]:
    return BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


def test_the_guide_has_examples() -> None:
    assert len(blocks("guide.md")) >= 6


EMBEDDED = 'model="embedded"'


def test_the_guide_opens_with_a_ten_line_synchronous_first_program() -> None:
    text = (DOCS / "guide.md").read_text(encoding="utf-8")
    first = blocks("guide.md")[0]
    assert text.startswith("# The harness guide\n\n## Your first program\n")
    second_section = text.index("\n## ", text.index("## Your first program") + 1)
    assert text.index("```python") < second_section  # the first example opens the guide
    program = [line for line in first.splitlines() if not line.startswith("assert")]
    assert len([line for line in program if line.strip()]) <= 10
    assert "run_sync(" in first
    assert "await" not in first
    assert "Catalog" not in first
    assert "cost" in first


@pytest.mark.parametrize("model", ["embedded", "fake"])
def test_the_guides_examples_run(model: str) -> None:
    namespace: dict[str, object] = {"__name__": "docs_guide"}
    if model == "fake":
        namespace["GUIDE_FAKE"] = FakeDecisionModel(triage_policy)
    uses = 0
    for number, code in enumerate(blocks("guide.md"), 1):
        uses += code.count(EMBEDDED)
        if model == "fake":
            code = code.replace(EMBEDDED, "model=GUIDE_FAKE")
        exec(compile(code, f"docs/guide.md block {number}", "exec"), namespace)
    assert uses >= 5  # the one-call examples really ran on both models


def test_the_guides_examples_type_check_with_the_plugin(tmp_path: Path) -> None:
    module = tmp_path / "docs_guide.py"
    module.write_text("\n\n".join(blocks("guide.md")), encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(module),
        ]
    )
    assert status == 0, out + err

"""Every Python example of docs/guide.md runs, in order, in one namespace, and type-checks."""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def blocks(name: str) -> list[str]:
    return BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


def test_the_guide_has_examples() -> None:
    assert len(blocks("guide.md")) >= 6


def test_the_guides_examples_run() -> None:
    namespace: dict[str, object] = {"__name__": "docs_guide"}
    for number, code in enumerate(blocks("guide.md"), 1):
        exec(compile(code, f"docs/guide.md block {number}", "exec"), namespace)


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

"""Every Python example of docs/guide.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def blocks(name: str) -> list[str]:
    return BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


def test_the_guide_has_examples() -> None:
    assert len(blocks("guide.md")) >= 5


def test_the_guides_examples_run() -> None:
    namespace: dict[str, object] = {"__name__": "docs_guide"}
    for number, code in enumerate(blocks("guide.md"), 1):
        exec(compile(code, f"docs/guide.md block {number}", "exec"), namespace)

"""docs/testing.md's examples run: every ``python`` block, in order, then every test it defines."""

from __future__ import annotations

import pathlib
import re

import pytest

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "testing.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _blocks() -> list[str]:
    blocks = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 2, f"{DOC} lost its examples"
    return blocks


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_the_example_runs_and_its_tests_pass(index: int) -> None:
    namespace: dict[str, object] = {"__name__": f"docs_testing_example_{index}"}
    exec(compile(_blocks()[index], f"{DOC}:block{index + 1}", "exec"), namespace)
    tests = [
        value for name, value in namespace.items() if name.startswith("test_") and callable(value)
    ]
    assert tests, f"block {index + 1} of {DOC.name} defines no test to run"
    for test in tests:
        test()

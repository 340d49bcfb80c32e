"""Every ```python block of docs/vocabulary.md runs as a doctest, in order, in one namespace."""

from __future__ import annotations

import doctest
import re
from pathlib import Path
from types import ModuleType

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "vocabulary.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_examples() -> None:
    found = blocks()
    assert len(found) >= 8
    assert all(">>>" in block for block in found)


def test_every_example_runs() -> None:
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    namespace: dict[str, object] = {}
    for index, text in enumerate(blocks()):
        test = parser.get_doctest(text, namespace, f"vocabulary.md block {index}", str(DOC), 0)
        runner.run(test, clear_globs=False)
        namespace = test.globs
    results = runner.summarize(verbose=False)
    if results.failed:
        pytest.fail(
            f"{results.failed} of {results.attempted} examples in {DOC.name} failed (see above)"
        )
    assert results.attempted >= 20


def test_the_docstring_examples_run() -> None:
    import harness.decision
    from harness.decision._frozen_map import FrozenMap

    globs = {**vars(harness.decision), "FrozenMap": FrozenMap}
    objects = [getattr(harness.decision, name) for name in harness.decision.__all__]
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for obj in [*objects, FrozenMap]:
        name = getattr(obj, "__name__", repr(obj))
        if isinstance(obj, ModuleType):  # the codec modules: their own names in scope
            found = finder.find(obj, name, globs={**vars(obj), **globs})
        else:
            found = finder.find(obj, name, module=False, globs=dict(globs))
        for test in found:
            runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0
    assert results.attempted >= 15

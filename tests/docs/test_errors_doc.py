"""docs/errors.md lists every error harness defines, and its example runs."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import harness
from harness import errors
from harness.errors import HarnessError

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def every_error_class() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for module in pkgutil.walk_packages(harness.__path__, "harness."):
        if ".demo.corpus" in module.name or module.name.endswith("__main__"):
            continue
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("harness")
                and not value.__name__.startswith("_")
            ):
                found.add(value)
    return found


def test_every_error_is_listed_with_when_it_is_raised() -> None:
    text = DOC.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(\w+)`", text, re.MULTILINE))
    missing = sorted(
        cls.__name__
        for cls in every_error_class()
        if cls.__name__ not in listed
        and cls.__name__ not in ("InvariantViolation", "PlantedCrash", "RunHung")
    )
    assert missing == []
    for name in errors.__all__:
        if not name.endswith("Signal"):
            assert name in listed
    assert "InvariantViolation" in text
    assert "PlantedCrash" in text
    assert "RunHung" in text


def test_every_harness_error_is_named_error_or_documented() -> None:
    for cls in every_error_class():
        if issubclass(cls, HarnessError):
            assert cls.__name__.endswith("Error"), cls


def test_the_errors_example_runs() -> None:
    (code,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    exec(compile(code, "docs/errors.md", "exec"), {"__name__": "docs_errors"})

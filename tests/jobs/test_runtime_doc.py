"""docs/runtime.md stays accurate: its catalog example loads, its first example runs."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from harness.catalog import CatalogError, load_catalog
from harness.jobs import RetryPolicy

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def blocks(language: str) -> list[str]:
    """The fenced ``language`` blocks of docs/runtime.md, in order."""
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_full_catalog_example_loads(tmp_path: Path) -> None:
    (example,) = blocks("toml")
    path = tmp_path / "catalog.toml"
    path.write_text(example, encoding="utf-8")
    catalog = load_catalog(path)
    assert list(catalog.entries) == ["jev", "local", "embedded"]
    assert catalog.pinned().id == "jev"
    jev = catalog.entry("jev")
    assert (jev.tpm, jev.rpm, jev.max_concurrent) == (15_000_000, 1200, None)
    assert jev.api_key_env == "TYPESAFE_API_KEY"
    assert jev.cost(1_000_000) == pytest.approx(0.042)
    assert catalog.entry("local").bound == "concurrency"
    assert catalog.entry("local").url == "http://127.0.0.1:8000/v1/systemone"
    local = RetryPolicy.for_entry(catalog.entry("local"))
    assert local == RetryPolicy(max_retries=4, statuses={429, 503}, backoff_cap=2.0, max_hint=20.0)
    assert RetryPolicy.for_entry(jev) == RetryPolicy()


def test_the_catalog_example_with_both_bounds_is_refused_naming_the_rule(tmp_path: Path) -> None:
    (example,) = blocks("toml")
    path = tmp_path / "catalog.toml"
    path.write_text(example.replace("max_concurrent = 4", "max_concurrent = 4\ntpm = 9"), "utf-8")
    with pytest.raises(CatalogError, match=r"'local'.*both tpm and max_concurrent"):
        load_catalog(path)


async def test_the_decision_call_example_runs() -> None:
    first = blocks("python")[0]
    namespace: dict[str, object] = {}
    exec(compile(first, str(DOC), "exec"), namespace)  # the doc's own example
    main = namespace["main"]
    assert callable(main)
    run: Callable[[], Awaitable[None]] = main
    await run()

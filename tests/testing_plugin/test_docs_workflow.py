"""docs/cassettes.md's cassette workflow, run end to end: its test file and catalog, recorded once
with the key against a stand-in for the hosted model (a loopback server that demands the key),
then replayed with no key, the catalog as written (a host on the internet), and nothing on the
wire: the plugin's guard refuses any real call, so a pass means the cassette answered all."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.testing import FakeSystemOneServer

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[2] / "docs" / "cassettes.md"
HEADING = "# Record once, replay in CI: cassettes and the pytest plugin"
KEY = "sk-docs-workflow-7f3a"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC.name} lost its cassette section"
    return text[text.index(HEADING) :]


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", section(), re.DOTALL | re.MULTILINE)


@contextmanager
def keyed_server() -> Iterator[FakeSystemOneServer]:
    """The fake System One server demanding ``KEY``, on its own loop in a thread (the test
    project runs in a subprocess that reaches it over loopback)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = FakeSystemOneServer(api_key=KEY)
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(30)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def test_the_section_shows_the_whole_workflow() -> None:
    commands = "\n".join(blocks("sh"))
    assert "pytest --harness-record=new" in commands
    assert "git add tests/cassettes/" in commands
    assert "\npytest\n" in commands
    assert "harness replay" in commands


def test_the_override_example_runs() -> None:
    example = next(block for block in blocks("py") if "harness.override" in block)
    exec(compile(example, f"{DOC}:override example", "exec"), {"__name__": "docs_override"})


def test_record_once_with_the_key_then_replay_in_ci_without_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    test_file = next(block for block in blocks("py") if "harness_cassette" in block)
    (catalog_text,) = blocks("toml")
    assert "https://api.typesafe.example" in catalog_text
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_prices.py").write_text(test_file, encoding="utf-8")
    catalog = tmp_path / "catalog.toml"
    monkeypatch.setenv("HARNESS_CATALOG", str(catalog))

    with keyed_server() as server:
        catalog.write_text(
            catalog_text.replace("https://api.typesafe.example", server.root), encoding="utf-8"
        )
        monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
        recorded = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--harness-record=new", "tests/test_prices.py"
        )
        recorded.assert_outcomes(passed=1)
        recorded.stdout.fnmatch_lines(  # recording says what it wrote
            [
                "*harness cassettes*",
                "wrote *test_finds_the_price_decisions_in_the_mail.json (* interactions, * new);*",
            ]
        )
        asked = server.requests
    assert asked >= 3
    assert all(h.get("Authorization") == f"Bearer {KEY}" for h in server.headers)
    (cassette,) = (pytester.path / "tests" / "cassettes" / "test_prices").iterdir()
    assert cassette.name == "test_finds_the_price_decisions_in_the_mail.json"
    assert KEY not in cassette.read_text(encoding="utf-8")
    written = cassette.read_bytes()

    # CI: no key, the catalog exactly as the page has it (a host on the internet), no server.
    monkeypatch.delenv("TYPESAFE_API_KEY")
    catalog.write_text(catalog_text, encoding="utf-8")
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
    assert cassette.read_bytes() == written
    assert server.requests == asked  # the server saw nothing more

    # The same project asking the real host without a cassette is refused, saying how.
    test_file_without = test_file.replace("@pytest.mark.harness_cassette\n", "")
    (pytester.path / "tests" / "test_prices.py").write_text(test_file_without, encoding="utf-8")
    blocked = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    blocked.assert_outcomes(failed=1)
    blocked.stdout.fnmatch_lines(
        ["RealModelBlockedError*'jev' is a real model*", "*(systemone at api.typesafe.example)*"]
    )

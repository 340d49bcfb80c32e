"""The CLI pages name every subcommand and every option of ``harness``: walked from the parser, so
a command or option added without its documentation fails here. docs/cli.md holds the summary of
every command; each command's section is on docs/cli.md or on one of its families' pages
(``docs/cli-*.md``), and the page that holds it is named in docs/cli.md."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from harness.cli import build_parser

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
PAGES = [DOC, *sorted(DOC.parent.glob("cli-*.md"))]


def sections_text() -> str:
    """Every CLI page, one after another (a section ends at the next ``## `` or page)."""
    return "\n".join(page.read_text(encoding="utf-8") + "\n## (end of page)" for page in PAGES)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (found,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


def summary() -> str:
    """The block of usage lines at the top of the page."""
    text = DOC.read_text(encoding="utf-8")
    return re.search(r"^```\n(harness .*?)^```$", text, re.DOTALL | re.MULTILINE).group(1)  # type: ignore[union-attr]  # the page opens with it


def usage_of(name: str) -> str:
    """A command's usage lines in the summary (its line and the indented ones after it)."""
    taken: list[str] = []
    inside = False
    for line in summary().splitlines():
        if line.startswith(f"harness {name} "):
            inside = True
        elif not line.startswith(" "):
            inside = False
        if inside:
            taken.append(line)
    assert taken, f"docs/cli.md's summary has no line for `harness {name}`"
    return "\n".join(taken)


def section_of(name: str) -> str:
    """The command's own section (its heading to the next ``## ``)."""
    found = re.search(
        rf"^## `harness {name}\b.*?(?=^## |\Z)", sections_text(), re.DOTALL | re.MULTILINE
    )
    assert found is not None, f"the CLI pages have no section '## `harness {name} ...`'"
    return found.group(0)


def test_the_summary_names_the_global_options() -> None:
    assert "harness [--version] [--help]" in summary()


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_command_has_its_usage_and_its_section(name: str) -> None:
    assert re.search(rf"^## `harness {name}\b", sections_text(), re.MULTILINE), (
        f"the CLI pages have no section '## `harness {name} ...`'"
    )
    usage = usage_of(name)
    documented = usage + "\n" + section_of(name)
    parser = subcommands()[name]
    for action in parser._actions:
        for option in action.option_strings:
            if option in ("-h", "--help"):
                continue
            assert re.search(rf"{re.escape(option)}(?![\w-])", documented), (
                f"the CLI pages name {option} of `harness {name}` neither in docs/cli.md's summary "
                "line nor in its section"
            )
        if not action.option_strings and action.dest not in ("help",):
            shown = str(action.metavar or action.dest.upper())
            for part in shown.split("|"):  # a choice of forms: each one shown
                assert part in usage, f"`harness {name}` takes {part}: show it in the summary"


def test_the_walk_sees_every_command_the_parser_has() -> None:
    # A command added to the CLI is walked above; if it is not documented, its case fails.
    assert {"demo", "run", "batch", "replay", "models", "record", "serve"} <= set(subcommands())


def test_docs_cli_md_names_every_page_a_command_s_section_is_on() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    assert len(PAGES) > 1
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in text, f"docs/cli.md does not point to docs/{page.name}"
        for heading in re.findall(r"^## `harness (\w+)", page.read_text(encoding="utf-8"), re.M):
            assert f"`{heading}`" in text, f"docs/cli.md does not say `{heading}` is elsewhere"

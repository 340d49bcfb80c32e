"""Pages a reader finishes: no page of README.md and docs/ is over :data:`MOST_LINES` lines, and
README names every page of docs/, so a page split by what a reader comes for is found from the
tour."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MOST_LINES = 500
"""The most lines a page holds; a longer one is split by what a reader comes for."""


def line_count(page: Path) -> int:
    return len(page.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_no_page_is_over_the_most_lines(page: Path) -> None:
    lines = line_count(page)
    assert lines <= MOST_LINES, (
        f"{page.relative_to(ROOT)} is {lines} lines, over {MOST_LINES}: split it by what a reader "
        "comes for, and name the new page in README.md's tour"
    )


def test_the_count_sees_a_page_over_the_most_lines(tmp_path: Path) -> None:
    page = tmp_path / "long.md"
    page.write_text("a line\n" * (MOST_LINES + 1), encoding="utf-8")
    assert line_count(page) == MOST_LINES + 1
    page.write_text("a line\n" * MOST_LINES, encoding="utf-8")
    assert line_count(page) == MOST_LINES


@pytest.mark.parametrize("page", PAGES[1:], ids=[page.name for page in PAGES[1:]])
def test_readme_names_every_page(page: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"docs/{page.name}" in readme, f"README.md does not name docs/{page.name}"

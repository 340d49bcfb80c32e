"""Modules by concern: a module of ``harness`` or ``mypy_plugin`` over :data:`MOST_LINES` lines
says in its docstring why its one concern needs the length (a sentence with "past 400 lines");
a module that holds two concerns is split instead."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOST_LINES = 400
"""The most lines a module holds without saying why."""
REASON = "past 400 lines"
"""The words that open the reason in a long module's docstring."""

MODULES = sorted(
    path for package in ("harness", "mypy_plugin") for path in (ROOT / package).rglob("*.py")
)


def says_why(path: Path) -> bool:
    """Whether ``path`` is short, or its docstring gives the reason for its length."""
    source = path.read_text(encoding="utf-8")
    if len(source.splitlines()) <= MOST_LINES:
        return True
    docstring = ast.get_docstring(ast.parse(source)) or ""
    return REASON in " ".join(docstring.split())


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_a_long_module_says_why_in_its_docstring(path: Path) -> None:
    assert says_why(path), (
        f"{path.relative_to(ROOT)} is over {MOST_LINES} lines and its docstring does not say why "
        f"(a sentence with {REASON!r}): split it by concern, or give the reason"
    )


def test_the_check_reads_the_length_and_the_docstring(tmp_path: Path) -> None:
    long_body = "x = 1\n" * MOST_LINES
    silent = tmp_path / "silent.py"
    silent.write_text('"""A module."""\n' + long_body, encoding="utf-8")
    assert not says_why(silent)
    reasoned = tmp_path / "reasoned.py"
    reasoned.write_text(f'"""A module.\n\nOne concern, {REASON}: ..."""\n' + long_body, "utf-8")
    assert says_why(reasoned)
    short = tmp_path / "short.py"
    short.write_text('"""A module."""\n' + "x = 1\n" * (MOST_LINES - 1), encoding="utf-8")
    assert says_why(short)

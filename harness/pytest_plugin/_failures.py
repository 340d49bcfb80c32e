"""Failures that read in a few lines: a test failing with an error raised through harness reports
the cause's type and message first (its fix is in the message), then the lines of the test's own
code it came through; harness's frames are hidden and a run's failure is summarised (``via
RunFailedError``). Loaded by the plugin's report hook when a test fails."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

import pytest

_WIDTH: Final = 100
_MESSAGE_LINES: Final = 10
_HARNESS_DIR: Final = str(Path(__file__).resolve().parents[1])
"""harness's own folder: frames in it are hidden."""


def _causes(error: BaseException) -> list[BaseException]:
    """``error`` and what caused it, outermost first (a run's failure carries its error)."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        inner = getattr(current, "error", None)
        current = inner if isinstance(inner, BaseException) else current.__cause__
    return chain


def _is_harness(error: BaseException) -> bool:
    return type(error).__module__.split(".")[0] == "harness"


def _own_frames(error: BaseException, root: Path) -> list[str]:
    """``file:line: source`` of each frame of ``error`` outside harness, asyncio and installed
    packages (the user's code), relative to ``root``."""
    import traceback

    shown = []
    for frame in traceback.extract_tb(error.__traceback__):
        path = Path(frame.filename)
        text = str(path)
        if text.startswith(_HARNESS_DIR) or "site-packages" in text or "/lib/python" in text:
            continue
        with contextlib.suppress(ValueError):
            path = path.relative_to(root)
        shown.append(f"{path}:{frame.lineno}: {(frame.line or '').strip()}")
    return shown


def short_failure(item: pytest.Item, error: BaseException) -> str | None:
    """A failure raised through harness as a few lines: the error (type and message, wrapped),
    what caused it when a run failed, and the lines of the test's own code it passed through;
    ``None`` for a failure that did not come through harness, or in harness's own test suite
    (pytest's report stays)."""
    import textwrap

    root = item.config.rootpath
    if Path(_HARNESS_DIR).is_relative_to(root):
        return None  # harness's own tests: its frames are the ones to read
    chain = _causes(error)
    if not any(_is_harness(e) for e in chain):
        return None
    cause = chain[-1]
    through = ", ".join(type(e).__name__ for e in chain[:-1])
    head = f"{type(cause).__name__}{f' (via {through})' if through else ''}: {cause}"
    lines = [
        wrapped
        for number, line in enumerate(head.splitlines())
        for wrapped in textwrap.wrap(
            line, _WIDTH, subsequent_indent="  ", break_on_hyphens=False, break_long_words=False
        )
        or ([""] if number else [])
    ]
    if len(lines) > _MESSAGE_LINES:
        lines = [*lines[:_MESSAGE_LINES], "  ... (the rest: pytest --full-trace)"]
    frames: list[str] = []
    for each in chain:
        frames += [f for f in _own_frames(each, root) if f not in frames]
    lines += [f"at {frame}" for frame in frames[-8:]]
    lines.append("(harness's own frames are hidden: pytest --full-trace shows everything)")
    return "\n".join(lines)

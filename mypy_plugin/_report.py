"""Reporting: a verdict becomes a mypy error with its own code, its notes tied to it."""

from __future__ import annotations

import functools
import os
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mypy.errorcodes import ErrorCode
from mypy.messages import MessageBuilder
from mypy.nodes import Context

from mypy_plugin._codes import INTERNAL, code_for

if TYPE_CHECKING:  # the semantic-analysis hooks report through here without loading harness
    from harness.palette._rules import Verdict

__all__ = [
    "SURPRISE_NOTE",
    "checker_fail",
    "disabled_in_file",
    "report",
    "report_surprise",
    "reporting_surprises",
]

#: A module's own switch for the plugin's codes, in a comment plain mypy ignores (its own
#: ``# mypy: disable-error-code=...`` with a ``harness-*`` code crashes mypy without the plugin).
_SWITCH = re.compile(r'^\s*#\s*harness:\s*disable-error-code\s*=\s*"?([^"\n]*)"?', re.MULTILINE)


def disabled_in_file(path: str) -> frozenset[str]:
    """The codes a module switches off with ``# harness: disable-error-code="..."`` lines."""
    try:
        stat = os.stat(path)
    except OSError:  # a module without a file (``-c``, a stub in memory): nothing switched off
        return frozenset()
    return _switched_off(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _switched_off(path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """Read once per version of a file (keyed by its modification time and size: an edited
    file is read again, so a daemon never keeps a stale switch)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return frozenset()
    if "harness:" not in text:
        return frozenset()
    return frozenset(
        code.strip() for found in _SWITCH.findall(text) for code in found.split(",") if code.strip()
    )


#: The note under an internal surprise: what to do about it.
SURPRISE_NOTE = (
    "Please report this to the harness project with the code above; disable the check "
    'meanwhile with "# type: ignore[harness-internal]"'
)

#: How a hook reports: ``fail(message, context, code)``.
Fail = Callable[[str, Context, ErrorCode], None]


def report(msg: MessageBuilder, verdict: Verdict, context: Context) -> None:
    """File ``verdict`` at ``context``: the error, then each note under the same code.

    Each note is tied to its error (``parent_error``): mypy merges identical messages on one
    line, and a note tied to an error is kept (or dropped) with that error, never merged into
    another error's notes.
    """
    if verdict.code in disabled_in_file(msg.errors.file):
        return
    code = code_for(verdict.code)
    error = msg.fail(verdict.message, context, code=code)
    for note in verdict.notes:
        msg.note(note, context, code=code, parent_error=error)


def checker_fail(msg: MessageBuilder) -> Fail:
    """``fail`` for a type-checking hook: the error, then :data:`SURPRISE_NOTE` tied to it."""

    def fail(message: str, context: Context, code: ErrorCode) -> None:
        error = msg.fail(message, context, code=code)
        msg.note(SURPRISE_NOTE, context, code=code, parent_error=error)

    return fail


def report_surprise(fail: Fail, context: Context, where: str, error: Exception) -> None:
    """Report an internal surprise of the plugin as an error asking for a report, never a
    traceback that stops mypy. ``fail`` reports it (see :func:`checker_fail`). The hooks that
    run for every tool and thinker catch it themselves and call this (a ``try`` costs nothing
    until it catches; the context manager below costs a generator per call)."""
    last = traceback.extract_tb(error.__traceback__)[-1]
    fail(
        f"The harness plugin failed while checking {where} ({type(error).__name__} at "
        f"{last.name}:{last.lineno})",
        context,
        INTERNAL,
    )


@contextmanager
def reporting_surprises(fail: Fail, context: Context, where: str) -> Iterator[None]:
    """Turn an internal surprise of the plugin into an error asking for a report (see
    :func:`report_surprise`)."""
    try:
        yield
    except Exception as error:  # any bug of ours must not crash the user's type check
        report_surprise(fail, context, where, error)

"""Reporting: a verdict becomes a mypy error with its own code, its notes tied to it."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mypy.errorcodes import ErrorCode
from mypy.messages import MessageBuilder
from mypy.nodes import Context

from harness.palette._rules import Verdict
from mypy_plugin._codes import INTERNAL, code_for

__all__ = ["SURPRISE_NOTE", "report", "reporting_surprises"]

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


@contextmanager
def reporting_surprises(fail: Fail, context: Context, where: str) -> Iterator[None]:
    """Turn an internal surprise of the plugin into an error asking for a report, never a
    traceback that stops mypy. ``fail`` reports it (see :func:`checker_fail`)."""
    try:
        yield
    except Exception as error:  # any bug of ours must not crash the user's type check
        last = traceback.extract_tb(error.__traceback__)[-1]
        fail(
            f"The harness plugin failed while checking {where} ({type(error).__name__} at "
            f"{last.name}:{last.lineno})",
            context,
            INTERNAL,
        )

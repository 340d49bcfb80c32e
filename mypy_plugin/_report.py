"""Reporting: a verdict becomes a mypy error with its own code, its notes tied to it."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from mypy.messages import MessageBuilder
from mypy.nodes import Context

from harness._palette._rules import Verdict
from mypy_plugin._codes import INTERNAL, code_for

__all__ = ["report", "reporting_surprises"]


def report(msg: MessageBuilder, verdict: Verdict, context: Context) -> None:
    """File ``verdict`` at ``context``: the error, then each note under the same code."""
    code = code_for(verdict.code)
    msg.fail(verdict.message, context, code=code)
    for note in verdict.notes:
        msg.note(note, context, code=code)


@contextmanager
def reporting_surprises(msg: MessageBuilder, context: Context, where: str) -> Iterator[None]:
    """Turn an internal surprise of the plugin into an error asking for a report, never a
    traceback that stops mypy."""
    try:
        yield
    except Exception as error:  # any bug of ours must not crash the user's type check
        last = traceback.extract_tb(error.__traceback__)[-1]
        msg.fail(
            f"The harness plugin failed while checking {where} ({type(error).__name__} at "
            f"{last.name}:{last.lineno})",
            context,
            code=INTERNAL,
        )
        msg.note(
            "Please report this to the harness project with the code above; disable the check "
            'meanwhile with "# type: ignore[harness-internal]"',
            context,
            code=INTERNAL,
        )

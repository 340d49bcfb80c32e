"""The per-run opt-in to content in telemetry (state, failure messages): off unless asked."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["capture_content", "capturing"]

_CAPTURE: ContextVar[bool] = ContextVar("harness_observe_capture_content", default=False)


@contextlib.contextmanager
def capture_content() -> Iterator[None]:
    """Within this block, runs started here put the decision state and failure messages on
    their spans (cut to 4,096 characters). Keys never appear; server text is redacted.

    Jobs inherit the context they were submitted from, so wrap the call that starts the run::

        with harness.observe.capture_content():
            result = Triage.run_sync(note, model="embedded")
    """
    token = _CAPTURE.set(True)
    try:
        yield
    finally:
        _CAPTURE.reset(token)


def capturing() -> bool:
    """Whether the current context opted in to content."""
    return _CAPTURE.get()

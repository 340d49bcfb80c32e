"""The error of a batch that cannot start or go on."""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["BatchError"]


class BatchError(HarnessError):
    """A batch cannot start or go on: the message says what is wrong and how to fix it."""

"""The one error of fitted deciders."""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["FittedError"]


class FittedError(HarnessError):
    """A fitted decider that cannot be fitted, loaded or used: a bad or edited file, a missing
    encoder, data with one class. Its message is one line naming what is wrong and the fix; the
    commands print it and exit 2."""

"""The one error of fitted deciders."""

from __future__ import annotations

from harness.catalog import CatalogError

__all__ = ["FittedError"]


class FittedError(CatalogError):
    """A fitted decider that cannot be fitted, loaded or used: a bad or edited file, a missing
    encoder, data with one class. Its message is one line naming what is wrong and the fix; the
    commands print it and exit 2. A configuration error, as a broken catalog is: a fitted file
    is part of what a catalog entry names."""

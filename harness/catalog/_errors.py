"""The catalog's error, in a module of its own: every catalog module raises it, and the entry
and the calibration it holds import it from here (not from each other)."""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["CatalogError"]


class CatalogError(HarnessError, ValueError):
    """A catalog, an entry or a pin breaks a rule: names the entry and the rule."""

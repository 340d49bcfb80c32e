"""Hooks called with every new dispatcher, so an observer above the jobs layer (OpenTelemetry in
``harness.observe``) can subscribe to its events without the jobs layer importing it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.jobs._dispatcher import Dispatcher

__all__ = ["DISPATCHER_HOOKS"]

DISPATCHER_HOOKS: list[Callable[[Dispatcher], None]] = []
"""Called, in order, at the end of every ``Dispatcher.__init__``; add and remove freely."""

"""The process-wide switch that blocks real models over the network (inside tests).

The pytest plugin sets it around each test; :meth:`harness.jobs.Dispatcher.client_for` reads it
(through :func:`harness.replay.overridden_client`). It lives in a module of its own, importing
nothing, so the plugin, loaded in every pytest run wherever harness is installed, costs nothing
until a test asks for a model.
"""

from __future__ import annotations

__all__ = ["guard_real_models", "real_models_blocked"]

_how_to_allow: str | None = None
"""When set, real models over the network are blocked, and this says how to allow them."""


def guard_real_models(how_to_allow: str | None) -> str | None:
    """Block real models over the network (``how_to_allow`` says how to allow them), or lift
    the block with ``None``; returns the previous setting, to restore it. Process-wide, so a
    thread started inside a test is guarded too."""
    global _how_to_allow
    previous, _how_to_allow = _how_to_allow, how_to_allow
    return previous


def real_models_blocked() -> str | None:
    """How to allow real models when they are blocked, else ``None``."""
    return _how_to_allow

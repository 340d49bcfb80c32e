"""OpenTelemetry traces and metrics for runs, turns, decisions and tools (the ``otel`` extra).

Turn it on once, before the runs you want to see::

    import harness.observe

    harness.observe.enable()  # the global tracer and meter providers, or pass your own

Every dispatcher created afterwards (the one-call run API makes one per run) reports a span per
run, turn, decision, tool run and admission wait, and the metrics listed in
``docs/observability.md``. Spans carry no state, instructions, option text, digest or failure
message unless a run opts in with :func:`capture_content`; never a key.

This package needs ``opentelemetry-api`` (``pip install 'harness[otel]'``); nothing else in
harness imports it.
"""

from __future__ import annotations

try:
    import opentelemetry.metrics
    import opentelemetry.trace  # noqa: F401
except ImportError as missing:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "harness.observe needs OpenTelemetry's API: pip install 'harness[otel]' "
        "(or pip install opentelemetry-api)"
    ) from missing

from harness.observe._content import capture_content as capture_content
from harness.observe._enable import Instrumentation as Instrumentation
from harness.observe._enable import disable as disable
from harness.observe._enable import enable as enable
from harness.observe._enable import instrument as instrument

__all__ = ["Instrumentation", "capture_content", "disable", "enable", "instrument"]

"""Turning the instrumentation on and off."""

from __future__ import annotations

import threading
import weakref

from opentelemetry import metrics, trace

from harness.jobs import Dispatcher, Subscription
from harness.jobs._internal import DISPATCHER_HOOKS
from harness.observe._metrics import Instruments
from harness.observe._observer import DispatcherObserver

__all__ = ["Instrumentation", "disable", "enable", "instrument"]

_SCOPE = "harness"


def _version() -> str:
    import harness

    return harness.__version__


class Instrumentation:
    """Spans and metrics for the dispatchers it is attached to.

    ``tracer_provider`` and ``meter_provider`` default to OpenTelemetry's global ones (set by
    your SDK setup or an auto-instrumentation agent).
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.tracer = trace.get_tracer(_SCOPE, _version(), tracer_provider=tracer_provider)
        meter = metrics.get_meter(_SCOPE, _version(), meter_provider=meter_provider)
        self.instruments = Instruments.on(meter)
        self._attached: weakref.WeakKeyDictionary[Dispatcher, Subscription] = (
            weakref.WeakKeyDictionary()
        )

    def attach(self, dispatcher: Dispatcher) -> None:
        """Report the jobs of ``dispatcher`` (once; attaching again does nothing)."""
        if dispatcher in self._attached:
            return
        observer = DispatcherObserver(dispatcher, self.tracer, self.instruments)
        self._attached[dispatcher] = dispatcher.subscribe(observer.on_event)

    def detach(self, dispatcher: Dispatcher) -> None:
        """Stop reporting the jobs of ``dispatcher``."""
        subscription = self._attached.pop(dispatcher, None)
        if subscription is not None:
            subscription.cancel()


_lock = threading.Lock()
_global: Instrumentation | None = None


def enable(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> Instrumentation:
    """Report every dispatcher created from now on; returns the instrumentation.

    Calling it again replaces the previous one (with the new providers).
    """
    global _global
    with _lock:
        if _global is not None:
            _remove_hook(_global)
        _global = Instrumentation(tracer_provider=tracer_provider, meter_provider=meter_provider)
        DISPATCHER_HOOKS.append(_global.attach)
        return _global


def disable() -> None:
    """Stop reporting dispatchers created from now on (attached ones keep reporting until
    they close)."""
    global _global
    with _lock:
        if _global is not None:
            _remove_hook(_global)
        _global = None


def _remove_hook(instrumentation: Instrumentation) -> None:
    for hook in tuple(DISPATCHER_HOOKS):
        if getattr(hook, "__self__", None) is instrumentation:
            DISPATCHER_HOOKS.remove(hook)


def instrument(
    dispatcher: Dispatcher,
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
) -> Instrumentation:
    """Report the jobs of one dispatcher only."""
    instrumentation = Instrumentation(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    instrumentation.attach(dispatcher)
    return instrumentation

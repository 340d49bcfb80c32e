"""The metric instruments harness records (names in :mod:`harness.observe._names`)."""

from __future__ import annotations

import attrs
from opentelemetry.metrics import Counter, Histogram, Meter, UpDownCounter

from harness.observe import _names as n

__all__ = ["Instruments"]


@attrs.frozen
class Instruments:
    """Decision latency, tokens, cost, retries and throttles, admission wait, calls in flight."""

    duration: Histogram
    token_usage: Histogram
    input_tokens: Counter
    cost: Counter
    retries: Counter
    throttles: Counter
    admission_wait: Histogram
    in_flight: UpDownCounter

    @classmethod
    def on(cls, meter: Meter) -> Instruments:
        """Create the instruments on ``meter``."""
        return cls(
            duration=meter.create_histogram(
                n.M_DURATION, unit="s", description="Duration of each decision round trip"
            ),
            token_usage=meter.create_histogram(
                n.M_TOKEN_USAGE, unit="{token}", description="Input tokens billed per decision"
            ),
            input_tokens=meter.create_counter(
                n.M_INPUT_TOKENS,
                unit="{token}",
                description="Input tokens of decisions, billed by the server or counted by harness",
            ),
            cost=meter.create_counter(
                n.M_COST, unit="USD", description="Cost of decisions, from the catalog's prices"
            ),
            retries=meter.create_counter(
                n.M_RETRIES, unit="{retry}", description="Decision attempts run again, by status"
            ),
            throttles=meter.create_counter(
                n.M_THROTTLES, unit="{throttle}", description="HTTP 429 answers, by entry"
            ),
            admission_wait=meter.create_histogram(
                n.M_ADMISSION_WAIT, unit="s", description="Time a job waited for admission"
            ),
            in_flight=meter.create_up_down_counter(
                n.M_IN_FLIGHT, unit="{call}", description="Decision calls running, by entry"
            ),
        )

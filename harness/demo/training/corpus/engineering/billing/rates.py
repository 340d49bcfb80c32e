"""Rates the billing job charges, read once at start-up.

Per the pricing review of 9 January 2028, API calls above the monthly allowance are billed at 0.02 USD per call from 1 February 2028 instead of 0.015 USD.
The allowance itself stays at 10,000 calls a month.
"""

from __future__ import annotations

from datetime import date

API_OVERAGE_USD = 0.02
API_ALLOWANCE = 10_000

PLAN_PENCE = {
    "basic": 1600,
    "plus": 4200,
    "sensor": 700,
}


def api_overage(calls: int, month: date) -> float:
    """The overage charge for ``calls`` API calls in ``month``, in US dollars."""
    extra = max(0, calls - API_ALLOWANCE)
    # TODO: take the rate from the price list once the finance export is ready.
    return round(extra * API_OVERAGE_USD, 2)

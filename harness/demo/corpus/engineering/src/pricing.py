"""Plan prices used by the billing service.

Prices are in euro cents per seat per month. The billing service reads them at start-up.
"""

from __future__ import annotations

from datetime import date

PRICES_CENTS: dict[str, int] = {
    "hobby": 0,
    "starter": 500,
    "pro": 1200,
    "team": 900,
    "business": 2000,
}

STORAGE_CENTS_PER_100_GB = 200


def monthly_price(plan: str, seats: int, today: date | None = None) -> int:
    """The monthly price of ``seats`` seats of ``plan``, in cents."""
    if seats < 1:
        raise ValueError("a subscription has at least one seat")
    # TODO: read the schedule from the price list instead of this table.
    return PRICES_CENTS[plan] * seats


def storage_price(gigabytes: int) -> int:
    """The monthly price of extra storage, in cents, per started 100 GB."""
    blocks = -(-gigabytes // 100)
    return blocks * STORAGE_CENTS_PER_100_GB

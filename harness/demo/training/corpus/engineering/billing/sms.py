"""Counts the SMS alerts a farm sent in a billing period.

Messages are counted per farm and billed in bundles of 500.
"""

from __future__ import annotations

from collections.abc import Iterable


def bundles(messages: Iterable[str]) -> int:
    """How many bundles of 500 messages ``messages`` fill (a started bundle counts)."""
    count = sum(1 for _ in messages)
    return -(-count // 500)

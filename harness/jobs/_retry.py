"""The retry policy: which failures the dispatcher re-runs, how often, and after what pause.

The default is the official SDK's documented behaviour (``typesafe_sdk.RetryPolicy``): two
re-runs after the first attempt; HTTP 408, 429 and every 5xx re-run, and so is a round trip that
got no answer (refused, reset, timed out); the server's ``retry-after-ms`` / ``Retry-After`` hint
honoured whatever its length; otherwise ``0.5 s * 2**n`` capped at 5 s, minus up to 25 % jitter.
A catalog entry changes any of it (``[entries.retry]``, :class:`harness.catalog.RetrySettings`), a
job or call replaces it (``retry=RetryPolicy(...)``), and ``upstream_retries=N`` sets the number
of re-runs of whichever policy applies.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Final

import attrs

from harness.catalog import CatalogEntry, RetrySettings, retry_rules
from harness.errors import RetryableError, StatusError

__all__ = ["SDK_STATUSES", "RetryPolicy"]

SDK_STATUSES: Final = frozenset({408, 429, *range(500, 600)})
"""The statuses the official SDK re-runs: 408, 429 and every 5xx."""


def _statuses(value: Iterable[int]) -> frozenset[int]:
    return frozenset(value)


def _shown_statuses(statuses: frozenset[int]) -> str:
    fives = frozenset(range(500, 600))
    rest = sorted(statuses - fives) if fives <= statuses else sorted(statuses)
    shown = [str(code) for code in rest] + (["5xx"] if fives <= statuses else [])
    return "{" + ", ".join(shown) + "}"


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How the dispatcher re-runs a job that failed in a way another attempt may not.

    ``max_retries``: re-runs after the first attempt (``attempts`` is one more; 0 disables them).
    ``statuses``: the HTTP statuses re-run (any 400-599; a 401 listed here is re-run too, and
    re-raised as itself when the policy is spent). ``no_reply``: whether a round trip without an
    answer (refused, reset, client timeout) is re-run. ``backoff_base`` / ``backoff_cap`` /
    ``jitter``: without a hint the pause before re-run ``n`` (0-based) is
    ``min(cap, base * 2**n)`` times a factor drawn in ``[1 - jitter, 1]``. ``honour_hints``: a
    server's hint is the pause (else it is ignored for the backoff); ``max_hint``: the longest
    hint worth waiting for: a longer one ends the job at once, naming it (``None``: any).

    Every pause is also cut by the job's time limit: one that would reach it is not taken.
    """

    max_retries: int = 2
    statuses: frozenset[int] = attrs.field(
        default=SDK_STATUSES, converter=_statuses, repr=_shown_statuses
    )
    no_reply: bool = True
    backoff_base: float = 0.5
    backoff_cap: float = 5.0
    jitter: float = 0.25
    honour_hints: bool = True
    max_hint: float | None = None

    def __attrs_post_init__(self) -> None:
        broken = retry_rules(self)
        if broken:
            raise ValueError("RetryPolicy: " + "; ".join(broken))

    @classmethod
    def none(cls) -> RetryPolicy:
        """No re-runs at all."""
        return cls(max_retries=0)

    @classmethod
    def for_entry(cls, entry: CatalogEntry | None) -> RetryPolicy:
        """The default policy with ``entry``'s retry settings applied (the default without)."""
        if entry is None or entry.retry is None:
            return _DEFAULT
        return _DEFAULT.with_settings(entry.retry)

    def with_settings(self, settings: RetrySettings) -> RetryPolicy:
        """This policy with every setting ``settings`` gives replaced."""
        given = settings.given()
        return attrs.evolve(self, **given) if given else self  # type: ignore[arg-type]  # fields

    def with_retries(self, max_retries: int) -> RetryPolicy:
        """This policy with ``max_retries`` re-runs."""
        if max_retries == self.max_retries:
            return self
        return attrs.evolve(self, max_retries=max_retries)

    @property
    def attempts(self) -> int:
        """The most attempts a job makes: the first and its re-runs."""
        return self.max_retries + 1

    def covers(self, error: BaseException) -> bool:
        """Whether ``error`` is a failure this policy re-runs (the budget aside).

        A failure with an HTTP status is re-run when the status is listed; a retryable failure
        without one (no answer came) when ``no_reply`` is set; nothing else.
        """
        if not isinstance(error, StatusError):
            return False
        if error.status is None:
            return self.no_reply and isinstance(error, RetryableError)
        return error.status in self.statuses

    def backoff(self, retry: int, rng: random.Random) -> float:
        """The pause before re-run ``retry`` (0-based) when the server gave no hint."""
        exponential = min(self.backoff_cap, self.backoff_base * (2.0 ** min(retry, 64)))
        factor: float = 1.0 - rng.random() * self.jitter
        return exponential * factor


_DEFAULT: Final = RetryPolicy()

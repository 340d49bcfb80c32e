"""The decision client protocol every provider implements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest, DecisionResponse

__all__ = ["DecisionClient"]


class DecisionClient(Protocol):
    """Answers a decision request for one catalog entry, one round trip.

    ``decide`` returns a successful :class:`DecisionResponse`, or raises:

    * a :class:`harness.errors.RetryableError` (429, 408, 5xx, 529, no answer at all) for the
      dispatcher to re-run within the job's retry budget, carrying the server's hint;
    * :class:`harness.errors.NotAnAnswerError` for a 2xx body that is not an answer;
    * :class:`harness.errors.UnauthorizedError` / :class:`PermissionDeniedError` for 401/403;
    * :class:`harness.errors.ExternalServiceError` for anything else no retry helps (other 4xx,
      an unknown host), naming the status and the server's message.

    ``timeout`` is the time left to the job, in seconds, when it has a deadline.
    """

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse: ...

    async def aclose(self) -> None:
        """Release pooled connections and worker threads; idempotent."""

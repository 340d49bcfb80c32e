"""The decision client protocol every provider implements, and what the providers share: the
entry's limits checked before anything is asked, and one-option choices answered here with
certainty (some servers refuse them, and there is nothing to decide)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from harness.decision import Answer, Choice, ChoiceAnswer, Score
from harness.errors import InvalidInputError

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest, DecisionResponse

__all__ = ["CheckedClient", "DecisionClient", "check_limits", "local_answers"]


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


def check_limits(request: DecisionRequest, entry: CatalogEntry) -> None:
    """Refuse a question past the entry's ``max_options`` / ``max_levels`` before sending it."""
    for question_id, question in request.questions.items():
        if isinstance(question, Choice):
            count, limit, what, fix = len(question.options), entry.max_options, "option", "offer"
        elif isinstance(question, Score):
            count, limit, what, fix = len(question.levels), entry.max_levels, "level", "use"
        else:
            continue
        if limit is not None and count > limit:
            raise InvalidInputError(
                f"{what} count of question {question_id!r}",
                count,
                f"entry {entry.id!r} accepts at most {limit} {what}s a {question.kind} "
                f"(max_{what}s); {fix} fewer {what}s or pin another entry",
            )


def local_answers(request: DecisionRequest) -> dict[str, Answer]:
    """The answers needing no model: each one-option choice, its only option with certainty."""
    answers: dict[str, Answer] = {}
    for question_id, question in request.questions.items():
        if isinstance(question, Choice) and len(question.options) == 1:
            (only,) = question.options
            answers[question_id] = ChoiceAnswer(
                choice=only, probabilities={only: 1.0}, confidence=1.0
            )
    return answers


class CheckedClient:
    """The ``decide`` of every provider here: the entry's limits checked before anything is asked
    (:func:`check_limits`), then the provider's own :meth:`answer`."""

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """Answer ``request`` with ``entry``'s model; see :class:`DecisionClient`."""
        check_limits(request, entry)
        return await self.answer(request, entry, timeout)

    async def answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> DecisionResponse:
        """Answer ``request``, within the entry's limits, with ``entry``'s model (``timeout``: the
        time left to the job, when it has a deadline)."""
        raise NotImplementedError

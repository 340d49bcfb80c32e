"""The error family of harness: one base, and "may the model read this" as a property.

Every exception harness raises is a :class:`HarnessError` (most also keep the builtin base a
caller would expect: a :class:`InvalidInputError` is a ``ValueError``, a :class:`JobTimeoutError`
a ``TimeoutError``). Two properties say what a failure means to a run:

* ``llm_readable``: the decision thinker feeds the message back to the model that chose the move
  and goes on (a fact of the run: an invalid input, something not found, a guardrail, a service a
  tool uses being down). When it is false the failure ends the run: a refused API key is a fact
  about the deployment, not about the move, so :class:`UnauthorizedError` and
  :class:`PermissionDeniedError` are not readable.
* ``correctable``: whether the model could succeed by choosing differently. An uncorrectable
  failure is logged with its stack.

Failures that answered with an HTTP status carry ``status`` and the server's ``request_id``
(:class:`StatusError`). Retryable failures (:class:`RetryableError`: 429, 503, 529, 408, other
5xx, no answer) tell the dispatcher to run the job again within its retry policy; when the policy
is spent the dispatcher raises an :class:`UpstreamThrottleError` or :class:`ExternalServiceError`
naming it, so a retryable error reaches a caller only from code that runs a client directly.
Their old names (``RetryableError``, ``RateLimitedError``, ``OverloadedError``, ``TransientError``)
are aliases.

Messages never quote a decision's state or an API key.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "AuthenticationError",
    "BudgetExceededError",
    "ExternalServiceError",
    "GuardrailError",
    "HarnessError",
    "HarnessSystemError",
    "InvalidInputError",
    "JobTimeoutError",
    "LLMReadableError",
    "NotAnAnswerError",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "RateLimitedError",
    "ReplyTooDeepError",
    "ReplyTooLargeError",
    "RetryableError",
    "StatusError",
    "SyncRunInLoopError",
    "TransientError",
    "UnauthorizedError",
    "UpstreamThrottleError",
]


class HarnessError(Exception):
    """The base of every error harness raises.

    ``message`` is the text (never the state, never a key); ``llm_readable`` says whether a
    decision thinker feeds it back to the model, ``correctable`` whether the model could succeed
    by choosing differently.
    """

    llm_readable: ClassVar[bool] = False
    correctable: bool = False

    def __init__(self, message: str, *, correctable: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        if correctable is not None:
            self.correctable = correctable

    def explain_to_llm(self) -> str:
        """The one line the model reads about this failure."""
        kind = "correctable" if self.correctable else "not correctable"
        return f"{self.message} ({kind})"


class LLMReadableError(HarnessError):
    """A failure whose message is written for the model that chose the move (a fact of the run)."""

    llm_readable = True


class InvalidInputError(LLMReadableError, ValueError):
    """An input broke a rule: names the parameter, the offending value and the rule."""

    correctable = True

    def __init__(self, parameter: str, value: object, rule: str) -> None:
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"invalid {parameter} {shown}: {rule}")
        self.parameter = parameter
        self.value = value
        self.rule = rule


class NotFoundError(LLMReadableError, LookupError):
    """Something the caller named does not exist."""

    correctable = True


class GuardrailError(LLMReadableError):
    """A guardrail refused the move; another move may pass."""

    correctable = True


class StatusError(HarnessError):
    """A failure that came with an HTTP status (or none: no answer) and the server's request id."""

    def __init__(
        self, message: str, *, status: int | None = None, request_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id  # the server's request id, when it sent one


class ExternalServiceError(StatusError, LLMReadableError):
    """A service outside harness failed, refused, or answered nonsense."""

    correctable = False


class NotAnAnswerError(ExternalServiceError, ValueError):
    """A reply that is not an answer to the questions asked (never retried).

    Raised by the wire codecs; the message names what is missing or wrong and never quotes the
    state.
    """


class ReplyTooLargeError(NotAnAnswerError):
    """A reply body larger than its catalog entry's ``max_reply_bytes`` (never read further)."""


class ReplyTooDeepError(NotAnAnswerError):
    """A reply body nested deeper than its catalog entry's ``max_reply_depth``."""


class UpstreamThrottleError(ExternalServiceError):
    """The upstream kept throttling until the job's retry policy was spent."""


class AuthenticationError(StatusError):
    """The service refused the credentials. Not readable by a model: it ends the run."""


class UnauthorizedError(AuthenticationError):
    """The service refused the credentials (HTTP 401): check the entry's ``api_key_env``."""


class PermissionDeniedError(AuthenticationError):
    """The credentials are valid but not allowed this (HTTP 403)."""


class BudgetExceededError(HarnessError):
    """A decision call would pass a budget (decisions, input tokens or cost), so it was refused
    before the wire and nothing was spent. Not readable by a model: it ends the run, whose
    record so far is kept.

    ``scope`` names the budget (``"run"`` or ``"workflow <id>"``), ``kind`` the limit
    (``"decisions"``, ``"input_tokens"``, ``"cost"``), ``limit`` its value, ``spent`` what was
    charged before this call and ``asked`` what this call would add.
    """

    def __init__(
        self, message: str, *, scope: str, kind: str, limit: float, spent: float, asked: float
    ) -> None:
        super().__init__(message)
        self.scope = scope
        self.kind = kind
        self.limit = limit
        self.spent = spent
        self.asked = asked


class SyncRunInLoopError(HarnessError, RuntimeError):
    """``run_sync`` was called inside a running event loop, which it would block: the message
    names the ``await`` form to use instead."""


class HarnessSystemError(HarnessError):
    """harness itself is in a state it cannot go on from (not readable by a model)."""


class JobTimeoutError(LLMReadableError, TimeoutError):
    """A job ran past its time limit (waiting for admission does not count); ``job_id`` names it."""

    correctable = False

    def __init__(self, message: str, *, job_id: str | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id


class RetryableError(StatusError):
    """Run the job again after a pause, within its retry policy. Never shown to a model.

    ``retry_after`` is the server's hint in seconds, when it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message, status=status, request_id=request_id)
        self.retry_after = retry_after


class RateLimitedError(RetryableError):
    """The server asked to slow down (HTTP 429)."""


class OverloadedError(RetryableError):
    """The server is overloaded or loading (HTTP 503, 529)."""


class TransientError(RetryableError):
    """A failure that another attempt may not meet again (408, other 5xx, no answer at all)."""

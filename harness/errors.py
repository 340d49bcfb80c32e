"""The error family of harness.

Two kinds of failure cross a tool's boundary:

* **LLM-readable errors** (:class:`LLMReadableError` and its members) are facts of a run: the
  decision thinker feeds their message back to the model and goes on. A *correctable* one says
  what the caller could do differently (an invalid input, something not found, a guardrail); an
  *uncorrectable* one says the world is in the way (a service down, no authorisation).
* **Retry signals** (:class:`RetrySignal` and its members) tell the dispatcher to re-run a job
  within its upstream retry budget. They are never shown to a model: when the budget is spent the
  dispatcher turns the last signal into an :class:`UpstreamThrottleError` or
  :class:`ExternalServiceError` naming the budget.

Anything else raised by a tool is a system failure and fails the run.

Messages never quote a decision's state or an API key.
"""

from __future__ import annotations

__all__ = [
    "ExternalServiceError",
    "GuardrailError",
    "HarnessSystemError",
    "InvalidInputError",
    "LLMReadableError",
    "NotAnAnswerError",
    "NotFoundError",
    "OverloadSignal",
    "PermissionDeniedError",
    "RateLimitSignal",
    "RetrySignal",
    "TransientSignal",
    "UnauthorizedError",
    "UpstreamThrottleError",
]


class LLMReadableError(Exception):
    """A failure whose message is written for the model that chose the move.

    ``correctable`` says whether the model could succeed by choosing differently (another input,
    another tool); an uncorrectable failure is reported with its stack.
    """

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


class ExternalServiceError(LLMReadableError):
    """A service outside harness failed, refused, or answered nonsense."""

    correctable = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.request_id: str | None = None  # the server's request id, when it sent one


class NotAnAnswerError(ExternalServiceError, ValueError):
    """A reply that is not an answer to the questions asked (never retried).

    Raised by the wire codecs; the message names what is missing or wrong and never quotes the
    state.
    """


class UnauthorizedError(ExternalServiceError):
    """The service refused the credentials (HTTP 401): check the entry's ``api_key_env``."""


class PermissionDeniedError(ExternalServiceError):
    """The credentials are valid but not allowed this (HTTP 403)."""


class UpstreamThrottleError(ExternalServiceError):
    """The upstream kept throttling until the job's retry budget was spent."""


class HarnessSystemError(LLMReadableError):
    """harness itself is in a state it cannot go on from."""

    correctable = False


class RetrySignal(Exception):
    """Re-run the job after a pause, within its upstream retry budget. Never shown to a model.

    ``retry_after`` is the server's hint in seconds, when it gave one.
    """

    def __init__(
        self, message: str, *, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.request_id: str | None = None  # the server's request id, when it sent one


class RateLimitSignal(RetrySignal):
    """The server asked to slow down (HTTP 429)."""


class OverloadSignal(RetrySignal):
    """The server is overloaded or loading (HTTP 503, 529)."""


class TransientSignal(RetrySignal):
    """A failure that a re-run may not meet again (408, other 5xx, no answer at all)."""

"""The status classification cases both HTTP decision clients must meet (ARCHITECTURE.md 4)."""

from __future__ import annotations

import attrs

from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.errors import (
    ExternalServiceError,
    NotAnAnswerError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    RetryableError,
    StatusError,
    TransientError,
    UnauthorizedError,
)
from harness.testing._faults import ErrorShape, Fault

CANARY_KEY = "sk-canary-3f9d1c7a5e2b48e0"
"""A key value that must never appear in a message or a log record."""

STATE_SECRET = "state-marker-91c2"
"""A value inside the decision state that must never appear in a message."""


def sample_request() -> DecisionRequest:
    """A request asking one question of each shape."""
    return DecisionRequest(
        {"ticket": f"please refund my order {STATE_SECRET}"},
        {
            "team": Choice("Which team handles the ticket?", {"billing": "Invoices", "tech": None}),
            "urgent": Noul("Is the ticket urgent?", when_true="answer today"),
            "anger": Score("How angry is the customer?", ["calm", "annoyed", "furious"]),
        },
    )


@attrs.frozen
class StatusCase:
    """A fault the server injects and what the client must raise for it."""

    name: str
    fault: Fault
    error: type[Exception]
    fragments: tuple[str, ...]
    status: int | None = None
    retry_after: tuple[float, float] | None = None
    """The inclusive range the signal's hint must fall in; None: no hint."""


SHAPES: tuple[ErrorShape, ...] = (
    "error",
    "error_object",
    "message",
    "detail",
    "detail_object",
    "detail_list",
)

CASES: tuple[StatusCase, ...] = (
    StatusCase(
        "408",
        Fault.request_timeout("took too long"),
        TransientError,
        ("HTTP 408", "took too long"),
        408,
    ),
    StatusCase(
        "429-seconds", Fault.rate_limited(7), RateLimitedError, ("HTTP 429",), 429, (7.0, 7.0)
    ),
    StatusCase(
        "429-http-date",
        Fault.rate_limited(30, as_date=True),
        RateLimitedError,
        ("HTTP 429",),
        429,
        (27.0, 30.0),
    ),
    StatusCase(
        "429-retry-after-ms-wins",
        Fault.rate_limited(30, retry_after_ms=250),
        RateLimitedError,
        ("HTTP 429",),
        429,
        (0.25, 0.25),
    ),
    StatusCase(
        "429-no-hint",
        Fault.rate_limited(None),
        RateLimitedError,
        ("HTTP 429", "rate limit reached"),
        429,
    ),
    StatusCase(
        "500", Fault.server_error("boom"), TransientError, ("answered HTTP 500: boom",), 500
    ),
    StatusCase("502", Fault.http(502, "bad gateway"), TransientError, ("HTTP 502",), 502),
    StatusCase("504", Fault.http(504, "upstream slow"), TransientError, ("HTTP 504",), 504),
    StatusCase(
        "503", Fault.unavailable("loading"), OverloadedError, ("answered HTTP 503: loading",), 503
    ),
    StatusCase(
        "503-with-hint",
        Fault.http(503, "loading", headers={"Retry-After": "2"}),
        OverloadedError,
        ("HTTP 503",),
        503,
        (2.0, 2.0),
    ),
    StatusCase("529", Fault.overloaded("too busy"), OverloadedError, ("HTTP 529", "too busy"), 529),
    StatusCase(
        "401",
        Fault.unauthorized("invalid API key"),
        UnauthorizedError,
        ("HTTP 401", "invalid API key", "api_key_env"),
        401,
    ),
    StatusCase(
        "403",
        Fault.forbidden("not allowed"),
        PermissionDeniedError,
        ("HTTP 403", "not allowed"),
        403,
    ),
    StatusCase(
        "404",
        Fault.http(404, "unknown model jev-9"),
        ExternalServiceError,
        ("HTTP 404", "unknown model jev-9", "wire_model_id"),
        404,
    ),
    *(
        StatusCase(
            f"400-{shape}",
            Fault.bad_request(f"questions are malformed ({shape})", shape=shape),
            ExternalServiceError,
            ("HTTP 400", f"questions are malformed ({shape})"),
            400,
        )
        for shape in SHAPES
    ),
    StatusCase(
        "422-detail-list",
        Fault.bad_request("field required", shape="detail_list", status=422),
        ExternalServiceError,
        ("HTTP 422", "body.questions: field required"),
        422,
    ),
    StatusCase(
        "400-raw-body",
        Fault("reply", 400, b"x" * 5000, content_type="text/plain"),
        ExternalServiceError,
        ("HTTP 400", "xxx..."),
        400,
    ),
    StatusCase(
        "connection-reset",
        Fault.connection_reset(),
        TransientError,
        ("could not be reached",),
        None,
    ),
    StatusCase(
        "200-not-json",
        Fault.not_json(),
        NotAnAnswerError,
        ("not an answer", "not JSON"),
        200,
    ),
    StatusCase(
        "200-json-not-an-answer",
        Fault.not_an_answer({"ok": True}),
        NotAnAnswerError,
        ("not an answer",),
        200,
    ),
)
"""Every status class; ``error`` is the exact class the client raises."""


def assert_classified(error: BaseException, case: StatusCase, url: str) -> None:
    """``error`` is what ``case`` says: the exact class, its status, hint and message."""
    assert type(error) is case.error, f"{case.name}: got {type(error).__name__}: {error}"
    message = str(error)
    for fragment in case.fragments:
        assert fragment in message, f"{case.name}: {fragment!r} not in {message!r}"
    assert url in message, f"{case.name}: the URL is not named in {message!r}"
    assert STATE_SECRET not in message
    assert len(message) < 600
    if isinstance(error, RetryableError):
        assert error.status == case.status
        if case.retry_after is None:
            assert error.retry_after is None
        else:
            low, high = case.retry_after
            assert error.retry_after is not None
            assert low <= error.retry_after <= high
    else:
        assert isinstance(error, StatusError)
        assert error.status == case.status
        assert not error.correctable

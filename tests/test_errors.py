"""The error family: which failures a model reads, which it may correct, and what it is told."""

from __future__ import annotations

import pytest

from harness.errors import (
    ExternalServiceError,
    GuardrailError,
    HarnessSystemError,
    InvalidInputError,
    LLMReadableError,
    NotAnAnswerError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitedError,
    RetryableError,
    TransientError,
    UnauthorizedError,
    UpstreamThrottleError,
)


@pytest.mark.parametrize(
    ("error", "correctable"),
    [
        (InvalidInputError("count", 3, "must be even"), True),
        (NotFoundError("no such file: notes.txt"), True),
        (GuardrailError("the guardrail refused a payment above 100 EUR"), True),
        (ExternalServiceError("the mail server is down"), False),
        (NotAnAnswerError("answer 'q' is missing"), False),
        (UnauthorizedError("HTTP 401"), False),
        (PermissionDeniedError("HTTP 403"), False),
        (UpstreamThrottleError("gave up"), False),
        (HarnessSystemError("the record is corrupt"), False),
    ],
)
def test_each_member_says_whether_the_model_could_correct_it(
    error: LLMReadableError, correctable: bool
) -> None:
    assert error.correctable is correctable
    explained = error.explain_to_llm()
    assert explained.startswith(error.message)
    assert explained.endswith("(correctable)" if correctable else "(not correctable)")


def test_an_invalid_input_names_the_parameter_the_value_and_the_rule() -> None:
    error = InvalidInputError("count", 3, "must be even")
    assert (error.parameter, error.value, error.rule) == ("count", 3, "must be even")
    assert error.message == "invalid count 3: must be even"
    assert isinstance(error, ValueError)


def test_a_long_value_is_cut_in_the_message() -> None:
    error = InvalidInputError("text", "x" * 500, "too long")
    assert len(error.message) < 120
    assert error.message.endswith("...: too long")


def test_the_correctable_flag_can_be_set_per_instance() -> None:
    assert LLMReadableError("try another file", correctable=True).correctable
    assert not LLMReadableError("gone for good").correctable


@pytest.mark.parametrize("signal", [RateLimitedError, OverloadedError, TransientError])
def test_retry_signals_are_never_readable_errors(signal: type[RetryableError]) -> None:
    raised = signal("HTTP 503", retry_after=1.5, status=503)
    assert not isinstance(raised, LLMReadableError)
    assert (raised.retry_after, raised.status, raised.request_id) == (1.5, 503, None)


def test_every_error_harness_defines_is_a_harness_error() -> None:
    import importlib
    import pkgutil

    import harness
    from harness.errors import HarnessError

    found: list[str] = []
    for module in pkgutil.walk_packages(harness.__path__, "harness."):
        if module.name.endswith("__main__") or module.name.startswith("harness.demo.corpus"):
            continue
        if module.name.startswith("harness.testing"):
            continue  # test support: its violations are AssertionErrors, for pytest's reports
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__.startswith("harness")
                and not value.__name__.startswith("_")  # private signals never leave their module
            ):
                found.append(value.__qualname__)
                assert issubclass(value, HarnessError), f"{value.__module__}.{value.__qualname__}"
    assert "JobTimeoutError" in found
    assert "CatalogError" in found


def test_a_refused_key_is_not_a_fact_of_the_run_but_a_tool_failure_is() -> None:
    from harness.errors import HarnessError, JobTimeoutError

    assert not UnauthorizedError("HTTP 401", status=401).llm_readable
    assert not PermissionDeniedError("HTTP 403", status=403).llm_readable
    assert not isinstance(UnauthorizedError("x"), LLMReadableError)
    assert ExternalServiceError("down", status=502).llm_readable
    assert JobTimeoutError("late").llm_readable
    assert isinstance(JobTimeoutError("late"), TimeoutError)
    assert not HarnessSystemError("broken").llm_readable
    assert issubclass(RetryableError, HarnessError)


def test_status_errors_carry_the_status_and_the_request_id() -> None:
    from harness.errors import StatusError

    error = UnauthorizedError("refused", status=401, request_id="req-1")
    assert isinstance(error, StatusError)
    assert (error.status, error.request_id) == (401, "req-1")
    signal = RateLimitedError("slow down", retry_after=2.0, status=429, request_id="req-2")
    assert (signal.status, signal.request_id, signal.retry_after) == (429, "req-2", 2.0)

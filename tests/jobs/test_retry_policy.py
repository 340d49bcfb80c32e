"""The retry policy: the SDK's defaults, set per catalog entry (TOML) and per call, applied by the
dispatcher; ``upstream_retries`` keeps working as the number of re-runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import typesafe_sdk

from harness.catalog import CatalogEntry, CatalogError, RetrySettings, load_catalog
from harness.errors import (
    ExternalServiceError,
    NotAnAnswerError,
    OverloadedError,
    RateLimitedError,
    StatusError,
    TransientError,
    UnauthorizedError,
    UpstreamThrottleError,
)
from harness.jobs import (
    DEFAULT_UPSTREAM_RETRIES,
    SDK_STATUSES,
    Dispatcher,
    Job,
    JobContext,
    Pacing,
    RetryPolicy,
)
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST, RecordedPacing, catalog_of


def test_the_default_is_the_official_sdks() -> None:
    sdk = typesafe_sdk.RetryPolicy()
    ours = RetryPolicy()
    assert ours.max_retries == sdk.max_retries == DEFAULT_UPSTREAM_RETRIES == 2
    assert ours.attempts == 3
    assert ours.backoff_base == sdk.backoff_initial
    assert ours.backoff_cap == sdk.backoff_max
    assert ours.jitter == sdk.backoff_jitter
    assert ours.statuses == frozenset(sdk.http_statuses) == SDK_STATUSES
    assert ours.honour_hints is sdk.respect_retry_after is True
    assert ours.no_reply is sdk.api_connection_error is sdk.api_timeout_error is True
    assert ours.max_hint is None  # the SDK honours a hint of any length
    assert "5xx" in repr(ours)


def test_backoff_doubles_from_the_base_up_to_the_cap_minus_up_to_the_jitter() -> None:
    policy = RetryPolicy()
    rng = random.Random(11)
    for retry, full in enumerate([0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]):
        for _ in range(50):
            pause = policy.backoff(retry, rng)
            assert full * 0.75 <= pause <= full
    assert RetryPolicy(jitter=0.0).backoff(2, rng) == 2.0
    assert RetryPolicy(backoff_cap=0.0).backoff(5, rng) == 0.0
    assert RetryPolicy().backoff(10_000, rng) <= 5.0  # no overflow far out


def test_which_failures_a_policy_covers() -> None:
    policy = RetryPolicy()
    assert policy.covers(RateLimitedError("429", status=429))
    assert policy.covers(OverloadedError("529", status=529))
    assert policy.covers(TransientError("no answer"))  # no status: nothing came back
    assert not RetryPolicy(no_reply=False).covers(TransientError("no answer"))
    assert not policy.covers(UnauthorizedError("401", status=401))
    assert not policy.covers(ExternalServiceError("409", status=409))
    assert RetryPolicy(statuses={409}).covers(ExternalServiceError("409", status=409))
    assert not RetryPolicy(statuses={429}).covers(OverloadedError("503", status=503))
    assert not policy.covers(NotAnAnswerError("not an answer", status=200))
    assert not policy.covers(ValueError("a bug"))
    assert not policy.covers(StatusError("no status, not retryable"))


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"max_retries": -1}, "max_retries must be an integer >= 0"),
        ({"statuses": {200}}, "only HTTP statuses 400-599"),
        ({"backoff_base": float("inf")}, "backoff_base must be a finite number"),
        ({"backoff_cap": -1.0}, "backoff_cap must be a finite number"),
        ({"jitter": 1.5}, "jitter must be a fraction between 0 and 1"),
        ({"max_hint": -2.0}, "max_hint must be >= 0 seconds"),
    ],
)
def test_broken_settings_are_refused_naming_the_rule(
    settings: dict[str, object], says: str
) -> None:
    with pytest.raises(ValueError, match=says):
        RetryPolicy(**settings)  # type: ignore[arg-type]  # each a field of the policy
    with pytest.raises(CatalogError, match=says):
        RetrySettings(**settings)  # type: ignore[arg-type]  # the same fields, optional


CATALOG = """
[pins]
decision = "jev"

[[entries]]
id = "jev"
provider = "systemone"
wire_model_id = "jev-latest"
base_url = "http://127.0.0.1:9"
max_context_tokens = 1000
max_concurrent = 2

[entries.retry]
max_retries = 4
statuses = [429, 503]
backoff_base = 0.25
backoff_cap = 2
jitter = 0.1
no_reply = false
honour_hints = true
max_hint = 20
"""


def test_an_entry_reads_its_retry_settings_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG, encoding="utf-8")
    entry = load_catalog(path).entry("jev")
    assert entry.retry == RetrySettings(
        max_retries=4,
        statuses=frozenset({429, 503}),
        backoff_base=0.25,
        backoff_cap=2.0,
        jitter=0.1,
        no_reply=False,
        honour_hints=True,
        max_hint=20.0,
    )
    policy = RetryPolicy.for_entry(entry)
    assert policy == RetryPolicy(
        max_retries=4,
        statuses={429, 503},
        backoff_base=0.25,
        backoff_cap=2.0,
        jitter=0.1,
        no_reply=False,
        max_hint=20.0,
    )
    partial = path.read_text().split("[entries.retry]")[0] + "[entries.retry]\njitter = 0.5\n"
    path.write_text(partial, encoding="utf-8")
    assert RetryPolicy.for_entry(load_catalog(path).entry("jev")) == RetryPolicy(jitter=0.5)


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ("retries = 3", "unknown retry key(s) retries; known retry keys: backoff_base"),
        ("max_retries = 1.5", "retry.max_retries has the wrong type (float); it takes a int"),
        ('statuses = ["429"]', "retry.statuses has the wrong type (list)"),
        ('no_reply = "yes"', "retry.no_reply has the wrong type (str); it takes a bool"),
        ("jitter = 3", "jitter must be a fraction between 0 and 1"),
        ("statuses = [200]", "only HTTP statuses 400-599"),
    ],
)
def test_a_broken_retry_table_fails_at_load_naming_the_entry(
    tmp_path: Path, table: str, says: str
) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(CATALOG.split("[entries.retry]")[0] + "[entries.retry]\n" + table + "\n")
    with pytest.raises(CatalogError, match="catalog entry 'jev'") as caught:
        load_catalog(path)
    assert says in str(caught.value)
    assert str(path) in str(caught.value)


async def _call_against(
    faults: list[Fault],
    *,
    entry_retry: RetrySettings | None = None,
    pacing: Pacing | None = None,
    **call: object,
) -> tuple[DecisionCall, int, BaseException | None]:
    async with FakeSystemOneServer() as server:
        for fault in faults:
            server.fail_next(fault)
        entry = server.entry(retry=entry_retry)
        used = pacing if pacing is not None else RecordedPacing()
        async with Dispatcher(catalog_of(entry), pacing=used) as dispatcher:
            job = DecisionCall(Workflow(), REQUEST, **call)  # type: ignore[arg-type]
            failure: BaseException | None = None
            try:
                assert (await dispatcher.run(job)).success
            except Exception as error:
                failure = error
        return job, server.requests, failure


async def test_the_entrys_policy_applies_to_its_calls() -> None:
    three = [Fault.unavailable()] * 3
    _, requests, failure = await _call_against(three, entry_retry=RetrySettings(max_retries=1))
    assert isinstance(failure, UpstreamThrottleError)
    assert "retry budget (1) was spent" in failure.message
    assert requests == 2
    _, requests, failure = await _call_against(three, entry_retry=RetrySettings(max_retries=3))
    assert failure is None
    assert requests == 4


async def test_a_calls_policy_replaces_the_entrys() -> None:
    faults = [Fault.unavailable()] * 3
    _, requests, failure = await _call_against(
        faults, entry_retry=RetrySettings(max_retries=0), retry=RetryPolicy(max_retries=5)
    )
    assert failure is None
    assert requests == 4


async def test_upstream_retries_sets_the_count_of_whichever_policy_applies() -> None:
    only_429 = RetrySettings(statuses=frozenset({429}))
    faults = [Fault.rate_limited(0)] * 4
    _, requests, failure = await _call_against(faults, entry_retry=only_429, upstream_retries=5)
    assert failure is None
    assert requests == 5
    # The entry's statuses still hold: a 503 is not re-run, whatever the count.
    _, requests, failure = await _call_against(
        [Fault.unavailable()], entry_retry=only_429, upstream_retries=5
    )
    assert isinstance(failure, UpstreamThrottleError)
    assert "the job's retry policy does not re-run it" in failure.message
    assert requests == 1
    # The default passed on explicitly means "the policy's count", not 2.
    job, requests, failure = await _call_against(
        [Fault.unavailable()] * 4,
        entry_retry=RetrySettings(max_retries=4),
        upstream_retries=DEFAULT_UPSTREAM_RETRIES,
    )
    assert failure is None
    assert requests == 5
    assert job.upstream_retries == DEFAULT_UPSTREAM_RETRIES


async def test_a_status_added_to_the_policy_is_re_run_and_re_raised_as_itself_when_spent() -> None:
    conflict = Fault.http(409, "try again later")
    _, requests, failure = await _call_against(
        [conflict, conflict], retry=RetryPolicy(statuses={409}, max_retries=1)
    )
    assert isinstance(failure, ExternalServiceError)
    assert failure.status == 409
    assert requests == 2
    _, requests, failure = await _call_against([conflict])  # the default does not
    assert isinstance(failure, ExternalServiceError)
    assert requests == 1
    # An authentication failure listed by the user stays one (it still ends a run).
    refused = Fault.unauthorized()
    _, requests, failure = await _call_against(
        [refused, refused], retry=RetryPolicy(statuses={401}, max_retries=1)
    )
    assert isinstance(failure, UnauthorizedError)
    assert requests == 2


async def test_a_hint_longer_than_max_hint_ends_the_call_at_once_naming_both() -> None:
    pacing = RecordedPacing()
    _, requests, failure = await _call_against(
        [Fault.rate_limited(30)], pacing=pacing, retry=RetryPolicy(max_hint=10.0)
    )
    assert isinstance(failure, UpstreamThrottleError)
    assert "a pause of 30 s, longer than the retry policy's max_hint of 10 s" in failure.message
    assert pacing.slept == []
    assert requests == 1


async def test_hints_can_be_ignored_for_the_backoff() -> None:
    pacing = RecordedPacing()
    policy = RetryPolicy(honour_hints=False, backoff_base=0.1, jitter=0.0)
    hinted = [Fault.rate_limited(30)]
    _, requests, failure = await _call_against(hinted, pacing=pacing, retry=policy)
    assert failure is None
    assert pacing.slept == [0.1]
    assert requests == 2


async def test_a_no_reply_failure_follows_no_reply() -> None:
    reset = Fault.connection_reset()
    _, requests, failure = await _call_against([reset], retry=RetryPolicy(no_reply=False))
    assert isinstance(failure, ExternalServiceError)
    assert "does not re-run it" in failure.message
    assert requests == 1


async def test_pacing_overrides_still_replace_the_backoff_for_every_job() -> None:
    pacing = RecordedPacing(base=0.01, cap=0.01, jitter=0.0)
    _, _, failure = await _call_against([Fault.unavailable(), Fault.unavailable()], pacing=pacing)
    assert failure is None
    assert pacing.slept == [0.01, 0.01]


class _Parent(Job[str]):
    """Asks one decision as a child job, the way a thinker does."""

    async def run(self, context: JobContext) -> str:
        child = DecisionCall(context, REQUEST, upstream_retries=context.upstream_retries)
        self.child = child
        await context.run(child)
        return "answered"


async def test_a_child_inherits_its_parents_policy_and_a_parent_never_re_runs_what_it_settled() -> (
    None
):
    policy = RetryPolicy(max_retries=1, statuses={503, 409})
    async with FakeSystemOneServer() as server:
        server.fail_next(Fault.unavailable(), times=2)
        async with Dispatcher(catalog_of(server.entry()), pacing=RecordedPacing()) as dispatcher:
            parent = _Parent(Workflow(), retry=policy)
            with pytest.raises(UpstreamThrottleError, match=r"retry budget \(1\)"):
                await dispatcher.run(parent)
    assert parent.child.retry is policy
    assert server.requests == 2  # the child's two attempts; the parent did not run it again


def test_a_policy_is_checked_when_a_job_is_made() -> None:
    with pytest.raises(TypeError, match="retry must be a RetryPolicy"):
        DecisionCall(Workflow(), REQUEST, retry=3)  # type: ignore[arg-type]  # the point
    with pytest.raises(ValueError, match="upstream_retries must be >= 0"):
        DecisionCall(Workflow(), REQUEST, upstream_retries=-1)
    assert RetryPolicy.none().attempts == 1


def test_an_entry_without_settings_keeps_the_default() -> None:
    entry = CatalogEntry(
        id="e", provider="fake", wire_model_id="m", max_context_tokens=10, max_concurrent=1
    )
    assert RetryPolicy.for_entry(entry) == RetryPolicy()
    assert RetryPolicy.for_entry(None) == RetryPolicy()


def test_an_entry_refuses_retry_settings_of_the_wrong_type() -> None:
    with pytest.raises(CatalogError, match=r"retry must be a RetrySettings, not dict"):
        CatalogEntry(
            id="e",
            provider="fake",
            wire_model_id="m",
            max_context_tokens=10,
            max_concurrent=1,
            retry={"max_retries": 1},  # type: ignore[arg-type]  # the point of the test
        )

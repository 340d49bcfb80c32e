"""The hypothesis plumbing of the property checker: running thinkers under drawn inputs,
policies and entries, and raising what the rules find.

The rules themselves (what a run must do, re-derived from its inputs and its wire, never from
the thinker's bookkeeping) live in ``_derived``, ``_request_rules`` and ``_run_rules``;
:func:`assert_invariants` runs a thinker (twice: the second run must repeat the first byte for
byte) and raises :class:`InvariantViolation`; :func:`check_thinker` does it under hypothesis for
a thinker factory and a strategy of inputs (policies and the fake entry's ``max_options``
drawn), with every run bounded in decisions and in time.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import hypothesis
import hypothesis.errors
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.database import ExampleDatabase

from harness.artifacts import Artifact
from harness.decision import Answer, DecisionRequest
from harness.decision import systemone as systemone_codec
from harness.providers import Policy
from harness.testing._derived import STATE_KEYS, given_with, takes
from harness.testing._policy import RandomPolicy
from harness.testing._reproducible import DEFAULT_RUN_TIMEOUT, reproducibility_problems
from harness.testing._run_facts import Hang, RunReport
from harness.testing._run_report import ENTRY, report_run
from harness.testing._run_rules import invariant_problems, violation_of
from harness.testing._violation import InvariantKind, InvariantViolation, Problem
from harness.testing._wall_clock import RunHung, guarded
from harness.testing.strategies import max_options as drawn_max_options
from harness.testing.strategies import policies as drawn_policies
from harness.thinker import DecisionThinker
from harness.tools import Identifiable, Workflow

__all__ = [
    "STATE_KEYS",
    "InvariantViolation",
    "assert_invariants",
    "check_thinker",
    "given_with",
    "invariant_problems",
    "replay_problems",
    "takes",
]

K = InvariantKind

_FLAKY_RUNS: Final = 4


class _Replay:
    """A policy answering request n with what the first run's model answered to request n, as
    long as request n is byte for byte the first run's (else it refuses, naming the request)."""

    def __init__(self, first: RunReport) -> None:
        self.first = first
        self.asked = 0

    def __call__(self, request: DecisionRequest) -> Mapping[str, Answer]:
        number = self.asked
        self.asked += 1
        body = systemone_codec.encode_body(request, ENTRY.wire_model_id)
        if number >= len(self.first.answers) or body != self.first.bodies[number]:
            raise _Diverged(
                f"request {number + 1} is not the first run's request {number + 1}: the replay "
                "has no answer for it"
            )
        return self.first.answers[number]


class _Diverged(Exception):
    """The replayed run asked something the first run did not."""


def replay_problems(first: RunReport, second: RunReport) -> tuple[list[Problem], str]:
    """Whether ``second`` (the same example, answered by replaying ``first``'s answers) gave
    the same bytes: problems and the diff of the first part that differs."""
    if second.hang is not None:
        problem = Problem(
            K.HANG,
            f"run 2 of the same example did not end within {second.hang.seconds:g} s: "
            f"{second.hang.during} did not return, though run 1 did",
        )
        return [problem], f"where run 2 hung:\n{second.hang.stack}"
    return reproducibility_problems(first.fingerprint(), second.fingerprint())


async def assert_invariants(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    *,
    expected_errors: tuple[type[BaseException], ...] = (),
    again: DecisionThinker[Any, Any] | None = None,  # any thinker
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT,
    max_options: int | None = None,
) -> RunReport:
    """Run ``thinker`` on ``input`` (dispatcher, fake model answering by ``policy``) and raise
    :class:`InvariantViolation` if the run broke an invariant; then run the example again
    (on ``again``, a fresh thinker, else on ``thinker`` itself) with the same answers and raise
    if it did not repeat byte for byte. Returns the first run's report.

    Runs are bounded at ``max_turns + 1`` decisions and ``run_timeout`` seconds each (waiting
    code is cancelled; blocking code is interrupted in the main thread).
    """
    first = await _guarded_record(thinker, input, policy, run_timeout, max_options)
    problems = invariant_problems(first, expected_errors=expected_errors)
    if problems:
        raise violation_of(first, problems)
    second = await _guarded_record(
        again or thinker, input, _Replay(first), run_timeout, max_options
    )
    problems, details = replay_problems(first, second)
    if problems:
        raise InvariantViolation(problems, first, details=details)
    return first


async def _guarded_record(
    thinker: DecisionThinker[Any, Any],  # any thinker
    input: Artifact,
    policy: Policy,
    run_timeout: float | None,
    max_options: int | None,
) -> RunReport:
    if run_timeout is None:
        return await report_run(thinker, input, policy, max_options=max_options)
    try:
        with guarded(run_timeout):
            return await report_run(
                thinker, input, policy, run_timeout=run_timeout, max_options=max_options
            )
    except RunHung:
        return _blocked(thinker, input, run_timeout)


def _blocked(thinker: DecisionThinker[Any, Any], input: Artifact, seconds: float) -> RunReport:
    """The report of a run interrupted outside its own handling (it blocked while ending)."""
    return RunReport(
        thinker=thinker,
        input=input,
        requests=(),
        answers=(),
        bodies=(),
        turns=thinker.turns(),
        obs_turns=None,
        world=tuple(thinker.registry.world()),
        answer=None,
        error=None,
        hang=Hang(seconds, "the run (blocking while it shut down)", ""),
    )


def _run(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    input: Artifact,
    policy: Policy,
    run_timeout: float,
    spare: int | None = None,
) -> RunReport:
    """One run of a fresh thinker in its own event loop, bounded in decisions and time, its
    fake entry stating ``max_options``: ``spare`` more than the thinker's tools plus finish
    (``None``: none stated)."""
    thinker = factory(Workflow())
    max_options = None if spare is None else len(thinker.palette) + 1 + spare
    try:
        with guarded(run_timeout):
            return asyncio.run(
                report_run(thinker, input, policy, run_timeout=run_timeout, max_options=max_options)
            )
    except RunHung:
        return _blocked(thinker, input, run_timeout)


class _KeyedDatabase(ExampleDatabase):
    """Another example database seen under a prefix: each key is the prefix plus hypothesis's
    own key, so tests with the same source (one per thinker factory) keep apart entries."""

    def __init__(self, inner: ExampleDatabase, prefix: bytes) -> None:
        super().__init__()
        self._inner = inner
        self._prefix = prefix

    def save(self, key: bytes, value: bytes) -> None:
        """Save ``value`` under the prefixed ``key``."""
        self._inner.save(self._prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        """The values saved under the prefixed ``key``."""
        return self._inner.fetch(self._prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        """Delete ``value`` from the prefixed ``key``."""
        self._inner.delete(self._prefix + key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        """Move ``value`` between the prefixed keys."""
        self._inner.move(self._prefix + src, self._prefix + dest, value)

    def __repr__(self) -> str:
        return f"_KeyedDatabase({self._inner!r}, {self._prefix.hex()[:12]}...)"


def _factory_key(factory: Callable[..., object]) -> bytes:
    """What keeps one factory's saved examples apart from another's: a digest of its module
    and qualified name (two factories with one ``__qualname__`` in two modules differ)."""
    module = getattr(factory, "__module__", None) or type(factory).__module__
    name = getattr(factory, "__qualname__", None) or type(factory).__qualname__
    return hashlib.sha256(f"{module}:{name}".encode()).digest()[:16]


class _Unshrinkable(BaseException):
    """Carries a violation out of hypothesis without shrinking: a hang costs the limit on every
    try, and a run that does not repeat itself cannot be shrunk (hypothesis would report its
    own flakiness instead). Not an ``Exception``, so hypothesis lets it through."""

    def __init__(self, violation: InvariantViolation) -> None:
        super().__init__(str(violation))
        self.violation = violation


def _after_flaky(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    last: list[tuple[Artifact, RunReport]],
    run_timeout: float,
    flaky: hypothesis.errors.Flaky,
) -> InvariantViolation:
    """Hypothesis saw one example take two paths: run the last input again, under one seeded
    policy, a few times on fresh thinkers, to show how the runs differ."""
    seen = (
        f"hypothesis replayed an example and the run took another path "
        f"({type(flaky).__name__}): something in the thinker, its tools or the policy is not a "
        "function of the example"
    )
    if last:
        input = last[-1][0]
        runs: list[RunReport] = []
        for number in range(1, _FLAKY_RUNS + 1):
            report = _run(factory, input, RandomPolicy(random.Random(0), label="0"), run_timeout)
            if runs:
                labels = ("run 1", f"run {number}")
                problems, details = reproducibility_problems(
                    runs[0].fingerprint(), report.fingerprint(), labels
                )
                if problems:
                    shown = f"{seen}; the last input, run again under one seeded policy:\n{details}"
                    return InvariantViolation(problems, runs[0], details=shown)
            runs.append(report)
    problem = Problem(
        K.REPRODUCIBILITY,
        f"not reproducible: {seen}; running the last input again did not show the difference "
        "(look for an unseeded random, the clock, a counter or id() in a tool or a policy)",
    )
    return InvariantViolation([problem], last[-1][1] if last else None)


def check_thinker(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    inputs: st.SearchStrategy[Artifact],
    *,
    policies: st.SearchStrategy[Policy] | None = None,
    expected_errors: tuple[type[BaseException], ...] = (),
    settings: hypothesis.settings | None = None,
    run_timeout: float = DEFAULT_RUN_TIMEOUT,
) -> None:
    """Property-test a thinker: for drawn inputs and policies, every run keeps the invariants
    and runs the same way twice.

    Call it from a plain (not async) test. ``factory`` builds a fresh thinker for each run
    (e.g. the thinker class itself); ``policies`` defaults to
    :func:`harness.testing.strategies.policies` (every answer drawn, some selections refused);
    the fake entry's ``max_options`` is drawn too (:func:`harness.testing.strategies.max_options`)
    and each input choice must offer exactly the first that many legal refs. Each example runs twice
    (the second time on a fresh thinker, answered with the first run's answers) and must give
    the same wire bodies, turns, ``OBS_TURNS`` and world byte for byte. Every run is bounded:
    the decision past ``max_turns + 1`` stops it, and one still running after ``run_timeout``
    seconds is stopped and reported with where it waited.

    A failure raises :class:`InvariantViolation` (``kind`` says which promise broke): shrunk
    for a broken invariant, as first found for a hang or a run that did not repeat (those
    cannot be shrunk). Examples are saved in the settings' database under a key of the
    factory's module and qualified name, so two factories never replay each other's examples.
    """
    if run_timeout <= 0:
        raise ValueError(f"run_timeout must be a positive number of seconds, got {run_timeout!r}")
    drawn: st.SearchStrategy[Policy] = policies if policies is not None else drawn_policies()
    last: list[tuple[Artifact, RunReport]] = []

    @given(input=inputs, policy=drawn, cut=drawn_max_options())
    def thinker_keeps_its_invariants(input: Artifact, policy: Policy, cut: int | None) -> None:
        first = _run(factory, input, policy, run_timeout, cut)
        last[:] = [(input, first)]
        if isinstance(first.error, hypothesis.errors.Flaky):
            raise first.error  # hypothesis's own verdict on a draw; read below
        problems = invariant_problems(first, expected_errors=expected_errors)
        if first.hang is not None:
            raise _Unshrinkable(violation_of(first, problems))
        if problems:
            raise violation_of(first, problems)
        second = _run(factory, input, _Replay(first), run_timeout, cut)
        problems, details = replay_problems(first, second)
        if problems:
            raise _Unshrinkable(InvariantViolation(problems, first, details=details))

    # one violation, the first found and shrunk: several distinct ones would come as an
    # ExceptionGroup a test cannot read as an InvariantViolation
    # and no explain phase: the violation says what broke, and explaining a shrunk run re-runs
    # whole thinkers many times over (minutes under the ci profile)
    base = settings or hypothesis.settings(deadline=None)
    chosen = hypothesis.settings(
        base,
        report_multiple_bugs=False,
        phases=tuple(phase for phase in base.phases if phase is not hypothesis.Phase.explain),
    )
    database = chosen.database
    if database is not None:
        chosen = hypothesis.settings(
            chosen, database=_KeyedDatabase(database, _factory_key(factory))
        )
    try:
        chosen(thinker_keeps_its_invariants)()
    except _Unshrinkable as escaped:
        raise escaped.violation from escaped.violation.__cause__
    except hypothesis.errors.Flaky as flaky:
        raise _after_flaky(factory, last, run_timeout, flaky) from flaky

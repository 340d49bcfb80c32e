"""A distilled stand-in as the policy of the invariant checker: the triage thinker keeps every
promise on the stand-in's answers, and they are what the fitted heads say."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from harness.catalog import default_catalog
from harness.decision import DecisionRequest, Noul, NoulAnswer
from harness.demo.triage import Note, Triage
from harness.testing import check_thinker, fitted_policy

PARTS = st.sampled_from(
    [
        "renew the gym card right now",
        "no rush to send the invoice",
        "pay the water bill today",
        "the garden looks fine",
        "call the bank about the card today",
    ]
)


def _triage_file() -> str:
    path = default_catalog().entry("triage-fitted").file
    assert path is not None
    return path


def test_the_stand_in_answers_a_selection_with_its_head() -> None:
    policy = fitted_policy(_triage_file())
    line = 'verdict#3 (verdict): {"note":"pay the water bill today","urgent":true}'
    request = DecisionRequest(
        {"objective": "o", "artifacts": [line]}, {"select_verdict#3": Noul("Keep verdict#3?")}
    )
    answer = policy(request)["select_verdict#3"]
    assert isinstance(answer, NoulAnswer)
    assert answer.probability > 0.9


def test_the_triage_thinker_keeps_its_promises_on_the_stand_in() -> None:
    notes = st.lists(PARTS, min_size=1, max_size=3).map(lambda parts: Note("; ".join(parts)))
    check_thinker(
        Triage,
        notes,
        policies=st.just(fitted_policy(_triage_file())),
        settings=settings(
            max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow]
        ),
    )

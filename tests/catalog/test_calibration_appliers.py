"""A calibration's maps are bound to their constants once, when the calibration is made
(``harness/catalog/_calibration_maps.py``: :func:`applier`); the bound map, the fast path every
answer takes, gives bit for bit what the careful path gives (the public constructors over the
maps' own methods, ``reference_mapped``) on any map and any answer, or refuses alike."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.catalog import Calibration, IsotonicMap, PlattMap, RoleMap, TemperatureMap
from harness.catalog._calibration_maps import applier
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    RefusedAnswer,
    Score,
    ScoreAnswer,
)
from tests.catalog.test_calibration_maps import (
    answer_bits,
    as_public,
    choice_answers,
    finite,
    isotonic_maps,
    probabilities,
    reference_mapped,
    refusal,
    score_answers,
    temperatures,
)

maps: st.SearchStrategy[RoleMap] = st.one_of(
    st.builds(TemperatureMap, temperature=temperatures),
    st.builds(PlattMap, a=finite, b=finite),
    isotonic_maps(),
)
answers: st.SearchStrategy[Answer] = st.one_of(
    choice_answers(),
    score_answers(),
    probabilities.map(NoulAnswer),
    st.just(RefusedAnswer("policy")),
)


def assert_fast_is_careful(found: RoleMap, answer: Answer) -> None:
    refused = refusal(lambda: reference_mapped(found, answer))
    fast = applier(found)
    assert refusal(lambda: fast(answer)) == refused
    if refused is not None:
        return
    expected = reference_mapped(found, answer)
    got = fast(answer)
    assert type(got) is type(expected)
    assert answer_bits(got) == answer_bits(expected)
    assert got == expected
    assert repr(got) == repr(expected)
    assert as_public(got) == got  # the public constructor takes what the trusted one made


@settings(max_examples=1000, deadline=None)
@given(found=maps, answer=answers)
@example(found=PlattMap(a=1e308, b=0.0), answer=NoulAnswer(0.9))  # a * logit(p) overflows
@example(found=PlattMap(a=-1e308, b=1e308), answer=NoulAnswer(0.9))  # inf - inf: NaN -> 0.0
@example(found=PlattMap(a=2.0, b=-0.4), answer=NoulAnswer(0.0))
@example(found=TemperatureMap(temperature=5e-324), answer=ChoiceAnswer("a", {"a": 0.5}, 0.0))
@example(found=TemperatureMap(temperature=1.3), answer=NoulAnswer(0.4))  # another kind: as is
@example(found=IsotonicMap(x=(0.2, 0.8), y=(0.1, 0.9)), answer=NoulAnswer(0.5))
def test_a_bound_map_is_the_careful_path_on_any_map_and_answer(
    found: RoleMap, answer: Answer
) -> None:
    assert_fast_is_careful(found, answer)


@settings(max_examples=200, deadline=None)
@given(found=maps, answer=answers)
def test_apply_takes_the_bound_maps_of_the_calibration(found: RoleMap, answer: Answer) -> None:
    question = (
        Choice("q", tuple(answer.probabilities))
        if isinstance(answer, ChoiceAnswer)
        else Score("q", answer.levels)
        if isinstance(answer, ScoreAnswer) and len(answer.levels) >= 2
        else Noul("q")
    )
    role = question.kind
    if isinstance(found, TemperatureMap) == (role == "noul"):
        return  # a role takes only its kind's maps
    request = DecisionRequest("s", {"q": question})
    calibration = Calibration(roles={role: found})
    refused = refusal(lambda: reference_mapped(found, answer))
    assert refusal(lambda: calibration.apply(request, {"q": answer})) == refused
    if refused is None:
        got = calibration.apply(request, {"q": answer})["q"]
        assert answer_bits(got) == answer_bits(reference_mapped(found, answer))

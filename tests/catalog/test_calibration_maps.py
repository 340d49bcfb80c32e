"""The calibration's maps (fast paths through the trusted answer constructors) give bit for bit
what the plain reading of the maps gives: the reference below is that reading (the public
answer constructors, comprehensions, ``max`` and ``min``), and for any map and any answer the
two agree on every float's bits, or refuse with the same error. What the trusted constructors
made is what the public ones make of the same values (equal, same hash, same repr)."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Mapping
from functools import partial

from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.catalog import (
    Calibration,
    IsotonicMap,
    PlattMap,
    RoleMap,
    TemperatureMap,
    role_of,
)
from harness.catalog._calibration import _mapped
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
    choice_confidence,
    score_confidence,
)

EPSILON = 1e-6

# -- the reference: the maps read plainly, through the public constructors --------------------


def reference_distribution(temperature: float, probabilities: list[float]) -> list[float]:
    logs = [math.log(max(EPSILON, p)) / temperature for p in probabilities]
    top = max(logs)
    weights = [math.exp(value - top) for value in logs]
    total = sum(weights)
    return [w / total for w in weights]


def reference_mapped(found: RoleMap, answer: Answer) -> Answer:
    if isinstance(found, TemperatureMap):
        if isinstance(answer, ChoiceAnswer):
            options = list(answer.probabilities)
            values = reference_distribution(found.temperature, list(answer.probabilities.values()))
            probabilities = dict(zip(options, values, strict=True))
            return ChoiceAnswer(answer.choice, probabilities, choice_confidence(values))
        if isinstance(answer, ScoreAnswer):
            values = reference_distribution(found.temperature, list(answer.probabilities))
            top = len(values) - 1
            score = min(float(top), max(0.0, sum(i * p for i, p in enumerate(values))))
            return ScoreAnswer(score, answer.levels, tuple(values), score_confidence(values))
        return answer
    if isinstance(answer, NoulAnswer):
        return NoulAnswer(min(1.0, max(0.0, found.probability(answer.probability))))
    return answer


def reference_apply(
    calibration: Calibration, request: DecisionRequest, answers: Mapping[str, Answer]
) -> dict[str, Answer]:
    mapped: dict[str, Answer] = {}
    for question_id, answer in answers.items():
        question = request.questions.get(question_id)
        found = None if question is None else calibration.roles.get(role_of(question_id, question))
        mapped[question_id] = answer if found is None else reference_mapped(found, answer)
    return mapped


# -- comparing bit for bit -----------------------------------------------------------------------


def bits(value: float) -> bytes:
    """A float's bits (NaN's payload aside: every NaN here is the one ``inf - inf`` makes)."""
    return b"nan" if math.isnan(value) else struct.pack("<d", value)


def answer_bits(answer: Answer) -> tuple[object, ...]:
    """Every field of an answer, each float as its bits, each type named."""
    if isinstance(answer, ChoiceAnswer):
        return (
            "choice",
            answer.choice,
            type(answer.probabilities).__name__,
            [(option, type(p), bits(p)) for option, p in answer.probabilities.items()],
            type(answer.confidence),
            bits(answer.confidence),
        )
    if isinstance(answer, ScoreAnswer):
        return (
            "score",
            type(answer.score),
            bits(answer.score),
            answer.levels,
            type(answer.probabilities),
            [(type(p), bits(p)) for p in answer.probabilities],
            type(answer.confidence),
            bits(answer.confidence),
        )
    if isinstance(answer, NoulAnswer):
        return ("noul", type(answer.probability), bits(answer.probability))
    return ("refused", answer.reason)


def as_public(answer: Answer) -> Answer:
    """The same answer made again by its public constructor, from its own fields."""
    if isinstance(answer, ChoiceAnswer):
        return ChoiceAnswer(answer.choice, dict(answer.probabilities), answer.confidence)
    if isinstance(answer, ScoreAnswer):
        return ScoreAnswer(answer.score, answer.levels, answer.probabilities, answer.confidence)
    if isinstance(answer, NoulAnswer):
        return NoulAnswer(answer.probability)
    return answer


def refusal(call: Callable[[], object]) -> str | None:
    """The message of the ``ValueError`` ``call`` raises, or ``None`` when it returns."""
    try:
        call()
    except ValueError as error:
        return str(error)
    return None


def cut(found: RoleMap, answer: Answer) -> Answer:
    """What harness maps ``answer`` to: a choice through :meth:`Calibration.apply`, which maps
    it in its own frame, any other answer through ``_mapped``."""
    if isinstance(answer, ChoiceAnswer):
        request = DecisionRequest("s", {"q": Choice("q", tuple(answer.probabilities))})
        return Calibration(roles={"choice": found}).apply(request, {"q": answer})["q"]
    return _mapped(found, answer)


def assert_same(found: RoleMap, answer: Answer) -> None:
    """The cut map and the reference agree bit for bit, or refuse alike; what the cut made is
    what the public constructor makes of it."""
    refused = refusal(lambda: reference_mapped(found, answer))
    assert refusal(lambda: cut(found, answer)) == refused
    if refused is not None:
        return
    expected = reference_mapped(found, answer)
    got = cut(found, answer)
    assert type(got) is type(expected)
    assert answer_bits(got) == answer_bits(expected)
    assert got == expected
    assert hash(got) == hash(expected)
    assert repr(got) == repr(expected)
    public = as_public(got)  # the public constructor accepts it, and makes the same answer
    assert public == got
    assert answer_bits(public) == answer_bits(got)


# -- any maps, any answers ---------------------------------------------------------------------

# probabilities near the edges the maps treat apart: 0, EPSILON, 1 - EPSILON, 1
EDGES = [0.0, 5e-324, 1e-300, EPSILON / 2, EPSILON, EPSILON * 2, 0.5, 1 - EPSILON, 1.0]
probabilities = st.one_of(st.floats(0.0, 1.0), st.sampled_from(EDGES))
# a temperature anywhere the catalog accepts one: subnormal (every log overflows), tiny, huge
temperatures = st.one_of(
    st.floats(min_value=5e-324, max_value=1e300, exclude_min=False),
    st.sampled_from([5e-324, 1e-310, 1e-300, 1e-9, 0.05, 0.6050328346710184, 1.0, 3.3, 1e300]),
)
texts = st.text(alphabet="abcdefgh", min_size=1, max_size=3)


@st.composite
def choice_answers(draw: st.DrawFn) -> ChoiceAnswer:
    table = draw(st.dictionaries(texts, probabilities, min_size=1, max_size=8))
    return ChoiceAnswer(draw(st.sampled_from(sorted(table))), table, draw(probabilities))


@st.composite
def score_answers(draw: st.DrawFn, least: int = 1) -> ScoreAnswer:
    values = draw(st.lists(probabilities, min_size=least, max_size=7))
    levels = tuple(f"l{i}" for i in range(len(values)))
    score = draw(st.floats(0.0, float(len(values) - 1)))
    return ScoreAnswer(score, levels, tuple(values), draw(probabilities))


@settings(max_examples=500, deadline=None)
@given(temperature=temperatures, answer=choice_answers())
@example(temperature=5e-324, answer=ChoiceAnswer("a", {"a": 0.5, "b": 0.5}, 0.0))  # NaN: refused
@example(temperature=1.0, answer=ChoiceAnswer("a", {"a": 0.0, "b": 0.0, "c": 0.0}, 0.0))
@example(temperature=0.6050328346710184, answer=ChoiceAnswer("a", {"a": 1.0}, 1.0))
@example(temperature=1e-300, answer=ChoiceAnswer("a", {"a": 1.0, "b": 0.2}, 1.0))
def test_a_temperature_on_any_choice_is_the_reference(
    temperature: float, answer: ChoiceAnswer
) -> None:
    assert_same(TemperatureMap(temperature=temperature), answer)


@settings(max_examples=300, deadline=None)
@given(temperature=temperatures, answer=score_answers())
@example(temperature=5e-324, answer=ScoreAnswer(0.0, ("a", "b"), (0.5, 0.5), 0.0))
@example(temperature=3.375728726892443, answer=ScoreAnswer(0.0, ("a",), (0.0,), 1.0))
def test_a_temperature_on_any_score_is_the_reference(
    temperature: float, answer: ScoreAnswer
) -> None:
    assert_same(TemperatureMap(temperature=temperature), answer)


finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def isotonic_maps(draw: st.DrawFn) -> IsotonicMap:
    count = draw(st.integers(1, 5))
    xs = sorted(draw(st.sets(st.one_of(finite, st.floats(0, 1)), min_size=count, max_size=count)))
    ys = sorted(draw(st.lists(st.floats(0, 1), min_size=count, max_size=count)))
    return IsotonicMap(x=tuple(xs), y=tuple(ys))


@settings(max_examples=500, deadline=None)
@given(
    found=st.one_of(st.builds(PlattMap, a=finite, b=finite), isotonic_maps()),
    probability=probabilities,
)
@example(found=PlattMap(a=1e308, b=0.0), probability=0.9)  # a * logit(p) overflows: 1.0
@example(found=PlattMap(a=-1e308, b=1e308), probability=0.9)
@example(found=IsotonicMap(x=(-1e308, 1e308), y=(0.0, 1.0)), probability=0.5)
def test_a_noul_map_on_any_noul_is_the_reference(
    found: PlattMap | IsotonicMap, probability: float
) -> None:
    assert_same(found, NoulAnswer(probability))


def test_refusals_and_answers_of_another_kind_pass_as_they_are() -> None:
    refused = RefusedAnswer("policy")
    assert _mapped(TemperatureMap(temperature=2.0), refused) is refused
    assert _mapped(PlattMap(a=2.0), refused) is refused
    noul = NoulAnswer(0.3)
    assert _mapped(TemperatureMap(temperature=2.0), noul) is noul


@settings(max_examples=300, deadline=None)
@given(temperature=temperatures, values=st.lists(probabilities, min_size=1, max_size=8))
def test_the_distribution_is_the_reference(temperature: float, values: list[float]) -> None:
    got = TemperatureMap(temperature=temperature).distribution(values)
    expected = reference_distribution(temperature, values)
    assert [bits(v) for v in got] == [bits(v) for v in expected]


def test_a_distribution_of_nothing_is_refused_as_the_reference_refuses_it() -> None:
    refused = refusal(lambda: reference_distribution(2.0, []))
    assert refused is not None
    assert refusal(lambda: TemperatureMap(temperature=2.0).distribution([])) == refused


# -- whole calibrations on whole requests -------------------------------------------------------

ROLE_IDS = ["next", "tool_input", "which", "select_item#1", "other", "how", "select_x"]


@st.composite
def questions_and_answers(draw: st.DrawFn) -> tuple[DecisionRequest, dict[str, Answer]]:
    """A request whose ids take any kind (so the same id is a choice in one request and a
    noul in the next), and answers to some of its questions, some refused, some to ids not
    asked."""
    questions: dict[str, Choice | Noul | Score] = {}
    answers: dict[str, Answer] = {}
    for qid in draw(st.lists(st.sampled_from(ROLE_IDS), min_size=1, unique=True)):
        kind = draw(st.sampled_from(["choice", "noul", "score"]))
        if kind == "choice":
            answer: Answer = draw(choice_answers())
            assert isinstance(answer, ChoiceAnswer)
            questions[qid] = Choice("?", dict.fromkeys(answer.probabilities))
        elif kind == "score":
            answer = draw(score_answers(least=2))  # a score question has two levels or more
            assert isinstance(answer, ScoreAnswer)
            questions[qid] = Score("?", answer.levels)
        else:
            answer = NoulAnswer(draw(probabilities))
            questions[qid] = Noul("?")
        if draw(st.booleans()):
            answers[qid] = RefusedAnswer() if draw(st.booleans()) else answer
    if draw(st.booleans()):
        answers["never_asked"] = NoulAnswer(0.5)
    return DecisionRequest("a state", questions), answers


@st.composite
def calibrations(draw: st.DrawFn) -> Calibration:
    temperature = st.builds(TemperatureMap, temperature=temperatures)
    noul_maps = st.one_of(st.builds(PlattMap, a=finite, b=finite), isotonic_maps())
    roles: dict[str, RoleMap] = {}
    for role, maps in (
        ("next", temperature),
        ("input", temperature),
        ("choice", temperature),
        ("score", temperature),
        ("select", noul_maps),
        ("noul", noul_maps),
    ):
        if draw(st.booleans()):
            roles[role] = draw(maps)
    return Calibration(roles)


@settings(max_examples=300, deadline=None)
@given(calibration=calibrations(), asked=st.lists(questions_and_answers(), min_size=1, max_size=3))
def test_apply_is_the_reference_on_any_requests(
    calibration: Calibration, asked: list[tuple[DecisionRequest, dict[str, Answer]]]
) -> None:
    """Several requests in a row (the roles seen are remembered by id and question type)."""
    for request, answers in asked:
        refused = refusal(partial(reference_apply, calibration, request, answers))
        assert refusal(lambda: calibration.apply(request, answers)) == refused  # noqa: B023
        if refused is not None:
            continue
        expected = reference_apply(calibration, request, answers)
        got = calibration.apply(request, answers)
        assert list(got) == list(expected)
        for qid, answer in got.items():
            assert answer_bits(answer) == answer_bits(expected[qid]), qid


def test_an_id_asked_as_another_kind_takes_that_kinds_role() -> None:
    calibration = Calibration(
        {"next": TemperatureMap(temperature=2.0), "noul": PlattMap(a=2.0, b=0.0)}
    )
    as_choice = DecisionRequest("s", {"next": Choice("?", {"a": None, "b": None})})
    as_noul = DecisionRequest("s", {"next": Noul("?")})
    choice = ChoiceAnswer("a", {"a": 0.8, "b": 0.2}, 0.6)
    for _ in range(2):
        softened = calibration.apply(as_choice, {"next": choice})["next"]
        assert isinstance(softened, ChoiceAnswer)
        assert softened.probabilities["a"] < 0.8  # next's temperature
        mapped = calibration.apply(as_noul, {"next": NoulAnswer(0.8)})["next"]
        assert mapped == NoulAnswer(PlattMap(a=2.0, b=0.0).probability(0.8))  # noul's map

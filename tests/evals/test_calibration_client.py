"""A catalog entry's calibration: read from the catalog, applied by the wrapper client before the
thinker reads an answer, recorded beside the raw answer; bad settings refused in one line."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.catalog import (
    Calibration,
    CatalogError,
    IsotonicMap,
    PlattMap,
    TemperatureMap,
    default_catalog,
    load_catalog,
    sigmoid,
)
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
)
from harness.decision._internal import checked_answers
from harness.jobs import Dispatcher, ModelCall
from harness.providers import CalibratedDecisionClient, CalibratedResponse
from harness.providers._calibrated import _calibrated_response
from harness.testing import FakeDecisionModel, RandomPolicy, choose, rate, yes
from harness.thinker import DecisionCall
from harness.tools import Workflow
from tests.catalog.test_calibration_maps import as_public

ENTRY = """
[pins]
decision = "bent"

[[entries]]
id = "bent"
provider = "fake"
wire_model_id = "bent"
max_context_tokens = 4096
max_concurrent = 2
"""

TABLE = """
[entries.calibration]
fitted_on = "a test"
selection_threshold = 0.3
select = { method = "platt", a = 2.0, b = -1.0 }
next = { method = "temperature", temperature = 2.0 }
"""


def catalog_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "catalog.toml"
    path.write_text(text, encoding="utf-8")
    return path


def answers(request: DecisionRequest) -> dict[str, ChoiceAnswer | NoulAnswer]:
    found: dict[str, ChoiceAnswer | NoulAnswer] = {}
    for qid, question in request.questions.items():
        if isinstance(question, Choice):
            found[qid] = choose(question, "a", probability=0.6)
        else:
            found[qid] = yes(0.6)
    return found


REQUEST = DecisionRequest(
    {"objective": "x"},
    {
        "next": Choice("Which?", {"a": None, "b": None, "c": None}),
        "select_item#1": Noul("Keep item#1?"),
        "other": Noul("Something else?"),
    },
)


def test_the_wrapper_applies_the_entrys_calibration_and_the_record_keeps_both(
    tmp_path: Path,
) -> None:
    catalog = load_catalog(catalog_file(tmp_path, ENTRY + TABLE))
    entry = catalog.entry("bent")
    assert entry.calibration is not None
    assert entry.calibration.selection_threshold == 0.3

    async def go() -> tuple[DecisionResponse, tuple[ModelCall, ...]]:
        model = FakeDecisionModel(answers)
        async with Dispatcher(catalog, clients={"bent": model}) as dispatcher:
            call = DecisionCall(Workflow(), REQUEST)
            response = await dispatcher.run(call)
            return response, call.record.calls

    response, calls = asyncio.run(go())
    # what the thinker reads: the calibrated answers
    logit_06 = 0.4054651081081644  # log(0.6 / 0.4), computed apart from harness
    assert response.noul("select_item#1").probability == pytest.approx(
        sigmoid(2.0 * logit_06 - 1.0)
    )
    assert response.noul("other").probability == pytest.approx(0.6)  # no map for its role
    softened = TemperatureMap(temperature=2.0).distribution([0.6, 0.2, 0.2])
    assert list(response.choice("next").probabilities.values()) == pytest.approx(softened)
    assert response.choice("next").choice == "a"
    # what the record keeps: the model's own answers, and the calibrated ones beside them
    (made,) = calls
    raw = made.answers["select_item#1"]
    assert isinstance(raw, NoulAnswer)
    assert raw.probability == pytest.approx(0.6)
    assert made.calibrated is not None
    calibrated = made.calibrated["select_item#1"]
    assert isinstance(calibrated, NoulAnswer)
    assert calibrated.probability == pytest.approx(PlattMap(a=2.0, b=-1.0).probability(0.6))


def test_an_entry_without_calibration_records_no_calibrated_answers(tmp_path: Path) -> None:
    catalog = load_catalog(catalog_file(tmp_path, ENTRY))

    async def go() -> object:
        async with Dispatcher(catalog, clients={"bent": FakeDecisionModel(answers)}) as d:
            call = DecisionCall(Workflow(), REQUEST)
            response = await d.run(call)
            (made,) = call.record.calls
            assert made.calibrated is None
            return response

    response = asyncio.run(go())
    assert response.noul("select_item#1").probability == pytest.approx(0.6)  # type: ignore[attr-defined]


def test_a_score_keeps_its_levels_and_a_failed_call_passes_through() -> None:
    score = Score("How much?", ["low", "mid", "high"])
    request = DecisionRequest("s", {"how": score})
    calibration = Calibration({"score": TemperatureMap(temperature=3.0)})
    entry = attrs.evolve(
        default_catalog().entry("embedded"), provider="fake", calibration=calibration
    )
    client = CalibratedDecisionClient(FakeDecisionModel(lambda r: {"how": rate(score, 2)}))
    response = asyncio.run(client.decide(request, entry))
    mapped = response.score("how")
    assert mapped.levels == ("low", "mid", "high")
    assert sum(mapped.probabilities) == pytest.approx(1.0)
    assert mapped.probabilities[2] < 0.9  # softened
    assert 0 <= mapped.score <= 2


def test_a_calibration_file_beside_the_catalog(tmp_path: Path) -> None:
    (tmp_path / "bent.toml").write_text(
        'select = { method = "isotonic", x = [0.2, 0.8], y = [0.1, 0.7] }\n', encoding="utf-8"
    )
    catalog = load_catalog(
        catalog_file(tmp_path, ENTRY + '\n[entries.calibration]\nfile = "bent.toml"\n')
    )
    calibration = catalog.entry("bent").calibration
    assert calibration is not None
    found = calibration.roles["select"]
    assert found.method == "isotonic"
    mapped = calibration.apply(REQUEST, answers(REQUEST))["select_item#1"]
    assert isinstance(mapped, NoulAnswer)
    assert mapped.probability == pytest.approx(0.5)  # 0.6 is 2/3 of the way from 0.2 to 0.8


def test_the_shipped_embedded_entry_carries_its_fitted_calibration() -> None:
    entry = default_catalog().entry("embedded")
    assert entry.calibration is not None
    assert entry.calibration.fitted_on is not None
    assert "dev split" in entry.calibration.fitted_on
    assert entry.calibration.selection_threshold is not None
    assert set(entry.calibration.roles) <= {"select", "choice", "noul", "score", "next", "input"}


@pytest.mark.parametrize(
    ("table", "fix"),
    [
        ('select = { method = "temperature", temperature = 2 }', "use platt or isotonic"),
        ('next = { method = "platt", a = 1, b = 0 }', "use temperature"),
        ('choose = { method = "temperature", temperature = 2 }', "a role (next, input, select"),
        ('next = { method = "temperature", temperature = -1 }', "temperature must be"),
        ('select = { method = "sigmoid" }', "method must be one of"),
        ('select = { method = "platt", slope = 2 }', "it takes a, b"),
        ('select = { method = "isotonic", x = [0.5, 0.2], y = [0.1, 0.2] }', "increase"),
        ("selection_threshold = 1.5", "selection_threshold must be in [0, 1]"),
        ('file = "missing.toml"', "cannot be read"),
        ('file = "x.toml"\nselect = { method = "platt" }', "must be the only key"),
    ],
)
def test_bad_calibration_settings_are_one_line_naming_the_entry_and_the_fix(
    tmp_path: Path, table: str, fix: str
) -> None:
    path = catalog_file(tmp_path, ENTRY + "\n[entries.calibration]\n" + table + "\n")
    with pytest.raises(CatalogError) as caught:
        load_catalog(path)
    message = str(caught.value)
    assert "\n" not in message
    assert "catalog entry 'bent'" in message
    assert fix in message


def test_a_calibration_that_is_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="calibration must be a table"):
        load_catalog(catalog_file(tmp_path, ENTRY + 'calibration = "yes"\n'))


def test_a_calibration_applies_only_to_the_model_it_was_fitted_on(tmp_path: Path) -> None:
    bound = TABLE + 'model = "bent-v2"\n'
    catalog = load_catalog(catalog_file(tmp_path, ENTRY + bound))
    entry = catalog.entry("bent")
    for served, mapped in (("bent-v2", True), ("bent-v3", False)):
        client = CalibratedDecisionClient(FakeDecisionModel(answers, model=served))
        response = asyncio.run(client.decide(REQUEST, entry))
        p = response.noul("select_item#1").probability
        expected = PlattMap(a=2.0, b=-1.0).probability(0.6) if mapped else 0.6
        assert p == pytest.approx(expected), served
    bad = TABLE + "model = 3\n"
    with pytest.raises(CatalogError, match=r"calibration\.model must be"):
        load_catalog(catalog_file(tmp_path, ENTRY + bad))


def test_a_thinker_reads_calibrated_selections_and_the_run_keeps_the_raw_ones(
    tmp_path: Path,
) -> None:
    from harness.runs import run_sync
    from harness.testing import override
    from tests.evals.thinkers import KeepSentences, Note, refund_policy

    table = (
        "\n[entries.calibration]\nselection_threshold = 0.6\n"
        'select = { method = "platt", a = 1.0, b = -1.0 }\n'
    )
    catalog = load_catalog(catalog_file(tmp_path, ENTRY + table))
    model = FakeDecisionModel(refund_policy(yes_if=0.9, yes_else=0.2))
    with override(model=model):  # the fake answers for the catalog's entry, calibrated
        result = run_sync(
            KeepSentences, Note("I want a refund. The box was fine."), catalog=catalog
        )
    selection = result.selection
    raw_last = result.calls[-1].answers
    calibrated_last = result.calls[-1].calibrated
    assert calibrated_last is not None
    for ref, p in selection.items():
        raw = raw_last[f"select_{ref}"]
        assert isinstance(raw, NoulAnswer)
        assert p == pytest.approx(PlattMap(a=1.0, b=-1.0).probability(raw.probability))
        assert calibrated_last[f"select_{ref}"] == NoulAnswer(p)
    # 0.9 maps to sigmoid(logit(0.9) - 1) = 0.768 >= 0.6, 0.2 to 0.084: the refund is kept
    assert [item.text for item in result.items] == ["I want a refund"]


@st.composite
def _calibrations(draw: st.DrawFn) -> Calibration:
    """Any calibration the catalog accepts: a map (or none) for each role."""
    temperature = st.builds(TemperatureMap, temperature=st.floats(0.05, 20))
    platt = st.builds(PlattMap, a=st.floats(-8, 8), b=st.floats(-8, 8))
    points = draw(st.integers(1, 5))
    xs = sorted(draw(st.sets(st.floats(0, 1), min_size=points, max_size=points)))
    ys = sorted(draw(st.lists(st.floats(0, 1), min_size=len(xs), max_size=len(xs))))
    isotonic = st.just(IsotonicMap(x=tuple(xs), y=tuple(ys)))
    roles: dict[str, TemperatureMap | PlattMap | IsotonicMap] = {}
    for role, maps in (
        ("next", temperature),
        ("input", temperature),
        ("choice", temperature),
        ("score", temperature),
        ("select", st.one_of(platt, isotonic)),
        ("noul", st.one_of(platt, isotonic)),
    ):
        if draw(st.booleans()):
            roles[role] = draw(maps)
    return Calibration(roles)


@st.composite
def _requests(draw: st.DrawFn) -> DecisionRequest:
    """A request with every question role: next, an input, a choice, a score, selections."""
    questions: dict[str, Choice | Noul | Score] = {}
    for qid in ("next", "tool_input", "which"):
        if draw(st.booleans()):
            count = draw(st.integers(1, 6))
            questions[qid] = Choice("?", {f"o{i}": None for i in range(count)})
    if draw(st.booleans()):
        questions["how"] = Score("?", [f"l{i}" for i in range(draw(st.integers(2, 5)))])
    for qid in ("select_item#1", "select_item#2", "other"):
        if draw(st.booleans()):
            questions[qid] = Noul("?")
    if not questions:
        questions["other"] = Noul("?")
    return DecisionRequest("a state", questions)


@settings(max_examples=200, deadline=None)
@given(request=_requests(), calibration=_calibrations(), seed=st.integers(0, 2**32))
def test_the_maps_keep_every_answers_shape_so_the_calibrated_answers_pass_every_check(
    request: DecisionRequest, calibration: Calibration, seed: int
) -> None:
    """The calibrated response takes the maps' answers without a second check (they are a
    checked response's answers, mapped): here they pass that check anyway, whatever the maps and
    the answers (each question answered in its kind, options and levels in order)."""
    policy = RandomPolicy(random.Random(seed), refusals=True)
    response = DecisionResponse(request, policy(request), input_tokens=7, model="m", latency=0.5)
    mapped = calibration.apply(request, response.answers)
    checked = DecisionResponse(request, dict(mapped))  # a plain dict: every check runs
    assert list(checked.answers) == list(response.answers)
    for qid, answer in checked.answers.items():
        raw = response.answers[qid]
        assert type(answer) is type(raw)
        if isinstance(answer, ChoiceAnswer) and isinstance(raw, ChoiceAnswer):
            assert list(answer.probabilities) == list(raw.probabilities)
            assert answer.choice == raw.choice
        # made by the trusted constructors: the public ones accept the same values and make
        # the same answer
        public = as_public(answer)
        assert public == answer
        assert repr(public) == repr(answer)
        assert hash(public) == hash(answer)
    # the response the wrapper makes without its checks is the one its constructor makes
    made = _calibrated_response(response, checked_answers(request, mapped))
    public_response = CalibratedResponse(
        request=request,
        answers=mapped,
        input_tokens=7,
        model="m",
        request_id=None,
        latency=0.5,
        raw_answers=response.answers,
    )
    assert made == public_response
    for field in attrs.fields(CalibratedResponse):  # every field set, to the same value
        assert getattr(made, field.name) == getattr(public_response, field.name), field.name
    assert type(made.raw_answers) is type(public_response.raw_answers)
    assert list(made.raw_answers.items()) == list(public_response.raw_answers.items())
    assert list(made.answers.items()) == list(public_response.answers.items())


def test_the_calibrated_response_is_read_only_and_keeps_the_models_answers() -> None:
    entry = default_catalog().entry("embedded")
    calibration = Calibration({"next": TemperatureMap(temperature=2.0)}, model="bent")
    entry = attrs.evolve(entry, provider="fake", calibration=calibration)
    client = CalibratedDecisionClient(FakeDecisionModel(answers, model="bent"))
    response = asyncio.run(client.decide(REQUEST, entry))
    assert isinstance(response, CalibratedResponse)
    raw = response.raw_answers
    assert dict(raw) == dict(answers(REQUEST))
    with pytest.raises(TypeError):
        raw["next"] = NoulAnswer(0.1)  # type: ignore[index]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        response.latency = 1.0  # type: ignore[misc]
    assert response.failure is None
    assert response.reading is None
    assert response.choice("next").probabilities["a"] < 0.6  # softened

"""The decoding's fast paths give exactly what the careful readers give: a reply's
usage and model, a reply body or answers that are not a dict, a response's scalar checks, a
frozen map's equality and hash made on first use."""

from __future__ import annotations

import copy
import inspect
import math
import pickle
from collections.abc import Callable
from enum import IntEnum
from types import MappingProxyType

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
    WireReply,
    _codec,
    _response,
    _wire,
    openai,
    score_confidence,
    systemone,
)
from harness.decision._frozen_map import FrozenMap
from harness.errors import NotAnAnswerError

from .strategies import answers_to, requests, wild_json


class Count(IntEnum):
    """An int that is not exactly an ``int`` (the careful readers accept it as one)."""

    SEVEN = 7


EDGES = [
    None,
    True,
    False,
    -3,
    -1,
    0,
    1,
    7,
    2**53,
    2**53 + 1,
    -1e-9,
    -0.0,
    0.0,
    0.25,
    1.0,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
    Count.SEVEN,
    "7",
    [7],
]
"""Values at and past the edges of what the fast paths take as they are."""
MODELS = ["sparrow-nano", "caf\u00e9", "tab\there", "\ud800", "", "x" * 200, "y" * 201, 7, None]

_numbers = st.one_of(
    st.sampled_from(EDGES),
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**53 + 2),
    st.floats(),
    st.just(Count.SEVEN),
    st.text(max_size=3),
)
_usages = st.one_of(
    wild_json,
    st.dictionaries(st.sampled_from(["input_tokens", "output_tokens", "other"]), _numbers),
    st.builds(
        MappingProxyType,
        st.dictionaries(st.sampled_from(["input_tokens", "output_tokens"]), _numbers),
    ),
)
_models = st.one_of(
    wild_json,
    st.text(max_size=8),
    st.text(min_size=195, max_size=205),
    st.sampled_from(MODELS),
)


@given(usage=_usages, model=_models, has_usage=st.booleans(), has_model=st.booleans())
def test_the_usage_and_model_read_fast_are_what_the_careful_readers_give(
    usage: object, model: object, has_usage: bool, has_model: bool
) -> None:
    body: dict[object, object] = {}
    if has_usage:
        body["usage"] = usage
    if has_model:
        body["model"] = model
    answers = FrozenMap[str, object]()
    reply = _codec.wire_reply(body, answers)  # type: ignore[arg-type]
    input_tokens, output_tokens = _wire.read_usage(body.get("usage"))
    served = _wire.served_model(body.get("model"))
    public = WireReply(answers, served, input_tokens, output_tokens)  # type: ignore[arg-type]
    assert reply == public
    assert repr(reply) == repr(public)
    for fast, careful in zip(
        (reply.model, reply.input_tokens, reply.output_tokens),
        (served, input_tokens, output_tokens),
        strict=True,
    ):
        assert fast is careful or (type(fast) is type(careful) and fast == careful)


def _read(body: dict[object, object]) -> None:
    reply = _codec.wire_reply(body, FrozenMap())
    input_tokens, output_tokens = _wire.read_usage(body.get("usage"))
    served = _wire.served_model(body.get("model"))
    public = WireReply(FrozenMap(), served, input_tokens, output_tokens)
    assert repr(reply) == repr(public)
    for fast, careful in zip(
        (reply.model, reply.input_tokens, reply.output_tokens),
        (served, input_tokens, output_tokens),
        strict=True,
    ):
        assert fast is careful or (type(fast) is type(careful) and fast == careful)


def test_every_edge_of_the_usage_and_model_reads_as_the_careful_readers_read_it() -> None:
    for model in MODELS:
        for count in EDGES:
            _read({"model": model, "usage": {"input_tokens": count, "output_tokens": count}})
            _read({"model": model, "usage": {"output_tokens": count}})
            _read({"usage": {"input_tokens": count}})


def _outcome(call: Callable[[], object]) -> object:
    try:
        return call()
    except NotAnAnswerError as error:
        return str(error)


@given(
    request=requests.flatmap(lambda r: answers_to(r).map(lambda a: (r, a))),
    corrupt=st.none() | wild_json,
)
def test_a_reply_that_is_not_a_dict_decodes_as_the_dict_does(
    request: tuple[DecisionRequest, object], corrupt: object
) -> None:
    asked, answers = request
    payload: dict[str, object] = dict(
        systemone.encode_reply(answers, model="m", input_tokens=3)  # type: ignore[arg-type]
    )
    if corrupt is not None:
        payload = {**payload, "answers": corrupt}
    as_dict = _outcome(lambda: systemone.decode_reply(asked, payload))
    inner = payload["answers"]
    proxied = {
        **payload,
        "answers": MappingProxyType(inner) if isinstance(inner, dict) else inner,
    }
    as_proxy = _outcome(lambda: systemone.decode_reply(asked, MappingProxyType(proxied)))
    assert as_proxy == as_dict


def _old_scalar_check(input_tokens: object, latency: object) -> str | None:
    """The response's scalar checks as they were written before the fast path (the reference)."""
    if input_tokens is not None and (
        isinstance(input_tokens, bool) or not isinstance(input_tokens, int) or input_tokens < 0
    ):
        return "input_tokens must be a non-negative int, or None when unknown"
    if (
        isinstance(latency, bool)
        or not isinstance(latency, (int, float))
        or not math.isfinite(latency)
    ):
        return "latency must be a finite number of seconds"
    if latency < 0:
        return "latency must not be negative"
    return None


_REQUEST = DecisionRequest("a ticket", {"refund": Noul("Refund?")})
_REPLY = {"answers": {"refund": {"type": "noul", "noul": 0.5}}}


def _check_scalars(input_tokens: object, latency: object) -> None:
    expected = _old_scalar_check(input_tokens, latency)
    answers = systemone.decode_reply(_REQUEST, _REPLY).answers
    scalars: dict[str, object] = {"input_tokens": input_tokens, "latency": latency}
    if expected is None:
        DecisionResponse(_REQUEST, answers, **scalars)  # type: ignore[arg-type]
    else:
        with pytest.raises(ValueError, match=r".") as raised:
            DecisionResponse(_REQUEST, answers, **scalars)  # type: ignore[arg-type]
        assert str(raised.value) == expected


@given(input_tokens=_numbers, latency=_numbers | st.floats(min_value=-1.0, max_value=1e308))
def test_a_response_s_scalar_checks_refuse_what_they_refused(
    input_tokens: object, latency: object
) -> None:
    _check_scalars(input_tokens, latency)


def test_every_edge_of_a_response_s_scalars_is_refused_as_it_was() -> None:
    for input_tokens in EDGES:
        for latency in EDGES:
            _check_scalars(input_tokens, latency)


_MAPS = [
    lambda: FrozenMap([("a", 1.0), ("b", 0.5)]),
    lambda: FrozenMap.adopt({"a": 1.0, "b": 0.5}),
    lambda: FrozenMap.of({"a": 1.0, "b": 0.5}),
]


@pytest.mark.parametrize("made", _MAPS, ids=["init", "adopt", "of"])
def test_a_frozen_map_compares_hashes_and_pickles_as_its_items(
    made: Callable[[], FrozenMap[str, float]],
) -> None:
    first, second = made(), made()
    assert first == second
    assert hash(first) == hash(second) == hash((("a", 1.0), ("b", 0.5)))
    assert first == second  # again, with the items made
    assert first != FrozenMap([("b", 0.5), ("a", 1.0)])  # another order
    assert first == {"b": 0.5, "a": 1.0}  # a dict ignores order, as a dict does
    assert len(first) == 2
    for again in (pickle.loads(pickle.dumps(made())), copy.copy(first), copy.deepcopy(first)):
        assert again == first
        assert hash(again) == hash(first)
        assert list(again.items()) == [("a", 1.0), ("b", 0.5)]


def test_a_codec_s_answers_are_the_answers_it_decoded_and_compare_as_a_map() -> None:
    request = DecisionRequest(
        "a ticket",
        {
            "team": Choice("Which team?", ["billing", "tech"]),
            "anger": Score("How angry?", ["calm", "angry"]),
        },
    )
    reply = {
        "answers": {
            "team": {
                "type": "choice",
                "choice": "tech",
                "probabilities": {"billing": 0, "tech": 1},
            },
            "anger": {"type": "score", "score": 1, "probabilities": {"0": 0.5, "1": 0.5}},
        }
    }
    answers = systemone.decode_reply(request, reply).answers
    assert type(answers) is _response._CheckedAnswers
    assert answers == dict(answers)
    assert answers == FrozenMap(answers.items())
    assert hash(answers) == hash(FrozenMap(answers.items()))
    team = answers["team"]
    assert repr(team) == (
        "ChoiceAnswer(choice='tech', probabilities=FrozenMap({'billing': 0.0, 'tech': 1.0}), "
        "confidence=1.0)"
    )
    assert repr(answers["anger"]) == (
        "ScoreAnswer(score=1.0, levels=('calm', 'angry'), probabilities=(0.5, 0.5), confidence=0.0)"
    )


_QUESTIONS: list[Choice | Noul | Score] = [
    Choice("Which team?", {"billing": None, "tech": "the tech team"}),
    Choice("Which one?", ["only"]),
    Noul("Refund?"),
    Score("How angry?", ["calm", "angry", "furious"]),
]
_PROBABILITIES = st.one_of(
    st.sampled_from([0, 1, 0.0, 0.5, 1.0]),  # taken, as they are or as floats
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from(EDGES),  # the rest: each refused by the fast path or read the careful way
)


@st.composite
def _near_answers(draw: st.DrawFn) -> tuple[Choice | Noul | Score, dict[str, object]]:
    """A question and an answer to it that is well formed, or nearly: every field is drawn
    from valid values and from values at and past their edges, any may be left out."""
    question = draw(st.sampled_from(_QUESTIONS))
    keys: list[str] = (
        list(question.options)
        if isinstance(question, Choice)
        else ["0", "1", "2"]
        if isinstance(question, Score)
        else []
    )
    raw: dict[str, object] = {
        "type": draw(st.sampled_from([question.kind, question.kind, "noul", 7])),
        "noul": draw(_PROBABILITIES),
        "probabilities": {key: draw(_PROBABILITIES) for key in keys},
        "confidence": draw(st.one_of(st.none(), _PROBABILITIES)),
        "choice": draw(st.sampled_from([*keys, "other", 1])),
        "score": draw(st.one_of(st.sampled_from([0, 2, 3, -1e-7, 2.0000001]), _PROBABILITIES)),
    }
    left_out = draw(st.just(set()) | st.sets(st.sampled_from(sorted(raw)), max_size=2))
    return question, {name: value for name, value in raw.items() if name not in left_out}


@settings(max_examples=400, deadline=None)
@given(_near_answers())
def test_a_nearly_well_formed_answer_decodes_fast_exactly_as_the_careful_way(
    case: tuple[Choice | Noul | Score, dict[str, object]],
) -> None:
    question, raw = case
    fast = systemone._plain_answer(question, raw)
    careful = _outcome(lambda: systemone._checked_answer("q", question, raw))
    if fast is not None:
        assert fast == careful
        assert repr(fast) == repr(careful)  # the same types too: an int 1 is read as 1.0


_OPENAI_TYPES = {"choice": "choice", "noul": "predicate", "score": "score"}


@st.composite
def _near_openai_answers(draw: st.DrawFn) -> tuple[Choice | Noul | Score, dict[str, object]]:
    """As :func:`_near_answers`, in the OpenAI Decisions shapes: a distribution is a list of
    ``{"value", "probability"}`` items, which may repeat a value, leave one out, carry a value
    of another type or not be an object at all."""
    question = draw(st.sampled_from(_QUESTIONS))
    values: list[object] = (
        list(question.options)
        if isinstance(question, Choice)
        else [0, 1, 2]
        if isinstance(question, Score)
        else []
    )
    # mostly well formed, so the fast path reads many: each oddity is drawn now and then
    probability = st.one_of(*[st.floats(min_value=0.0, max_value=1.0)] * 4, _PROBABILITIES)
    items: list[object] = [{"value": value, "probability": draw(probability)} for value in values]
    odd = st.sampled_from(
        [
            {"value": values[0] if values else "x", "probability": 0.5},  # a value again
            {"value": True, "probability": 0.5},
            {"value": "1", "probability": 0.5},
            {"value": 1, "probability": 0.5},
            {"value": "other", "probability": 0.5},
            {"probability": 0.5},
            {"value": "x"},
            "item",
        ]
    )
    if items and not draw(st.integers(0, 5)):
        items.pop(draw(st.integers(0, len(items) - 1)))
    if not draw(st.integers(0, 3)):
        items.insert(draw(st.integers(0, len(items))), draw(odd))
    kind = _OPENAI_TYPES[question.kind]
    raw: dict[str, object] = {
        "type": draw(st.sampled_from([kind] * 6 + ["noul", "refusal", 7])),
        "name": "q",
        "probability": draw(probability),
        "probabilities": items if draw(st.integers(0, 9)) else {"0": 0.5},
        "confidence": draw(st.one_of(st.none(), probability)),
        "choice": draw(st.sampled_from([*values, *values, *values, "other", 1, None])),
        "score": draw(
            st.one_of(
                st.floats(min_value=0.0, max_value=2.0),
                st.sampled_from([0, 2, 3, -1e-7, 2.0000001]),
                _PROBABILITIES,
            )
        ),
    }
    left_out = draw(st.sets(st.sampled_from(sorted(raw)), max_size=3))
    return question, {name: value for name, value in raw.items() if name not in left_out}


@settings(max_examples=1500, deadline=None)
@given(_near_openai_answers())
def test_a_nearly_well_formed_openai_answer_decodes_fast_exactly_as_the_careful_way(
    case: tuple[Choice | Noul | Score, dict[str, object]],
) -> None:
    question, raw = case
    fast = openai._plain_answer(question, raw)
    careful = _outcome(lambda: openai._decode_answer("q", question, raw, "answer 0"))  # type: ignore[arg-type]
    if fast is not None:
        assert fast == careful
        assert repr(fast) == repr(careful)  # the same types too: an int score is read as float


def test_the_openai_fast_path_reads_the_common_shapes_itself() -> None:
    """The shapes a server sends (every field; the choice, score and confidence left out) are
    read fast, not handed to the careful way; a refusal is not."""
    team, anger = _QUESTIONS[0], _QUESTIONS[3]
    assert isinstance(anger, Score)
    dist = [{"value": "billing", "probability": 0.25}, {"value": "tech", "probability": 0.75}]
    levels = [{"value": i, "probability": p} for i, p in enumerate([0.25, 0.25, 0.5])]
    assert openai._plain_answer(team, {"type": "choice", "probabilities": dist}) == (
        ChoiceAnswer("tech", {"billing": 0.25, "tech": 0.75}, 0.5)
    )
    full = {"type": "choice", "choice": "billing", "probabilities": dist, "confidence": 0.1}
    assert openai._plain_answer(team, full) == ChoiceAnswer(
        "billing", {"billing": 0.25, "tech": 0.75}, 0.1
    )
    assert openai._plain_answer(anger, {"type": "score", "probabilities": levels}) == (
        ScoreAnswer(1.25, anger.levels, (0.25, 0.25, 0.5), score_confidence([0.25, 0.25, 0.5]))
    )
    assert openai._plain_answer(_QUESTIONS[2], {"type": "predicate", "probability": 0.8}) == (
        NoulAnswer(0.8)
    )
    assert openai._plain_answer(team, {"type": "refusal", "refusal": "no"}) is None


def test_the_response_s_own_init_takes_what_attrs_would_generate() -> None:
    fields = {f.name: f.default for f in attrs.fields(DecisionResponse)}
    parameters = list(inspect.signature(DecisionResponse.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == list(fields)
    for parameter in parameters:
        default = fields[parameter.name]
        assert parameter.default == (
            inspect.Parameter.empty if default is attrs.NOTHING else default
        )


def test_a_response_from_a_codec_s_answers_is_the_one_the_full_check_makes() -> None:
    wire = systemone.decode_reply(_REQUEST, _REPLY)
    fast = DecisionResponse(_REQUEST, wire.answers, input_tokens=3, model="m", latency=0.5)
    checked = DecisionResponse(_REQUEST, dict(wire.answers), 3, "m", None, 0.5, None, None)
    assert fast == checked
    assert repr(fast) == repr(checked)
    assert hash(fast) == hash(checked)
    for again in (pickle.loads(pickle.dumps(fast)), copy.copy(fast), copy.deepcopy(fast)):
        assert again == fast
    assert attrs.evolve(fast, latency=1.0).latency == 1.0
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fast.latency = 2.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="request must be the DecisionRequest answered, not str"):
        DecisionResponse("a ticket", wire.answers)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a failed response carries no answers"):
        DecisionResponse(_REQUEST, wire.answers, failure="it broke")
    with pytest.raises(ValueError, match="answers must be a mapping of id -> answer, not list"):
        DecisionResponse(_REQUEST, [])  # type: ignore[arg-type]


def test_a_request_s_and_a_choice_s_fast_paths_refuse_and_read_as_before() -> None:
    options = {"a": "the first", "b": None}
    assert Choice("Which?", options) == Choice("Which?", MappingProxyType(options))
    with pytest.raises(ValueError, match=r"^the description of option 'b' must be a str or None"):
        Choice("Which?", {"a": None, "b": 3})  # type: ignore[dict-item]
    questions = {"q": Noul("Refund?")}
    assert DecisionRequest("a ticket", questions) == DecisionRequest(
        "a ticket", MappingProxyType(questions)
    )
    with pytest.raises(ValueError, match=r"^questions must be a mapping of id -> question, not"):
        DecisionRequest("a ticket", [Noul("Refund?")])  # type: ignore[arg-type]
    state = "a ticket"
    assert DecisionRequest(state, questions).state is state
    with pytest.raises(ValueError, match=r"^the decision state must be a string, an object or an"):
        DecisionRequest(3, questions)

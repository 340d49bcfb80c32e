"""Properties of both wire codecs over generated requests, answers and arbitrary JSON."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harness.decision import (
    Choice,
    DecisionRequest,
    Noul,
    Question,
    RequestValidationError,
    Score,
    WireReply,
    openai,
    systemone,
)
from harness.decision._json import compact_json
from harness.errors import NotAnAnswerError

from .strategies import CANARY, answers_to, requests, states, texts, wild_json

T = TypeVar("T")
E = TypeVar("E", bound=Exception)

CODECS = [pytest.param(systemone, id="systemone"), pytest.param(openai, id="openai")]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(call: Callable[[], T], expected: type[E]) -> T | E:
    """What ``call()`` returns, or the ``expected`` exception it raised (any other propagates)."""
    try:
        return call()
    except expected as error:
        return error


def over_the_wire(payload: object) -> object:
    """What a client reads: the payload written as JSON text and parsed again."""
    return json.loads(json.dumps(payload))


def server_reply(codec: ModuleType, request: DecisionRequest, data: st.DataObject) -> object:
    answers = data.draw(answers_to(request))
    if codec is openai:
        answers = dict(zip(openai.question_names(request), answers.values(), strict=True))
    return codec.encode_reply(answers, model="served-1", input_tokens=7)


@pytest.mark.parametrize("codec", CODECS)
@PROPERTY
@given(request=requests, data=st.data())
def test_a_server_shaped_reply_decodes_to_its_answers(
    codec: ModuleType, request: DecisionRequest, data: st.DataObject
) -> None:
    answers = data.draw(answers_to(request))
    keyed = answers
    if codec is openai:
        keyed = dict(zip(openai.question_names(request), answers.values(), strict=True))
    payload = codec.encode_reply(keyed, model="served-1", input_tokens=7)
    decoded = codec.decode_reply(request, over_the_wire(payload))
    assert decoded == WireReply(answers=answers, model="served-1", input_tokens=7, output_tokens=0)
    assert list(decoded.answers) == list(request.questions)


@PROPERTY
@given(request=requests, model=texts)
def test_systemone_decode_request_reads_what_encode_body_wrote(
    request: DecisionRequest, model: str
) -> None:
    body = systemone.encode_body(request, model)
    assert systemone.decode_request(json.loads(body)) == (request, model)
    assert systemone.encode_body(request, model) == body  # deterministic


@PROPERTY
@given(request=requests, model=texts)
def test_openai_decode_request_reads_what_encode_body_wrote(
    request: DecisionRequest, model: str
) -> None:
    one_option = [
        q for q in request.questions.values() if isinstance(q, Choice) and len(q.options) < 2
    ]
    assume(not one_option)  # OpenAI Decisions takes 2-255 choices; clients answer one locally
    decoded, served = openai.decode_request(json.loads(openai.encode_body(request, model)))
    assert served == model
    state = request.state
    assert decoded.state == (state if isinstance(state, str) else compact_json(state))
    assert list(decoded.questions) == list(openai.question_names(request))
    for sent, read in zip(request.questions.values(), decoded.questions.values(), strict=True):
        if isinstance(sent, Noul):  # a predicate carries its sides in its instructions
            assert isinstance(read, Noul)
            assert read.instructions.startswith(sent.instructions)
        else:
            assert read == sent


@pytest.mark.parametrize("codec", CODECS)
@PROPERTY
@given(request=requests, payload=wild_json)
def test_decoding_any_json_gives_a_reply_or_not_an_answer(
    codec: ModuleType, request: DecisionRequest, payload: object
) -> None:
    decoded = outcome(lambda: codec.decode_reply(request, payload), NotAnAnswerError)
    if isinstance(decoded, NotAnAnswerError):
        assert str(decoded).startswith("not an answer: ")
    else:
        assert isinstance(decoded, WireReply)


def _places(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    places = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            places += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            places += _places(item, (*path, index))
    return places


def _replace(value: object, path: tuple[object, ...], new: object) -> object:
    if not path:
        return new
    *head, last = path
    container = value
    for step in head:
        container = container[step]  # type: ignore[index]
    container[last] = new  # type: ignore[index]
    return value


@pytest.mark.parametrize("codec", CODECS)
@PROPERTY
@given(
    state=states,
    request=requests,
    data=st.data(),
    replacement=wild_json,
)
def test_a_corrupted_reply_is_an_answer_or_not_an_answer_never_quoting_the_state(
    codec: ModuleType,
    state: object,
    request: DecisionRequest,
    data: st.DataObject,
    replacement: object,
) -> None:
    request = DecisionRequest([CANARY, state], request.questions)  # type: ignore[list-item]
    payload = over_the_wire(server_reply(codec, request, data))
    where = data.draw(st.sampled_from(_places(payload)[1:]))  # the root is tested above
    corrupted = _replace(copy.deepcopy(payload), where, replacement)
    decoded = outcome(lambda: codec.decode_reply(request, corrupted), NotAnAnswerError)
    if isinstance(decoded, NotAnAnswerError):
        assert CANARY not in str(decoded)
    else:
        assert set(decoded.answers) == set(request.questions)


@pytest.mark.parametrize("codec", CODECS)
@PROPERTY
@given(payload=wild_json, questions=wild_json)
def test_decoding_any_request_gives_a_request_or_validation_problems(
    codec: ModuleType, payload: object, questions: object
) -> None:
    shaped = {"model": "m", "state": [CANARY, payload], "input": [CANARY], "questions": questions}
    for body in (payload, shaped):
        decoded = outcome(functools.partial(codec.decode_request, body), RequestValidationError)
        if isinstance(decoded, RequestValidationError):
            assert decoded.problems
            assert all(loc[0] == "body" for loc, _ in decoded.problems)
            if body is shaped and CANARY not in json.dumps(questions):
                assert CANARY not in str(decoded)
        else:
            request, model = decoded
            assert isinstance(request, DecisionRequest)
            assert isinstance(model, str)


_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-2, 3),
    st.booleans(),
    st.none(),
    st.text(max_size=3),
    st.sampled_from(["billing", "tech", "0", "1", "2"]),
)


@given(
    st.sampled_from(
        [
            Choice("Which team?", {"billing": None, "tech": "the tech team"}),
            Noul("Refund?"),
            Score("How angry?", ["calm", "angry", "furious"]),
        ]
    ),
    st.dictionaries(
        st.sampled_from(["type", "choice", "score", "noul", "confidence", "probabilities"]),
        _values
        | st.dictionaries(st.sampled_from(["billing", "tech", "0", "1", "2", "x"]), _values),
    ),
)
def test_the_fast_path_decodes_exactly_what_the_careful_path_does(
    question: Question, raw: dict[str, object]
) -> None:
    if "type" in raw and isinstance(raw["type"], str):
        raw["type"] = question.kind
    fast = systemone._plain_answer(question, raw)
    try:
        careful: object = systemone._checked_answer("q", question, raw)
    except NotAnAnswerError:
        careful = None
    if fast is not None:
        assert fast == careful
        assert repr(fast) == repr(careful)  # the same types too: an int 1 is read as 1.0


@given(requests.flatmap(lambda r: answers_to(r).map(lambda a: (r, a))))
def test_a_server_shaped_reply_takes_the_fast_path(case: tuple[DecisionRequest, object]) -> None:
    request, answers = case
    reply = json.loads(
        json.dumps(systemone.encode_reply(answers, model="m", input_tokens=1))  # type: ignore[arg-type]
    )
    for qid, question in request.questions.items():
        fast = systemone._plain_answer(question, reply["answers"][qid])
        careful = systemone._checked_answer(qid, question, reply["answers"][qid])
        assert fast is not None
        assert fast == careful
        assert repr(fast) == repr(careful)


@PROPERTY
@given(request=requests, others=st.lists(states, min_size=1, max_size=3), model=texts)
def test_systemone_encode_body_is_the_compact_json_of_encode_request(
    request: DecisionRequest, others: list[object], model: str
) -> None:
    # The body is put together from parts (the questions' text shared by every request asking
    # the same mapping); it must be byte for byte the compact JSON of the body as a whole, for
    # every request sharing the questions, with a model named or none.
    for state in [request.state, *others]:
        asked = DecisionRequest(state, request.questions)  # type: ignore[arg-type]  # JSON
        assert asked.questions is request.questions  # the mapping itself: shared
        for served in (model, None):
            whole = compact_json(systemone.encode_request(asked, served)).encode("utf-8")
            assert systemone.encode_body(asked, served) == whole
        assert systemone.wire_questions(asked) == systemone.encode_request(asked, None)["questions"]


def test_systemone_keeps_a_bounded_number_of_shared_questions() -> None:
    made = [DecisionRequest("the same state", {f"q{n}": Noul(f"Is it {n}?")}) for n in range(300)]
    bodies = [systemone.encode_body(r, "m") for r in made]
    assert len(systemone._shared) <= systemone._SHARED_KEPT
    for n, body in enumerate(bodies):  # what was let go is made again, the same
        assert json.loads(body)["questions"] == {
            f"q{n}": {"instructions": f"Is it {n}?", "type": "noul"}
        }
        fresh = DecisionRequest("the same state", made[n].questions)
        assert systemone.encode_body(fresh, "m") == body

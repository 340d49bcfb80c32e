"""The reply decoders are total: any bytes, any JSON value, a decoded answer or a named error.

Both codecs' ``decode_body`` (bytes in) and ``decode_reply`` (a JSON value in), and the System
One client over a real loopback server, are fuzzed with hypothesis: arbitrary bytes, arbitrary
JSON values (unbounded integers, NaN, infinities, lone surrogates, deep nests), valid replies with
one place replaced by such a value. The only exception allowed out is
:class:`harness.errors.NotAnAnswerError` (or a subclass). ``benchmarks/fuzz_decoders.py`` runs
the same question over 100,000 bodies per decoder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
    openai,
    systemone,
)
from harness.decision._wire import WireReply
from harness.errors import NotAnAnswerError, ReplyTooDeepError, ReplyTooLargeError
from harness.providers import SystemOneClient
from harness.testing import FakeSystemOneServer, Fault

REQUEST = DecisionRequest(
    "state",
    {
        "team": Choice("Which team?", {"Billing": "invoices", "Tech": None}),
        "urgent": Noul("Urgent?"),
        "anger": Score("How angry?", ("calm", "annoyed", "furious")),
    },
)
ANSWERS: dict[str, Answer] = {
    "team": ChoiceAnswer("Billing", {"Billing": 0.7, "Tech": 0.3}, 0.4),
    "urgent": NoulAnswer(0.3),
    "anger": ScoreAnswer(0.5, ("calm", "annoyed", "furious"), (0.6, 0.3, 0.1), 0.4),
}
CODECS = {"systemone": systemone, "openai": openai}

Json: TypeAlias = object
FIELDS: tuple[str, ...] = ("answers", "model", "usage", "type", "choice", "probabilities")
FIELDS += ("score", "noul", "confidence", "value", "probability", "name", "input_tokens")

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.integers(max_value=-(10**300), min_value=-(10**400)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 0.5, -0.0, 1e308, 5e-324, 2**53 + 1]),
)
texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["Billing", "Tech", "choice", "noul", "score", "predicate", "refusal", "0"]),
    st.just("\ud800"),
)
json_values: st.SearchStrategy[Json] = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                texts,
                st.sampled_from(FIELDS),
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


def replace_at(value: Json, path: list[int], new: Json) -> Json:
    """``value`` with the place ``path`` picks (indices into keys/items, walking down) set to
    ``new``."""
    if not path:
        return new
    if isinstance(value, dict) and value:
        key = list(value)[path[0] % len(value)]
        return {**value, key: replace_at(value[key], path[1:], new)}
    if isinstance(value, list) and value:
        index = path[0] % len(value)
        return [*value[:index], replace_at(value[index], path[1:], new), *value[index + 1 :]]
    return new


def valid(codec: str) -> Json:
    if codec == "systemone":
        return systemone.encode_reply(ANSWERS, model="m", input_tokens=5)
    names = dict(zip(REQUEST.questions, openai.question_names(REQUEST), strict=True))
    return openai.encode_reply({names[k]: a for k, a in ANSWERS.items()}, model="m", input_tokens=5)


def dumped(value: Json) -> bytes:
    return json.dumps(value, allow_nan=True).encode("utf-8", errors="surrogatepass")


def decoded_or_named(decode: Callable[[], WireReply]) -> WireReply | None:
    """The decoded reply, or None after the codec's own error; anything else fails the test."""
    refused: NotAnAnswerError | None = None
    try:
        reply = decode()
    except NotAnAnswerError as error:
        refused = error
    if refused is not None:
        assert refused.message.startswith("not an answer")
        return None
    for answer in reply.answers.values():  # what came out is well-formed
        if isinstance(answer, ChoiceAnswer):
            assert all(0.0 <= p <= 1.0 for p in answer.probabilities.values())
        if reply.model is not None:
            reply.model.encode("utf-8")
    return reply


@pytest.mark.parametrize("codec", list(CODECS))
@given(body=st.binary(max_size=200))
def test_any_bytes(codec: str, body: bytes) -> None:
    decoded_or_named(lambda: CODECS[codec].decode_body(REQUEST, body))


@pytest.mark.parametrize("codec", list(CODECS))
@given(value=json_values)
def test_any_json_value(codec: str, value: Json) -> None:
    decoded_or_named(lambda: CODECS[codec].decode_reply(REQUEST, value))
    decoded_or_named(lambda: CODECS[codec].decode_body(REQUEST, dumped(value)))


@pytest.mark.parametrize("codec", list(CODECS))
@given(
    paths=st.lists(st.lists(st.integers(0, 10), max_size=6), min_size=1, max_size=3),
    news=st.lists(json_values, min_size=3, max_size=3),
    drop_fields=st.booleans(),
)
def test_a_valid_reply_with_places_replaced(
    codec: str, paths: list[list[int]], news: list[Json], drop_fields: bool
) -> None:
    reply = valid(codec)
    if drop_fields:  # the spec's OpenAI reply carries only the distribution
        reply = json.loads(
            json.dumps(reply).replace('"choice": "Billing", ', "").replace('"score": 0.5, ', "")
        )
    for path, new in zip(paths, news, strict=False):
        reply = replace_at(reply, path, new)
    decoded_or_named(lambda: CODECS[codec].decode_body(REQUEST, dumped(reply)))


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,
        b'{"answers":' * 50_000,
        b"[" * 33 + b"]" * 33,
        b'{"answers": {"urgent": {"noul": 1' + b"0" * 400 + b"}}}",
        b'{"answers": {"urgent": {"noul": NaN}}}',
        b'{"answers": {"urgent": {"noul": Infinity}}}',
        b'{"answers": {"urgent": {"noul": 1' + b"0" * 5000 + b"}}}",
        b"\xff\xfe\x00",
        b"",
    ],
)
def test_known_hostile_bodies_are_refused_by_name(codec: str, body: bytes) -> None:
    with pytest.raises(NotAnAnswerError) as refused:
        CODECS[codec].decode_body(REQUEST, body)
    if body.startswith((b"[[", b'{"answers":{"answers"')):
        assert isinstance(refused.value, ReplyTooDeepError)
        assert "max_reply_depth" in refused.value.message


def test_integer_probabilities_past_float_range_are_refused_not_overflowed() -> None:
    names = openai.question_names(REQUEST)
    reply = {
        "answers": [
            {
                "type": "choice",
                "name": names[0],
                "probabilities": [
                    {"value": "Billing", "probability": 10**400},
                    {"value": "Tech", "probability": 0},
                ],
            },
            {"type": "predicate", "name": names[1], "probability": 0.5},
            {"type": "score", "name": names[2], "probabilities": []},
        ]
    }
    with pytest.raises(NotAnAnswerError, match="not a probability"):
        openai.decode_body(REQUEST, dumped(reply))
    usage = {**valid("systemone"), "usage": {"input_tokens": 10**400}}  # type: ignore[dict-item]
    assert systemone.decode_body(REQUEST, dumped(usage)).input_tokens is None


def test_the_bounds_are_the_entrys_and_named() -> None:
    body = dumped(valid("systemone"))
    with pytest.raises(ReplyTooLargeError, match="max_reply_bytes"):
        systemone.decode_body(REQUEST, body, max_bytes=len(body) - 1)
    assert systemone.decode_body(REQUEST, body, max_bytes=len(body)).answers
    with pytest.raises(ReplyTooDeepError):
        systemone.decode_body(REQUEST, body, max_depth=3)
    assert systemone.decode_body(REQUEST, body, max_depth=4).answers


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(body=st.one_of(st.binary(max_size=100), json_values.map(dumped)))
async def test_the_client_over_a_loopback_server_is_total(body: bytes) -> None:
    async with FakeSystemOneServer() as server:
        server.faults = lambda _: Fault("reply", 200, body)
        client = SystemOneClient()
        try:
            response: DecisionResponse | NotAnAnswerError
            try:
                response = await client.decide(REQUEST, server.entry())
            except NotAnAnswerError as error:
                response = error
            if isinstance(response, NotAnAnswerError):
                assert response.status == 200
            else:
                assert response.success
        finally:
            await client.aclose()

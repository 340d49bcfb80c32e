"""The steps both wire codecs take, so that each codec module keeps only its wire's shape.

Client side: a request body (``model`` first), the compact body encoded once per request, a reply
body read within its bounds, an answer checked to be an object of the type asked, a noul's
probability and a choice's or score's distribution structured and checked (with the same
messages on both wires), and the reply finished with the model and token counts the server
reports. Writing a reply: what a choice or score answer picks. The server side's steps (problems,
texts, the request built) are in ``_server.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from . import _answers
from ._frozen_map import FrozenMap
from ._json import JsonValue, json_bytes, json_kind
from ._questions import Choice, Score
from ._request import DecisionRequest
from ._wire import (
    MAX_REPLY_BYTES,
    MAX_REPLY_DEPTH,
    MAX_TOKEN_COUNT,
    MODEL_CHARS,
    ChoiceWire,
    NoulWire,
    PredicateWire,
    ScoreWire,
    WireReply,
    choice_from_wire,
    decoded_reply,
    load_reply,
    not_an_answer,
    read_usage,
    score_from_wire,
    served_model,
    shown_type,
    structure,
)

__all__ = [
    "BodyDecoder",
    "BodyEncoder",
    "answer_object",
    "body_decoder",
    "body_encoder",
    "check_type",
    "distribution_answer",
    "distribution_keys",
    "fast_choice",
    "fast_score",
    "noul_answer",
    "picked",
    "reply_model",
    "request_body",
    "wire_reply",
]

RequestEncoder = Callable[[DecisionRequest, str | None], dict[str, JsonValue]]
"""A codec's ``encode_request``."""

ReplyDecoder = Callable[[DecisionRequest, object], WireReply]
"""A codec's ``decode_reply``."""

PickFiller = Callable[[dict[str, object], list[str], bool], None]
"""A wire's way to fill in a pick (``choice`` or ``score``) its reply may leave out: the shaped
answer, the distribution's keys, and whether the question is a choice."""


class BodyEncoder(Protocol):
    """A codec's ``encode_body``."""

    def __call__(self, request: DecisionRequest, model: str | None) -> bytes:
        """The request body for ``request`` asking ``model``."""
        ...


class BodyDecoder(Protocol):
    """A codec's ``decode_body``."""

    def __call__(
        self,
        request: DecisionRequest,
        body: bytes,
        *,
        max_bytes: int = MAX_REPLY_BYTES,
        max_depth: int = MAX_REPLY_DEPTH,
    ) -> WireReply:
        """The answers in a reply body (any bytes)."""
        ...


def _named(function: Callable[..., object], module: str, doc: str) -> None:
    """Give a codec function made here its codec's name and docstring (for help() and reprs)."""
    function.__module__ = module
    function.__qualname__ = function.__name__
    function.__doc__ = doc


def request_body(model: str | None, **fields: JsonValue) -> dict[str, JsonValue]:
    """A request body: ``model`` (left out only when None), then the wire's ``fields`` in order."""
    body: dict[str, JsonValue] = {} if model is None else {"model": model}
    body.update(fields)
    return body


def body_encoder(wire: str, module: str, encode_request: RequestEncoder) -> BodyEncoder:
    """The ``encode_body`` of the codec ``module`` for ``wire``: ``encode_request``'s body as
    compact, deterministic UTF-8 JSON (what is sent and what is priced), made once per request,
    wire and model."""

    def encode(request: DecisionRequest, model: str | None) -> bytes:
        return json_bytes(encode_request(request, model), finite=True)  # a checked state

    return made_body_encoder(wire, module, encode)


def made_body_encoder(
    wire: str, module: str, encode: Callable[[DecisionRequest, str | None], bytes]
) -> BodyEncoder:
    """The ``encode_body`` of the codec ``module`` for ``wire`` from ``encode``, which makes the
    body's bytes itself (as :func:`body_encoder`'s would be): made once per request, wire and
    model."""

    def encode_body(request: DecisionRequest, model: str | None) -> bytes:
        return request.encoded(wire, model, encode)

    _named(
        encode_body,
        module,
        "The request body as compact, deterministic UTF-8 JSON (what is sent and what is priced).",
    )
    return encode_body


def body_decoder(wire_name: str, module: str, decode_reply: ReplyDecoder) -> BodyDecoder:
    """The ``decode_body`` of the codec ``module``: the body read within its bounds
    (:func:`load_reply`), then ``decode_reply``."""

    def decode_body(
        request: DecisionRequest,
        body: bytes,
        *,
        max_bytes: int = MAX_REPLY_BYTES,
        max_depth: int = MAX_REPLY_DEPTH,
    ) -> WireReply:
        return decode_reply(request, load_reply(body, max_bytes=max_bytes, max_depth=max_depth))

    _named(
        decode_body,
        module,
        f"""The answers in a {wire_name} reply body (any bytes): a :class:`WireReply` or
    :class:`harness.errors.NotAnAnswerError` (:class:`~harness.errors.ReplyTooLargeError`,
    :class:`~harness.errors.ReplyTooDeepError` past the bounds), never another exception.""",
    )
    return decode_body


def wire_reply(
    body: Mapping[object, object], answers: FrozenMap[str, _answers.Answer]
) -> WireReply:
    """The decoded reply: ``answers`` (the codec's checked answers), and the model and token
    counts ``body`` reports (unknown where it reports them in a shape not understood). The
    common shapes (a ``usage`` dict of ints, a short printable ASCII model name) are read
    directly; any other goes through :func:`read_usage` and :func:`served_model`, which give the
    same for these."""
    input_tokens: int | None
    output_tokens: int | None
    usage = body.get("usage")
    if (
        type(usage) is dict
        and type(given_in := usage.get("input_tokens")) is int
        and type(given_out := usage.get("output_tokens")) is int
        and 0 <= given_in <= MAX_TOKEN_COUNT
        and 0 <= given_out <= MAX_TOKEN_COUNT
    ):
        input_tokens, output_tokens = given_in, given_out
    else:
        input_tokens, output_tokens = read_usage(usage)
    given = body.get("model")
    model = (
        given
        if type(given) is str
        and 0 < len(given) <= MODEL_CHARS
        and given.isascii()
        and given.isprintable()
        else served_model(given)
    )
    return decoded_reply(answers, model, input_tokens, output_tokens)


def fast_choice(
    choice: object, probabilities: dict[str, float], confidence: float | None
) -> _answers.ChoiceAnswer | None:
    """A fast path's choice answer from values it has checked (``probabilities`` one float in
    [0, 1] per option, ``confidence`` one or None): ``choice`` must be one of the options, a
    missing confidence is the reference one; None sends the answer the careful way."""
    if type(choice) is not str or choice not in probabilities:
        return None
    if confidence is None:
        confidence = _answers.choice_confidence(list(probabilities.values()))
    return _answers.trusted_choice(choice, probabilities, confidence)


def fast_score(
    score: float, levels: tuple[str, ...], numbers: list[float], confidence: float | None
) -> _answers.ScoreAnswer | None:
    """A fast path's score answer from values it has checked (``score`` a number, ``numbers``
    one float in [0, 1] per level, ``confidence`` one or None): ``score`` must lie on the scale
    (no rounding slack: the careful way clamps), a missing confidence is the reference one;
    None sends the answer the careful way."""
    if not 0.0 <= score <= len(levels) - 1:
        return None
    if confidence is None:
        confidence = _answers.score_confidence(numbers)
    return _answers.trusted_score(float(score), levels, tuple(numbers), confidence)


def reply_model(body: Mapping[object, object]) -> str | None:
    """The model ``body`` names, as :func:`wire_reply` reads it (for a client that needs no
    more of a reply than its answers and its model)."""
    given = body.get("model")
    if (
        type(given) is str
        and 0 < len(given) <= MODEL_CHARS
        and given.isascii()
        and given.isprintable()
    ):
        return given
    return served_model(given)


def answer_object(raw: object, where: str) -> Mapping[object, object]:
    """One answer as an object, or NotAnAnswerError naming what it is instead."""
    if not isinstance(raw, Mapping):
        raise not_an_answer(f"{where} is {json_kind(raw)}, not an object")
    return raw


def check_type(given: object, expected: str, question_id: str, where: str) -> None:
    """Refuse an answer whose ``type`` is not the one its question was asked as."""
    if given != expected:
        raise not_an_answer(
            f"{where} has type {shown_type(given)}, but question {question_id!r} was asked as "
            f"a {expected}"
        )


_NOUL_WIRES = {"noul": NoulWire, "probability": PredicateWire}


def noul_answer(raw: Mapping[object, object], field: str, where: str) -> _answers.NoulAnswer:
    """A noul's answer from its one probability field (``noul`` or ``probability``)."""
    shaped = {name: raw[name] for name in (field,) if name in raw}
    return _answers.NoulAnswer(float(getattr(structure(shaped, _NOUL_WIRES[field], where), field)))


def distribution_keys(question: Choice | Score) -> list[str]:
    """The keys of a choice's or score's distribution: its options, or ``"0".."n-1"``."""
    if isinstance(question, Choice):
        return list(question.options)
    return [str(index) for index in range(len(question.levels))]


def distribution_answer(
    question_id: str,
    question: Choice | Score,
    raw: Mapping[object, object],
    table: Mapping[object, object],
    wanted: Sequence[object],
    where: str,
    fill: PickFiller | None = None,
) -> _answers.ChoiceAnswer | _answers.ScoreAnswer:
    """A choice's or score's answer from ``raw`` and its probabilities ``table``, which the wire
    keys by ``wanted`` (one value for each of :func:`distribution_keys`, in order): refuses a
    missing probability by its option or level, then structures the pick, the probabilities and
    the confidence strictly. ``fill`` may first fill in a pick the reply left out."""
    missing = [value for value in wanted if value not in table]
    if missing:
        what = "option" if isinstance(question, Choice) else "level"
        raise not_an_answer(
            f"{where} has no probability for {what} {', '.join(map(repr, missing))}"
        )
    keys = distribution_keys(question)
    shaped = {name: raw[name] for name in ("choice", "score", "confidence") if name in raw}
    shaped["probabilities"] = {key: table[value] for key, value in zip(keys, wanted, strict=True)}
    if fill is not None:
        fill(shaped, keys, isinstance(question, Choice))
    if isinstance(question, Choice):
        choice = structure(shaped, ChoiceWire, where)
        values = [choice.probabilities[key] for key in keys]
        return choice_from_wire(question_id, question, choice.choice, values, choice.confidence)
    score = structure(shaped, ScoreWire, where)
    values = [score.probabilities[key] for key in keys]
    return score_from_wire(question_id, question, score.score, values, score.confidence)


def picked(answer: _answers.ChoiceAnswer | _answers.ScoreAnswer) -> tuple[str, JsonValue]:
    """A choice's or score's answer ``type`` on both wires, and what it picks (the field of that
    name: the option chosen, or the score)."""
    if isinstance(answer, _answers.ChoiceAnswer):
        return "choice", answer.choice
    return "score", answer.score

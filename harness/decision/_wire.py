"""What both wire codecs share: the decoded reply, request validation problems, and the cattrs
converter that structures reply shapes strictly (no coercion: a string is never a number).

One concern, past 400 lines: a reply's reading as both wires read it (its bounds, its shapes,
the checks of each value), kept whole so both wires read a reply alike; the steps the codecs take
in turn are in ``_codec.py``, the server's in ``_server.py``."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import NewType, TypeAlias, TypeVar

import attrs
import cattrs
import cattrs.preconf.orjson
import cattrs.v

from harness.errors import (
    HarnessError,
    NotAnAnswerError,
    ReplyTooDeepError,
    ReplyTooLargeError,
)

from ._answers import Answer, ChoiceAnswer, ScoreAnswer, choice_confidence, score_confidence
from ._frozen_map import FrozenMap
from ._json import JsonValue, compact_json, json_kind, load_json, plain_json
from ._questions import Choice, Score

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_DEPTH",
    "ChoiceWire",
    "Loc",
    "NoulWire",
    "PredicateWire",
    "Probability",
    "RequestValidationError",
    "ScoreWire",
    "WireNumber",
    "WireReply",
    "choice_from_wire",
    "decoded_reply",
    "is_probability",
    "load_reply",
    "not_an_answer",
    "read_usage",
    "reply_object",
    "score_from_wire",
    "served_model",
    "shown_type",
    "structure",
    "token_count",
    "wire_text",
]

T = TypeVar("T")

Loc: TypeAlias = tuple[str | int, ...]
"""Where a problem is in a request body, FastAPI style: ``("body", "questions", "q", ...)``."""

Probability = NewType("Probability", float)
"""A number in [0, 1] on the wire."""

WireNumber = NewType("WireNumber", float)
"""A finite number on the wire (an int or a float, never a bool or a string)."""

MAX_REPLY_BYTES = 8 * 1024 * 1024
"""The default largest reply body read (a catalog entry's ``max_reply_bytes``): 400 questions of
255 options each fit."""

MAX_REPLY_DEPTH = 32
"""The default deepest nesting of a reply body (``max_reply_depth``): an answer needs 4."""

MAX_TOKEN_COUNT = 2**53
"""The largest token count read from ``usage``; a larger one is "unknown"."""

SCORE_SLACK = 1e-6
"""How far past the end of its scale a score may land through rounding before it is refused."""


def _answers(value: Mapping[str, Answer]) -> FrozenMap[str, Answer]:
    return FrozenMap.of(value)


@attrs.frozen
class WireReply:
    """A decoded reply: the answers by question id (in the request's order) and what the server
    reported. ``None`` means the server did not say (or said it in a shape not understood)."""

    answers: Mapping[str, Answer] = attrs.field(converter=_answers)
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


_new = object.__new__
# Each field's own slot setter: it sets the value as the class's ``__init__`` does, without the
# name's lookup ``object.__setattr__`` makes.
_SET_ANSWERS = WireReply.__dict__["answers"].__set__
_SET_MODEL = WireReply.__dict__["model"].__set__
_SET_INPUT_TOKENS = WireReply.__dict__["input_tokens"].__set__
_SET_OUTPUT_TOKENS = WireReply.__dict__["output_tokens"].__set__


def decoded_reply(
    answers: FrozenMap[str, Answer],
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
) -> WireReply:
    """A :class:`WireReply` made without its converter, from ``answers`` that already are a
    frozen map (a codec's checked answers): the same object the constructor makes. (The
    answers' trusted constructors in ``_answers.py`` have this shape too: each sets its own
    class's fields, so none serves another.)"""
    reply: WireReply = _new(WireReply)
    _SET_ANSWERS(reply, answers)
    _SET_MODEL(reply, model)
    _SET_INPUT_TOKENS(reply, input_tokens)
    _SET_OUTPUT_TOKENS(reply, output_tokens)
    return reply


class RequestValidationError(HarnessError, ValueError):
    """A request body a server refuses: each problem is ``(loc, msg)``, for a 422 ``detail[]``.

    ``loc`` starts with ``"body"`` as FastAPI's does; ``msg`` never quotes the state.
    """

    def __init__(self, problems: Sequence[tuple[Loc, str]]) -> None:
        self.problems: list[tuple[Loc, str]] = list(problems)
        shown = "; ".join(f"{'.'.join(map(str, loc))}: {msg}" for loc, msg in self.problems)
        super().__init__(f"invalid decision request: {shown}")

    def detail(self) -> list[dict[str, JsonValue]]:
        """The problems as a FastAPI-shaped ``detail`` list: ``{"loc", "msg", "type"}`` each."""
        return [{"loc": list(loc), "msg": msg, "type": "value_error"} for loc, msg in self.problems]


class _WireValueError(HarnessError, ValueError):
    """A hook's refusal; its message is shown as is."""


def _shown_number(value: int | float) -> str:
    if isinstance(value, int) and abs(value) > 10**15:
        return "a very large integer"
    return repr(value)


def _number(value: object, _: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _WireValueError(f"is {json_kind(value)}, not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise _WireValueError("is not a finite number")
    if isinstance(value, int) and abs(value) > 10**15:
        raise _WireValueError("is a very large integer, not a sensible number here")
    return float(value)


def is_probability(value: object) -> bool:
    """A number in [0, 1] (an int or float, never a bool; a huge integer compares exactly): the
    quick test of the decoders' fast paths, which accept only what the converter accepts."""
    return type(value) in (int, float) and 0 <= value <= 1  # type: ignore[operator]  # a number


def _probability(value: object, _: object) -> Probability:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _WireValueError(f"is {json_kind(value)}, not a probability")
    if not 0 <= value <= 1:
        raise _WireValueError(f"is {_shown_number(value)}, not a probability in [0, 1]")
    return Probability(float(value))


def _string(value: object, _: object) -> str:
    if not isinstance(value, str):
        raise _WireValueError(f"is {json_kind(value)}, not a string")
    return value


def _integer(value: object, _: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _WireValueError(f"is {json_kind(value)}, not an integer")
    return value


_converter = cattrs.preconf.orjson.make_converter(forbid_extra_keys=False, detailed_validation=True)
"""cattrs' converter pre-configured for orjson (what the bodies are read with), its hooks for the
wire's scalars replaced by the strict ones below."""
_converter.register_structure_hook(str, _string)
_converter.register_structure_hook(int, _integer)
_converter.register_structure_hook(float, _number)
_converter.register_structure_hook(WireNumber, _number)
_converter.register_structure_hook(Probability, _probability)


def _format(exc: BaseException, type_: type | None) -> str:
    if isinstance(exc, _WireValueError):
        return str(exc)
    if isinstance(exc, KeyError):
        return "is missing"
    return cattrs.v.format_exception(exc, type_)


def not_an_answer(message: str) -> NotAnAnswerError:
    """The error for a reply that is not an answer, prefixed so a reader knows what kind it is."""
    return NotAnAnswerError(f"not an answer: {message}")


def structure(raw: object, shape: type[T], where: str) -> T:
    """``raw`` structured as the wire shape ``shape`` (an attrs class), or NotAnAnswerError whose
    message names each offending field under ``where``, never its value."""
    try:
        return _converter.structure(raw, shape)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError, AttributeError) as error:
        problems = cattrs.transform_error(error, path=where, format_exception=_format)
        shown = "; ".join(f"{place} {what}".strip() for what, place in map(_split, problems))
        raise not_an_answer(shown) from error


def _split(problem: str) -> tuple[str, str]:
    what, _, place = problem.rpartition(" @ ")
    return (what, place) if what else (problem, "")


def read_usage(raw: object) -> tuple[int | None, int | None]:
    """(input tokens, output tokens) from a ``usage`` object; unknown (None) where absent, not a
    non-negative integer, or the whole object is not understood. Zeros are kept as reported."""
    if not isinstance(raw, Mapping):
        return None, None
    return token_count(raw.get("input_tokens")), token_count(raw.get("output_tokens"))


def token_count(value: object) -> int | None:
    """A token count as reported: a non-negative integer up to ``MAX_TOKEN_COUNT``, else
    unknown (None)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    return None


def load_reply(
    body: bytes, *, max_bytes: int = MAX_REPLY_BYTES, max_depth: int = MAX_REPLY_DEPTH
) -> object:
    """A reply body parsed as JSON, or the codec's own error: :class:`ReplyTooLargeError` past
    ``max_bytes``, :class:`ReplyTooDeepError` past ``max_depth`` levels of arrays and objects,
    :class:`NotAnAnswerError` for bytes that are not JSON text (bad encoding, an integer of more
    than 4,300 digits, anything else JSON forbids). ``NaN`` and ``Infinity`` literals are read
    (servers put them in fields nobody uses); the decoders refuse them wherever a number
    matters."""
    if len(body) > max_bytes:
        raise ReplyTooLargeError(
            f"not an answer: the reply body has {len(body)} bytes, more than the entry's "
            f"max_reply_bytes ({max_bytes}); raise max_reply_bytes if the server is right"
        )
    if _too_deep(body, max_depth):
        raise ReplyTooDeepError(
            f"not an answer: the reply body nests arrays and objects more than {max_depth} "
            "levels deep (the entry's max_reply_depth); raise max_reply_depth if the server is "
            "right"
        )
    try:
        return load_json(body)
    except (ValueError, RecursionError) as error:
        reason = (
            "it is not UTF-8 JSON text" if isinstance(error, UnicodeError) else "it is not JSON"
        )
        raise not_an_answer(f"the reply body cannot be read: {reason}") from None


_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
"""A JSON string, or an unterminated one to the end of the body (so the scan stays linear)."""
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_INNERMOST = (b"[]", b"{}", b"[}", b"{]")


def _too_deep(body: bytes, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``body`` outside strings.

    A body with at most ``limit`` opening brackets cannot be (most bodies: no scan). Otherwise
    strings are dropped, the brackets kept, and ``limit`` times every innermost pair removed:
    a structure at most ``limit`` deep is then gone, so a bracket left means deeper (or
    unbalanced, which the reader would refuse anyway). Every step runs in C over the bytes.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        before = len(brackets)
        for pair in _INNERMOST:
            brackets = brackets.replace(pair, b"")
        if len(brackets) == before:
            break
    return b"[" in brackets or b"{" in brackets


MODEL_CHARS = 200
"""The longest served model name kept; a longer one (or one that is not text) is "unknown"."""


def served_model(value: object) -> str | None:
    """The ``model`` a reply names, when it is a printable string of sensible length."""
    if not isinstance(value, str) or not 0 < len(value) <= MODEL_CHARS:
        return None
    if not value.isprintable() or not _encodable(value):
        return None
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
        return False
    return True


def reply_object(payload: object) -> Mapping[object, object]:
    """The reply body as an object, or NotAnAnswerError naming what it is instead."""
    if not isinstance(payload, Mapping):
        raise not_an_answer(f"the reply body is {json_kind(payload)}, not a JSON object")
    return payload


def choice_from_wire(
    question_id: str,
    question: Choice,
    choice: str,
    probabilities: Sequence[float],
    confidence: float | None,
) -> ChoiceAnswer:
    """The answer to ``question`` from wire values already checked as probabilities, in option
    order; refuses a choice that is not one of the options. A missing confidence is the
    reference one (:func:`choice_confidence`)."""
    options = list(question.options)
    if choice not in question.options:
        raise not_an_answer(
            f"answer {question_id!r} chose a value that is not one of its options "
            f"({', '.join(map(repr, options))})"
        )
    if confidence is None:
        confidence = choice_confidence(probabilities)
    return ChoiceAnswer(choice, dict(zip(options, probabilities, strict=True)), confidence)


def score_from_wire(
    question_id: str,
    question: Score,
    score: float,
    probabilities: Sequence[float],
    confidence: float | None,
) -> ScoreAnswer:
    """The answer to ``question`` from wire values already checked, levels lowest first. A score
    past either end of the scale by rounding (at most ``SCORE_SLACK``) is clamped; further is
    refused. A missing confidence is the reference one (:func:`score_confidence`)."""
    top = len(question.levels) - 1
    if not -SCORE_SLACK <= score <= top + SCORE_SLACK:
        raise not_an_answer(
            f"answer {question_id!r} has score {score!r}, outside its scale [0, {top}]"
        )
    if confidence is None:
        confidence = score_confidence(probabilities)
    return ScoreAnswer(min(max(score, 0.0), float(top)), question.levels, probabilities, confidence)


def wire_text(value: object) -> str | None:
    """Instructions or a description as text: a string as is, an object or array (which the
    System One docs allow) as its compact JSON; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (Mapping, list)):
        try:
            return compact_json(plain_json(value, "the text"), finite=True)
        except ValueError:
            return None
    return None


@attrs.frozen
class NoulWire:
    """A System One noul answer's fields: ``{"noul": p}``."""

    noul: Probability


@attrs.frozen
class PredicateWire:
    """An OpenAI Decisions predicate answer's fields: ``{"probability": p}``."""

    probability: Probability


@attrs.frozen
class ChoiceWire:
    """A choice answer's fields, probabilities already narrowed to the options asked."""

    choice: str
    probabilities: dict[str, Probability]
    confidence: Probability | None = None


@attrs.frozen
class ScoreWire:
    """A score answer's fields, probabilities keyed ``"0".."n-1"`` for the levels asked."""

    score: WireNumber
    probabilities: dict[str, Probability]
    confidence: Probability | None = None


def shown_type(value: object) -> str:
    """An answer's ``type`` for a message: quoted when it is a known word, else described (a reply
    may carry anything there, and nothing a server sends is quoted blindly)."""
    if isinstance(value, str) and value in {"noul", "choice", "score", "predicate", "refusal"}:
        return repr(value)
    if value is None:
        return "no type"
    return f"an unrecognised type ({json_kind(value)})"

"""The System One wire: ``POST /v1/systemone`` bodies and replies (ARCHITECTURE.md section 4).

Client side: :func:`encode_request` / :func:`encode_body` build the body, :func:`decode_reply`
reads the reply (lenient on extra fields and answers never asked, strict on missing ones).
Server side (the project's fake server, ``harness serve``): :func:`decode_request` reads a body
or lists its problems for a 422, :func:`encode_reply` writes the answers as the reference does.
The steps both wires take are in ``_codec.py``; the fast path :func:`_plain_answer` is this
wire's own (see ``openai.py`` for how the two differ).

>>> from harness.decision import DecisionRequest, Noul
>>> encode_body(DecisionRequest("hi", {"q": Noul("Greeting?")}), "jev-latest")
b'{"model":"jev-latest","state":"hi","questions":{"q":{"instructions":"Greeting?","type":"noul"}}}'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from . import _codec, _server, _wire
from ._answers import (
    Answer,
    ChoiceAnswer,
    NoulAnswer,
    ScoreAnswer,
    trusted_noul,
)
from ._frozen_map import FrozenMap
from ._json import JsonValue, json_bytes
from ._questions import Choice, Noul, Question, Score
from ._request import DecisionRequest
from ._response import checked_answers
from ._wire import Loc, RequestValidationError, WireReply

__all__ = [
    "REQUEST_ID_HEADER",
    "RequestValidationError",
    "WireReply",
    "decode_body",
    "decode_reply",
    "decode_request",
    "encode_body",
    "encode_reply",
    "encode_request",
]

REQUEST_ID_HEADER: Final = "x-typesafe-request-id"
"""The reply header carrying the server's id for the request (every server harness runs writes
it; every client reads it into the response's ``request_id``)."""


def _encode_question(question: Question) -> dict[str, JsonValue]:
    encoded: dict[str, JsonValue] = {"instructions": question.instructions, "type": question.kind}
    if isinstance(question, Choice):
        encoded["criteria"] = dict(question.options.items())  # a frozen map's items: no lookups
    elif isinstance(question, Score):
        encoded["criteria"] = list(question.levels)
    else:
        sides: dict[str, JsonValue] = {}
        if question.when_true is not None:
            sides["true"] = question.when_true
        if question.when_false is not None:
            sides["false"] = question.when_false
        if sides:
            encoded["criteria"] = sides
    return encoded


def wire_questions(request: DecisionRequest) -> Mapping[str, object]:
    """The request's questions as :func:`encode_request` puts them in its body, made once per
    questions mapping and shared (:func:`_shared_questions`): read them, never change them (the
    embedded model reads them as they are)."""
    forms = request._wire_questions
    questions = forms.get("systemone")
    if questions is None:
        questions = forms["systemone"] = _shared_questions(request.questions)[1]
    return questions


def encode_request(request: DecisionRequest, model: str | None) -> dict[str, JsonValue]:
    """The request body: ``model`` (left out only when None), ``state``, ``questions`` in order."""
    questions = {qid: _encode_question(q) for qid, q in request.questions.items()}
    return _codec.request_body(model, state=request.state, questions=questions)


_SHARED_KEPT: Final = 32
"""Questions mappings whose wire forms are kept (all are let go when one more comes): a batch or
an eval asks one or a few; a thinker's turns ask new ones each time, and each entry holds its
questions three times over (the mapping, the forms, the text), so few are kept."""

_shared: dict[int, tuple[Mapping[str, Question], Mapping[str, object], bytes | None]] = {}


def _shared_questions(
    questions: Mapping[str, Question],
) -> tuple[Mapping[str, Question], Mapping[str, object], bytes | None]:
    """``questions`` (a request's own mapping), their wire forms and those forms' compact JSON
    bytes (None when a text holds a lone surrogate, which UTF-8 cannot carry: the body is refused
    when made), made once per mapping object: requests asking the same questions of other states
    (``DecisionRequest(state, other.questions)``, a batch's or an eval's items) share them, so
    each request's body encodes only its state. Keyed by the mapping's identity; the entry holds
    the mapping, so the id cannot be reused while it is kept."""
    found = _shared.get(id(questions))
    if found is not None and found[0] is questions:
        return found
    forms = {qid: _encode_question(q) for qid, q in questions.items()}
    try:
        text: bytes | None = json_bytes(forms, finite=True)  # texts only
    except UnicodeEncodeError:
        text = None
    made = (questions, forms, text)
    if len(_shared) >= _SHARED_KEPT:
        _shared.clear()
    _shared[id(questions)] = made
    return made


def _body(request: DecisionRequest, model: str | None) -> bytes:
    """:func:`encode_request`'s body as compact JSON (``json_bytes`` of it, byte for byte),
    with the questions' text shared by every request asking the same mapping: the state is the
    only part encoded per request."""
    shared = _shared_questions(request.questions)
    questions = json_bytes(shared[1]) if shared[2] is None else shared[2]  # None: refused here
    state = json_bytes(request.state, finite=True)  # checked by the request (plain_json)
    if model is None:
        return b'{"state":' + state + b',"questions":' + questions + b"}"
    return (
        b'{"model":'
        + json_bytes(model, finite=True)
        + b',"state":'
        + state
        + b',"questions":'
        + questions
        + b"}"
    )


encode_body = _codec.made_body_encoder("systemone", __name__, _body)


def _plain_answer(question: Question, raw: object) -> Answer | None:
    """A well-formed answer built without the converter, or None to go the careful way. It
    accepts only what the careful way accepts unchanged, so both give the same answer: every
    value it passes on is checked here, so the answer is made with the trusted constructors.
    A probability that is a float in [0, 1] is taken as it is; any other value is tested the
    converter's way (:func:`_wire.is_probability`: an int 0 or 1 passes, as a float)."""
    if type(raw) is not dict or raw.get("type", question.kind) != question.kind:
        return None
    if isinstance(question, Noul):
        noul = raw.get("noul")
        if type(noul) is float and 0.0 <= noul <= 1.0:
            return trusted_noul(noul)
        return trusted_noul(float(noul)) if _wire.is_probability(noul) else None  # type: ignore[arg-type]
    table = raw.get("probabilities")
    if type(table) is not dict:
        return None
    confidence = raw.get("confidence")
    if confidence is not None and (type(confidence) is not float or not 0.0 <= confidence <= 1.0):
        if not _wire.is_probability(confidence):
            return None
        confidence = float(confidence)  # an int 0 or 1
    if isinstance(question, Choice):
        probabilities: dict[str, float] = {}
        for option in question.options:
            value = table.get(option)
            if type(value) is not float or not 0.0 <= value <= 1.0:
                if not _wire.is_probability(value):
                    return None
                value = float(value)  # type: ignore[arg-type]  # an int 0 or 1
            probabilities[option] = value
        return _codec.fast_choice(raw.get("choice"), probabilities, confidence)
    levels = question.levels
    numbers: list[float] = []
    for key in _level_keys(len(levels)):
        value = table.get(key)
        if type(value) is not float or not 0.0 <= value <= 1.0:
            if not _wire.is_probability(value):
                return None
            value = float(value)  # type: ignore[arg-type]  # an int 0 or 1
        numbers.append(value)
    score = raw.get("score")
    if type(score) is not int and type(score) is not float:
        return None
    return _codec.fast_score(score, levels, numbers, confidence)


_LEVEL_KEYS = tuple(str(index) for index in range(64))


def _level_keys(count: int) -> Sequence[str]:
    """A score's distribution keys on the wire, ``"0".."count-1"`` (those of the common sizes
    made once)."""
    if count <= len(_LEVEL_KEYS):
        return _LEVEL_KEYS[:count]
    return [str(index) for index in range(count)]


def _checked_answer(question_id: str, question: Question, raw: object) -> Answer:
    where = f"answer {question_id!r}"
    answer = _codec.answer_object(raw, where)
    if "type" in answer:
        _codec.check_type(answer["type"], question.kind, question_id, where)
    if isinstance(question, Noul):
        return _codec.noul_answer(answer, "noul", where)
    probabilities = answer.get("probabilities")
    if not isinstance(probabilities, Mapping):
        raise _wire.not_an_answer(f"{where} has no 'probabilities' object")
    keys = _codec.distribution_keys(question)
    return _codec.distribution_answer(question_id, question, answer, probabilities, keys, where)


def decode_reply(request: DecisionRequest, payload: object) -> WireReply:
    """The answers in a decoded reply ``payload`` to ``request``; raises
    :class:`harness.errors.NotAnAnswerError` naming what is missing or wrong (never the state)."""
    body, answers = _reply_answers(request, payload)
    return _codec.wire_reply(body, answers)


def _reply_answers(
    request: DecisionRequest, payload: object
) -> tuple[Mapping[object, object], FrozenMap[str, Answer]]:
    """The reply object and its answers to ``request``, checked as :func:`decode_reply` checks
    them (its errors, its answers), without reading the reply's usage: for a client that needs
    only the answers and the model (``_codec.reply_model``)."""
    body = payload if type(payload) is dict else _wire.reply_object(payload)  # a dict: no ABC
    answers = body.get("answers")
    if type(answers) is not dict and not isinstance(answers, Mapping):
        raise _wire.not_an_answer("the reply has no 'answers' object")
    decoded: dict[str, Answer] = {}
    for question_id, question in request.questions.items():
        if question_id not in answers:
            raise _wire.not_an_answer(
                f"the reply has no answer for question {question_id!r} (asked: "
                f"{', '.join(map(repr, request.questions))})"
            )
        raw = answers[question_id]
        decoded[question_id] = _plain_answer(question, raw) or _checked_answer(
            question_id, question, raw
        )
    return body, checked_answers(request, decoded)  # not checked again


decode_body = _codec.body_decoder("System One", __name__, decode_reply)


def _decode_question(given: object, loc: Loc, problems: _server.Problems) -> Question | None:
    read = _server.question_kind(
        given, loc, problems, ("noul", "choice", "score"), "type, instructions and criteria"
    )
    if read is None:
        return None
    raw, kind = read
    loc = (*loc, kind)
    if kind != "noul":
        return _decode_criteria(
            raw, kind, _server.read_instructions(raw, loc, problems), loc, problems
        )
    instructions = _server.read_text(raw, "instructions", loc, problems)  # a noul may go without
    criteria = raw.get("criteria")
    sides: dict[str, str | None] = {"true": None, "false": None}
    if criteria is not None:
        if not isinstance(criteria, Mapping) or set(criteria) - {"true", "false"}:
            problems.add((*loc, "criteria"), "noul criteria may hold only 'true' and 'false'")
            return None
        for side in ("true", "false"):
            sides[side] = _server.read_text(criteria, side, (*loc, "criteria"), problems)
    if instructions is None and raw.get("instructions") is not None:
        return None  # the instructions' problem is recorded
    if instructions is None:
        described = [f"{side}: {text}" for side, text in sides.items() if text is not None]
        if not described:
            problems.add((*loc, "instructions"), "a noul needs instructions or criteria")
            return None
        instructions = "; ".join(described)
    return problems.build(
        loc,
        lambda: Noul(instructions or "", when_true=sides["true"], when_false=sides["false"]),
    )


def _decode_criteria(
    raw: Mapping[object, object],
    kind: str,
    instructions: str | None,
    loc: Loc,
    problems: _server.Problems,
) -> Question | None:
    """A choice or a score from its criteria (an object of options, a list of levels)."""
    if instructions is None:
        return None
    criteria = raw.get("criteria")
    if kind == "choice":
        if not isinstance(criteria, Mapping) or not criteria:
            problems.add(
                (*loc, "criteria"),
                "choice criteria must be an object of option -> description, at least one",
            )
            return None
        options: dict[str, str | None] = {}
        for option in criteria:
            if isinstance(option, str):
                options[option] = _server.read_text(criteria, option, (*loc, "criteria"), problems)
        return problems.build(loc, lambda: Choice(instructions, options))
    if not isinstance(criteria, list) or not criteria:
        problems.add((*loc, "criteria"), "score criteria must be a list of levels, lowest first")
        return None
    levels = [
        _server.read_text(criteria, index, (*loc, "criteria"), problems)
        for index in range(len(criteria))
    ]
    if any(level is None for level in levels):
        problems.add((*loc, "criteria"), "every score level must be described")
        return None
    return problems.build(loc, lambda: Score(instructions, [lv or "" for lv in levels]))


def decode_request(payload: object) -> tuple[DecisionRequest, str]:
    """The request and the model a System One body asks; raises :class:`RequestValidationError`
    listing every problem (for a 422 ``detail[]``). Unknown top-level fields are ignored;
    instructions and descriptions given as objects or arrays are read as their compact JSON; a noul
    without instructions is read from its described sides."""
    problems = _server.Problems()
    payload = _server.body_object(payload)
    model = _server.read_model(payload, problems, missing="Field required")
    state = _server.read_state(payload, "state", problems)
    questions: dict[str, Question] = {}
    raw_questions = payload.get("questions")
    if not isinstance(raw_questions, Mapping) or not raw_questions:
        problems.add(
            ("body", "questions"), "questions must be an object of id -> question, at least one"
        )
    else:
        for question_id, raw in raw_questions.items():
            if not isinstance(question_id, str) or not question_id:
                problems.add(("body", "questions"), "question ids must be non-empty strings")
                continue
            question = _decode_question(raw, ("body", "questions", question_id), problems)
            if question is not None:
                questions[question_id] = question
    return _server.built_request(problems, state, questions, model)


def _encode_answer(question_id: str, answer: Answer) -> dict[str, JsonValue]:
    if isinstance(answer, NoulAnswer):
        return {"type": "noul", "noul": answer.probability}
    if isinstance(answer, ChoiceAnswer | ScoreAnswer):
        kind, pick = _codec.picked(answer)
        return {"type": kind, kind: pick, **_distribution(answer), "confidence": answer.confidence}
    raise ValueError(
        f"System One has no refusal: answer question {question_id!r} or fail the whole request"
    )


def _distribution(answer: ChoiceAnswer | ScoreAnswer) -> dict[str, JsonValue]:
    """A choice's probabilities by option; a score's legend and probabilities by level index."""
    if isinstance(answer, ChoiceAnswer):
        return {"probabilities": dict(answer.probabilities)}
    return {
        "legend": {str(i): level for i, level in enumerate(answer.levels)},
        "probabilities": {str(i): p for i, p in enumerate(answer.probabilities)},
    }


def encode_reply(
    answers: Mapping[str, Answer], *, model: str, input_tokens: int, output_tokens: int = 0
) -> dict[str, JsonValue]:
    """A reply body as the reference server writes it: ``model``, ``answers`` (each with its
    ``type``; a score with its ``legend``) and ``usage``. A :class:`RefusedAnswer` cannot be
    written (System One has no refusal): ``ValueError``."""
    return {
        "model": model,
        "answers": {qid: _encode_answer(qid, answer) for qid, answer in answers.items()},
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }

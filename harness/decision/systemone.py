"""The System One wire: ``POST /v1/systemone`` bodies and replies (ARCHITECTURE.md section 4).

Client side: :func:`encode_request` / :func:`encode_body` build the body, :func:`decode_reply`
reads the reply (lenient on extra fields and answers never asked, strict on missing ones).
Server side (the project's fake server, ``harness serve``): :func:`decode_request` reads a body
or lists its problems for a 422, :func:`encode_reply` writes the answers as the reference does.

>>> from harness.decision import DecisionRequest, Noul
>>> encode_body(DecisionRequest("hi", {"q": Noul("Greeting?")}), "jev-latest")
b'{"model":"jev-latest","state":"hi","questions":{"q":{"instructions":"Greeting?","type":"noul"}}}'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ._answers import (
    Answer,
    ChoiceAnswer,
    NoulAnswer,
    ScoreAnswer,
    choice_confidence,
    score_confidence,
)
from ._json import JsonValue, compact_json, json_kind
from ._questions import Choice, Noul, Question, Score
from ._request import DecisionRequest
from ._response import checked_answers
from ._server import Problems, read_state, read_text
from ._wire import (
    MAX_REPLY_BYTES,
    MAX_REPLY_DEPTH,
    ChoiceWire,
    Loc,
    NoulWire,
    RequestValidationError,
    ScoreWire,
    WireReply,
    choice_answer,
    load_reply,
    not_an_answer,
    read_usage,
    reply_object,
    score_answer,
    served_model,
    shown_type,
    structure,
)

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
        encoded["criteria"] = dict(question.options)
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


def encode_request(request: DecisionRequest, model: str | None) -> dict[str, JsonValue]:
    """The request body: ``model`` (left out only when None), ``state``, ``questions`` in order."""
    body: dict[str, JsonValue] = {}
    if model is not None:
        body["model"] = model
    body["state"] = request.state
    body["questions"] = {qid: _encode_question(q) for qid, q in request.questions.items()}
    return body


def encode_body(request: DecisionRequest, model: str | None) -> bytes:
    """The request body as compact, deterministic UTF-8 JSON (what is sent and what is priced)."""
    return request.encoded("systemone", model, _encode_body)


def _encode_body(request: DecisionRequest, model: str | None) -> bytes:
    return compact_json(encode_request(request, model)).encode("utf-8")


def _is_probability(value: object) -> bool:
    return type(value) in (int, float) and 0.0 <= value <= 1.0  # type: ignore[operator]  # a number


def _decode_answer(question_id: str, question: Question, raw: object) -> Answer:
    """One answer: the common well-formed shape directly, anything else the careful way (which
    names what is wrong)."""
    return _plain_answer(question, raw) or _checked_answer(question_id, question, raw)


def _plain_answer(question: Question, raw: object) -> Answer | None:
    """A well-formed answer built without the converter, or None to go the careful way. It
    accepts only what the careful way accepts unchanged, so both give the same answer."""
    if type(raw) is not dict or raw.get("type", question.kind) != question.kind:
        return None
    if isinstance(question, Noul):
        noul = raw.get("noul")
        return NoulAnswer(float(noul)) if _is_probability(noul) else None  # type: ignore[arg-type]
    table = raw.get("probabilities")
    if type(table) is not dict:
        return None
    keys = list(question.options) if isinstance(question, Choice) else _level_keys(question)
    values = [table.get(key) for key in keys]
    confidence = raw.get("confidence")
    if not all(_is_probability(v) for v in values) or not (
        confidence is None or _is_probability(confidence)
    ):
        return None
    numbers = [float(v) for v in values]  # type: ignore[arg-type]  # checked just above
    sure = None if confidence is None else float(confidence)
    if isinstance(question, Choice):
        choice = raw.get("choice")
        if type(choice) is not str or choice not in question.options:
            return None
        if sure is None:
            sure = choice_confidence(numbers)
        return ChoiceAnswer(choice, dict(zip(keys, numbers, strict=True)), sure)
    score = raw.get("score")
    if type(score) not in (int, float) or not 0.0 <= score <= len(keys) - 1:  # type: ignore[operator]
        return None
    if sure is None:
        sure = score_confidence(numbers)
    return ScoreAnswer(float(score), question.levels, tuple(numbers), sure)  # type: ignore[arg-type]


def _checked_answer(question_id: str, question: Question, raw: object) -> Answer:
    where = f"answer {question_id!r}"
    if not isinstance(raw, Mapping):
        raise not_an_answer(f"{where} is {json_kind(raw)}, not an object")
    if "type" in raw and raw["type"] != question.kind:
        raise not_an_answer(
            f"{where} has type {shown_type(raw['type'])}, but question {question_id!r} was "
            f"asked as a {question.kind}"
        )
    if isinstance(question, Noul):
        shaped_noul = {name: raw[name] for name in ("noul",) if name in raw}
        return NoulAnswer(structure(shaped_noul, NoulWire, where).noul)
    keys = list(question.options) if isinstance(question, Choice) else _level_keys(question)
    probabilities = raw.get("probabilities")
    if not isinstance(probabilities, Mapping):
        raise not_an_answer(f"{where} has no 'probabilities' object")
    missing = [key for key in keys if key not in probabilities]
    if missing:
        what = "option" if isinstance(question, Choice) else "level"
        raise not_an_answer(
            f"{where} has no probability for {what} {', '.join(map(repr, missing))}"
        )
    shaped = {name: raw[name] for name in ("choice", "score", "confidence") if name in raw}
    shaped["probabilities"] = {key: probabilities[key] for key in keys}
    if isinstance(question, Choice):
        choice = structure(shaped, ChoiceWire, where)
        values = [choice.probabilities[key] for key in keys]
        return choice_answer(question_id, question, choice.choice, values, choice.confidence)
    score = structure(shaped, ScoreWire, where)
    values = [score.probabilities[key] for key in keys]
    return score_answer(question_id, question, score.score, values, score.confidence)


def _level_keys(question: Score) -> list[str]:
    return [str(index) for index in range(len(question.levels))]


def decode_body(
    request: DecisionRequest,
    body: bytes,
    *,
    max_bytes: int = MAX_REPLY_BYTES,
    max_depth: int = MAX_REPLY_DEPTH,
) -> WireReply:
    """The answers in a System One reply body (any bytes): a :class:`WireReply` or
    :class:`harness.errors.NotAnAnswerError` (:class:`~harness.errors.ReplyTooLargeError`,
    :class:`~harness.errors.ReplyTooDeepError` past the bounds), never another exception."""
    return decode_reply(request, load_reply(body, max_bytes=max_bytes, max_depth=max_depth))


def decode_reply(request: DecisionRequest, payload: object) -> WireReply:
    """The answers in a decoded reply ``payload`` to ``request``; raises
    :class:`harness.errors.NotAnAnswerError` naming what is missing or wrong (never the state)."""
    body = reply_object(payload)
    answers = body.get("answers")
    if not isinstance(answers, Mapping):
        raise not_an_answer("the reply has no 'answers' object")
    decoded: dict[str, Answer] = {}
    for question_id, question in request.questions.items():
        if question_id not in answers:
            raise not_an_answer(
                f"the reply has no answer for question {question_id!r} (asked: "
                f"{', '.join(map(repr, request.questions))})"
            )
        decoded[question_id] = _decode_answer(question_id, question, answers[question_id])
    model = body.get("model")
    input_tokens, output_tokens = read_usage(body.get("usage"))
    return WireReply(
        answers=checked_answers(request, decoded),  # checked here: not again by the response
        model=served_model(model),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _decode_question(raw: object, loc: Loc, problems: Problems) -> Question | None:
    if not isinstance(raw, Mapping):
        problems.add(loc, "a question must be an object with type, instructions and criteria")
        return None
    kind = raw.get("type")
    if kind not in ("noul", "choice", "score"):
        problems.add((*loc, "type"), "type must be 'noul', 'choice' or 'score'")
        return None
    loc = (*loc, str(kind))
    instructions = read_text(raw, "instructions", loc, problems)
    criteria = raw.get("criteria")
    if kind == "noul":
        sides: dict[str, str | None] = {"true": None, "false": None}
        if criteria is not None:
            if not isinstance(criteria, Mapping) or set(criteria) - {"true", "false"}:
                problems.add((*loc, "criteria"), "noul criteria may hold only 'true' and 'false'")
                return None
            for side in ("true", "false"):
                sides[side] = read_text(criteria, side, (*loc, "criteria"), problems)
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
    if instructions is None:
        if raw.get("instructions") is None:
            problems.add((*loc, "instructions"), "Field required")
        return None
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
                options[option] = read_text(criteria, option, (*loc, "criteria"), problems)
        return problems.build(loc, lambda: Choice(instructions, options))
    if not isinstance(criteria, list) or not criteria:
        problems.add((*loc, "criteria"), "score criteria must be a list of levels, lowest first")
        return None
    levels = [
        read_text(criteria, index, (*loc, "criteria"), problems) for index in range(len(criteria))
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
    problems = Problems()
    if not isinstance(payload, Mapping):
        raise RequestValidationError([(("body",), "the body must be a JSON object")])
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        problems.add(
            ("body", "model"),
            "model must be a non-empty string" if "model" in payload else "Field required",
        )
    state = read_state(payload, "state", problems)
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
    problems.raise_any()
    request = problems.build(("body",), lambda: DecisionRequest(state, questions))
    problems.raise_any()
    assert request is not None  # no problems: it was built
    assert isinstance(model, str)  # no problems: it was read
    return request, model


def _encode_answer(question_id: str, answer: Answer) -> dict[str, JsonValue]:
    if isinstance(answer, NoulAnswer):
        return {"type": "noul", "noul": answer.probability}
    if isinstance(answer, ChoiceAnswer):
        return {
            "type": "choice",
            "choice": answer.choice,
            "probabilities": dict(answer.probabilities),
            "confidence": answer.confidence,
        }
    if isinstance(answer, ScoreAnswer):
        return {
            "type": "score",
            "score": answer.score,
            "legend": {str(i): level for i, level in enumerate(answer.levels)},
            "probabilities": {str(i): p for i, p in enumerate(answer.probabilities)},
            "confidence": answer.confidence,
        }
    raise ValueError(
        f"System One has no refusal: answer question {question_id!r} or fail the whole request"
    )


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

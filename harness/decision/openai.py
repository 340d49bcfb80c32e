"""The OpenAI Decisions wire: ``POST /v1/decisions`` bodies and replies (SYSTEM-ONE.md, last
section).

Questions go as a list, each with a ``name``: the request's ids when every one is
identifier-like (see :func:`question_names`), else ``q0``, ``q1``, ... Answers come back as a list
in question order and are mapped back to the ids by position, their names checked. A
:class:`~harness.decision.Noul` is a ``predicate``; a predicate has no described sides, so a noul's
``when_true`` / ``when_false`` are appended to its instructions. A non-string state goes as its
compact JSON text. A per-question ``{"type": "refusal"}`` becomes a
:class:`~harness.decision.RefusedAnswer`.

>>> from harness.decision import DecisionRequest, Noul
>>> encode_body(DecisionRequest("hi", {"greeting": Noul("Greeting?")}), "gpt-6-luna")
b'{"model":"gpt-6-luna","input":"hi","questions":[{"type":"predicate","name":"greeting","instructions":"Greeting?"}]}'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from ._answers import Answer, ChoiceAnswer, NoulAnswer, RefusedAnswer, ScoreAnswer
from ._json import JsonValue, compact_json, json_kind
from ._questions import Choice, Noul, Question, Score
from ._request import DecisionRequest
from ._response import checked_answers
from ._server import Problems, read_text
from ._wire import (
    MAX_REPLY_BYTES,
    MAX_REPLY_DEPTH,
    ChoiceWire,
    Loc,
    Probability,
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
    "MAX_CHOICES",
    "MAX_LEVELS",
    "MAX_QUESTIONS",
    "RequestValidationError",
    "WireReply",
    "decode_body",
    "decode_reply",
    "decode_request",
    "encode_body",
    "encode_reply",
    "encode_request",
    "question_names",
]

MAX_QUESTIONS = 400
MAX_CHOICES = 255
MAX_LEVELS = 10

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}", re.ASCII)
_TYPES = {"choice": "choice", "noul": "predicate", "score": "score"}


def question_names(request: DecisionRequest) -> tuple[str, ...]:
    """The wire names of the request's questions, in order: the ids themselves when every id is
    identifier-like (ASCII letters, digits, ``_``, not starting with a digit, at most 64), else
    ``q0``, ``q1``, ... for all of them (so no positional name can collide with an id)."""
    ids = tuple(request.questions)
    if all(_NAME.fullmatch(question_id) for question_id in ids):
        return ids
    return tuple(f"q{index}" for index in range(len(ids)))


def _predicate_instructions(question: Noul) -> str:
    lines = [question.instructions]
    if question.when_true is not None or question.when_false is not None:
        lines.append("")
    if question.when_true is not None:
        lines.append(f"True: {question.when_true}")
    if question.when_false is not None:
        lines.append(f"False: {question.when_false}")
    return "\n".join(lines)


def _encode_question(name: str, question: Question) -> dict[str, JsonValue]:
    encoded: dict[str, JsonValue] = {"type": _TYPES[question.kind], "name": name}
    if isinstance(question, Noul):
        encoded["instructions"] = _predicate_instructions(question)
    elif isinstance(question, Choice):
        encoded["instructions"] = question.instructions
        choices: list[JsonValue] = []
        for value, description in question.options.items():
            choice: dict[str, JsonValue] = {"value": value}
            if description is not None:
                choice["description"] = description
            choices.append(choice)
        encoded["choices"] = choices
    else:
        encoded["instructions"] = question.instructions
        encoded["levels"] = [{"label": level} for level in question.levels]
    return encoded


def encode_request(request: DecisionRequest, model: str | None) -> dict[str, JsonValue]:
    """The request body: ``model`` (left out only when None), ``input``, ``questions`` in order."""
    body: dict[str, JsonValue] = {}
    if model is not None:
        body["model"] = model
    state = request.state
    body["input"] = state if isinstance(state, str) else compact_json(state)
    names = question_names(request)
    body["questions"] = [
        _encode_question(name, question)
        for name, question in zip(names, request.questions.values(), strict=True)
    ]
    return body


def encode_body(request: DecisionRequest, model: str | None) -> bytes:
    """The request body as compact, deterministic UTF-8 JSON."""
    return request.encoded("openai", model, _encode_body)


def _encode_body(request: DecisionRequest, model: str | None) -> bytes:
    return compact_json(encode_request(request, model)).encode("utf-8")


def _by_value(items: object, key: str) -> dict[object, object] | None:
    """``[{key: v, "probability": p}, ...]`` as ``{v: p}`` (first wins); None if not a list."""
    if not isinstance(items, list):
        return None
    found: dict[object, object] = {}
    for item in items:
        if isinstance(item, Mapping) and "probability" in item:
            value = item.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                found.setdefault(value, item["probability"])
    return found


def _decode_answer(
    question_id: str, question: Question, raw: Mapping[object, object], where: str
) -> Answer:
    kind = raw.get("type")
    if kind == "refusal":
        return RefusedAnswer(_refusal_reason(raw.get("refusal")))
    expected = _TYPES[question.kind]
    if kind != expected:
        raise not_an_answer(
            f"{where} has type {shown_type(kind)}, but question {question_id!r} was asked as "
            f"a {expected}"
        )
    if isinstance(question, Noul):
        shaped_noul = {name: raw[name] for name in ("probability",) if name in raw}
        return NoulAnswer(structure(shaped_noul, _PredicateWire, where).probability)
    if isinstance(question, Choice):
        wanted: list[object] = list(question.options)
        keys = list(question.options)
    else:
        wanted = list(range(len(question.levels)))
        keys = [str(index) for index in wanted]
    found = _by_value(raw.get("probabilities"), "value")
    if found is None:
        raise not_an_answer(f"{where} has no 'probabilities' array")
    missing = [value for value in wanted if value not in found]
    if missing:
        what = "option" if isinstance(question, Choice) else "level"
        raise not_an_answer(
            f"{where} has no probability for {what} {', '.join(map(repr, missing))}"
        )
    shaped = {name: raw[name] for name in ("choice", "score", "confidence") if name in raw}
    shaped["probabilities"] = {key: found[value] for key, value in zip(keys, wanted, strict=True)}
    _fill_from_probabilities(shaped, keys, isinstance(question, Choice))
    if isinstance(question, Choice):
        choice = structure(shaped, ChoiceWire, where)
        values = [choice.probabilities[key] for key in keys]
        return choice_answer(question_id, question, choice.choice, values, choice.confidence)
    score = structure(shaped, ScoreWire, where)
    values = [score.probabilities[key] for key in keys]
    return score_answer(question_id, question, score.score, values, score.confidence)


def _fill_from_probabilities(shaped: dict[str, object], keys: list[str], choice: bool) -> None:
    """The spec's reply carries only the distribution: derive the choice (the most probable
    option, the first on a tie) or the score (the expected level) when the server left it out.
    Values that are not numbers are left for the structuring step to refuse by name."""
    field = "choice" if choice else "score"
    probabilities = shaped["probabilities"]
    assert isinstance(probabilities, dict)
    values = [probabilities[key] for key in keys]
    if field in shaped or not all(_is_probability(v) for v in values):
        return
    numbers = [float(v) for v in values if isinstance(v, int | float)]  # each in [0, 1]
    if choice:
        shaped[field] = keys[max(range(len(keys)), key=lambda i: (numbers[i], -i))]
    else:
        shaped[field] = sum(i * p for i, p in enumerate(numbers))


def _is_probability(value: object) -> bool:
    """A number in [0, 1] (an int or float, never a bool; a huge integer compares exactly)."""
    return type(value) in (int, float) and 0 <= value <= 1  # type: ignore[operator]  # a number


REFUSAL_CHARS = 500
"""The longest refusal reason kept."""


def _refusal_reason(value: object) -> str | None:
    """A refusal's reason, when it is printable text (cut to ``REFUSAL_CHARS``)."""
    if not isinstance(value, str):
        return None
    shown = "".join(char if char.isprintable() else " " for char in value[:REFUSAL_CHARS])
    try:
        shown.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return None
    return shown


@attrs.frozen
class _PredicateWire:
    """A predicate answer's fields: ``{"probability": p}``."""

    probability: Probability


def decode_body(
    request: DecisionRequest,
    body: bytes,
    *,
    max_bytes: int = MAX_REPLY_BYTES,
    max_depth: int = MAX_REPLY_DEPTH,
) -> WireReply:
    """The answers in a OpenAI Decisions reply body (any bytes): a :class:`WireReply` or
    :class:`harness.errors.NotAnAnswerError` (:class:`~harness.errors.ReplyTooLargeError`,
    :class:`~harness.errors.ReplyTooDeepError` past the bounds), never another exception."""
    return decode_reply(request, load_reply(body, max_bytes=max_bytes, max_depth=max_depth))


def decode_reply(request: DecisionRequest, payload: object) -> WireReply:
    """The answers in a decoded reply ``payload`` to ``request``, mapped back to its ids by
    position; raises :class:`harness.errors.NotAnAnswerError` naming what is missing or wrong."""
    body = reply_object(payload)
    answers = body.get("answers")
    if not isinstance(answers, list):
        raise not_an_answer("the reply has no 'answers' array")
    names = question_names(request)
    decoded: dict[str, Answer] = {}
    for position, (name, (question_id, question)) in enumerate(
        zip(names, request.questions.items(), strict=True)
    ):
        where = f"answer {position} (question {question_id!r})"
        if position >= len(answers):
            raise not_an_answer(
                f"the reply has no answer for question {question_id!r}: {len(answers)} answers "
                f"for {len(names)} questions (asked: {', '.join(map(repr, request.questions))})"
            )
        raw = answers[position]
        if not isinstance(raw, Mapping):
            raise not_an_answer(f"{where} is {json_kind(raw)}, not an object")
        if raw.get("name") is not None and raw.get("name") != name:
            raise not_an_answer(
                f"{where} is not named {name!r}: answers must come in question order"
            )
        decoded[question_id] = _decode_answer(question_id, question, raw, where)
    model = body.get("model")
    input_tokens, output_tokens = read_usage(body.get("usage"))
    return WireReply(
        answers=checked_answers(request, decoded),  # checked here: not again by the response
        model=served_model(model),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _decode_question(raw: object, loc: Loc, problems: Problems) -> tuple[str, Question] | None:
    if not isinstance(raw, Mapping):
        problems.add(loc, "a question must be an object with type, name and instructions")
        return None
    kind = raw.get("type")
    if kind not in ("choice", "predicate", "score"):
        problems.add((*loc, "type"), "type must be 'choice', 'predicate' or 'score'")
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        problems.add(
            (*loc, "name"),
            "name must be identifier-like: ASCII letters, digits and '_', not starting with a "
            "digit, at most 64 characters",
        )
        return None
    instructions = read_text(raw, "instructions", loc, problems)
    if instructions is None:
        if raw.get("instructions") is None:
            problems.add((*loc, "instructions"), "Field required")
        return None
    question: Question | None
    if kind == "predicate":
        question = problems.build(loc, lambda: Noul(instructions))
        return None if question is None else (name, question)
    field, low, high = (
        ("choices", 2, MAX_CHOICES) if kind == "choice" else ("levels", 2, MAX_LEVELS)
    )
    items = raw.get(field)
    if not isinstance(items, list) or not low <= len(items) <= high:
        problems.add((*loc, field), f"{field} must be a list of {low} to {high} items")
        return None
    key = "value" if kind == "choice" else "label"
    entries: list[tuple[str, str | None]] = []
    for index, item in enumerate(items):
        here: Loc = (*loc, field, index)
        if not isinstance(item, Mapping) or not isinstance(item.get(key), str):
            problems.add((*here, key), f"every item needs a string {key!r}")
            return None
        entries.append((item[key], read_text(item, "description", here, problems)))
    if kind == "choice":
        question = problems.build(loc, lambda: Choice(instructions, dict(entries)))
        if question is not None and len(question.options) != len(entries):
            problems.add((*loc, field), "choice values must be unique")
            return None
    else:
        levels = [label if text is None else f"{label}: {text}" for label, text in entries]
        question = problems.build(loc, lambda: Score(instructions, levels))
    return None if question is None else (name, question)


def decode_request(payload: object) -> tuple[DecisionRequest, str]:
    """The request and the model an OpenAI Decisions body asks, with the question names as ids;
    raises :class:`RequestValidationError` listing every problem. ``input`` (a string, or an
    array of messages) becomes the state as given; a level's ``description`` is appended to its
    ``label``."""
    if not isinstance(payload, Mapping):
        raise RequestValidationError([(("body",), "the body must be a JSON object")])
    problems = Problems()
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        problems.add(("body", "model"), "model must be a non-empty string")
    state: JsonValue = None
    given = payload.get("input")
    if isinstance(given, (str, list)):
        state = given
    else:
        problems.add(("body", "input"), "input must be a string or an array of messages")
    questions: dict[str, Question] = {}
    raw_questions = payload.get("questions")
    if not isinstance(raw_questions, list) or not 1 <= len(raw_questions) <= MAX_QUESTIONS:
        problems.add(("body", "questions"), f"questions must be a list of 1 to {MAX_QUESTIONS}")
    else:
        for index, raw in enumerate(raw_questions):
            named = _decode_question(raw, ("body", "questions", index), problems)
            if named is None:
                continue
            if named[0] in questions:
                problems.add(("body", "questions", index, "name"), "question names must be unique")
            questions[named[0]] = named[1]
    problems.raise_any()
    request = problems.build(("body",), lambda: DecisionRequest(state, questions))
    problems.raise_any()
    assert request is not None  # no problems: it was built
    assert isinstance(model, str)  # no problems: it was read
    return request, model


def _encode_answer(name: str, answer: Answer) -> dict[str, JsonValue]:
    if isinstance(answer, NoulAnswer):
        return {"type": "predicate", "name": name, "probability": answer.probability}
    if isinstance(answer, ChoiceAnswer):
        return {
            "type": "choice",
            "name": name,
            "choice": answer.choice,
            "probabilities": [
                {"value": value, "probability": p} for value, p in answer.probabilities.items()
            ],
            "confidence": answer.confidence,
        }
    if isinstance(answer, ScoreAnswer):
        return {
            "type": "score",
            "name": name,
            "score": answer.score,
            "probabilities": [
                {"value": index, "label": level, "probability": p}
                for index, (level, p) in enumerate(
                    zip(answer.levels, answer.probabilities, strict=True)
                )
            ],
            "confidence": answer.confidence,
        }
    refusal: dict[str, JsonValue] = {"type": "refusal", "name": name}
    if answer.reason is not None:
        refusal["refusal"] = answer.reason
    return refusal


def encode_reply(
    answers: Mapping[str, Answer], *, model: str, input_tokens: int, output_tokens: int = 0
) -> dict[str, JsonValue]:
    """A reply body: ``object``, ``model``, ``answers`` as a list in the mapping's order (each
    named by its key, which is the question's wire name) and ``usage`` with cached-token details.
    """
    return {
        "object": "decision",
        "model": model,
        "answers": [_encode_answer(name, answer) for name, answer in answers.items()],
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "input_tokens_details": {"cached_tokens": 0},
        },
    }

"""The OpenAI Decisions wire: ``POST /v1/decisions`` bodies and replies (SYSTEM-ONE.md, last
section).

Questions go as a list, each with a ``name``: the request's ids when every one is
identifier-like (see :func:`question_names`), else ``q0``, ``q1``, ... Answers come back as a list
in question order and are mapped back to the ids by position, their names checked. A
:class:`~harness.decision.Noul` is a ``predicate``; a predicate has no described sides, so a noul's
``when_true`` / ``when_false`` are appended to its instructions. A non-string state goes as its
compact JSON text. A per-question ``{"type": "refusal"}`` becomes a
:class:`~harness.decision.RefusedAnswer`.

One concern, past 400 lines: this wire both ways (the client's body and reply, the server's
request and reply, as ``systemone.py`` is System One's): the sides share its shapes, so they stay
in one module.
The steps both wires take are in ``_codec.py``; what stays here twice over (the imports, the
fast path :func:`_plain_answer`) differs with the wire: a list of ``{value, probability}``
items and a filled-in pick here, an object keyed by option and an int 0 or 1 read as a
probability there.

>>> from harness.decision import DecisionRequest, Noul
>>> encode_body(DecisionRequest("hi", {"greeting": Noul("Greeting?")}), "gpt-6-luna")
b'{"model":"gpt-6-luna","input":"hi","questions":[{"type":"predicate","name":"greeting","instructions":"Greeting?"}]}'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from . import _codec, _server, _wire
from ._answers import Answer, ChoiceAnswer, NoulAnswer, RefusedAnswer, ScoreAnswer, trusted_noul
from ._json import JsonValue, compact_json
from ._questions import Choice, Noul, Question, Score
from ._request import DecisionRequest
from ._response import checked_answers
from ._wire import Loc, RequestValidationError, WireReply

# the codec interface, as in systemone.py: mypy reads only a literal __all__
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
    state = request.state
    names = question_names(request)
    questions: list[JsonValue] = [
        _encode_question(name, question)
        for name, question in zip(names, request.questions.values(), strict=True)
    ]
    return _codec.request_body(
        model,
        input=state if isinstance(state, str) else compact_json(state, finite=True),
        questions=questions,
    )


encode_body = _codec.body_encoder("openai", __name__, encode_request)


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
    _codec.check_type(kind, _TYPES[question.kind], question_id, where)
    if isinstance(question, Noul):
        return _codec.noul_answer(raw, "probability", where)
    found = _by_value(raw.get("probabilities"), "value")
    if found is None:
        raise _wire.not_an_answer(f"{where} has no 'probabilities' array")
    wanted: list[object] = (
        list(question.options)
        if isinstance(question, Choice)
        else list(range(len(question.levels)))
    )
    return _codec.distribution_answer(
        question_id, question, raw, found, wanted, where, _fill_from_probabilities
    )


def _fill_from_probabilities(shaped: dict[str, object], keys: list[str], choice: bool) -> None:
    """The spec's reply carries only the distribution: derive the choice (the most probable
    option, the first on a tie) or the score (the expected level) when the server left it out.
    Values that are not numbers are left for the structuring step to refuse by name."""
    field = "choice" if choice else "score"
    probabilities = shaped["probabilities"]
    assert isinstance(probabilities, dict)
    values = [probabilities[key] for key in keys]
    if field in shaped or not all(_wire.is_probability(v) for v in values):
        return
    numbers = [float(v) for v in values if isinstance(v, int | float)]  # each in [0, 1]
    if choice:
        shaped[field] = keys[max(range(len(keys)), key=lambda i: (numbers[i], -i))]
    else:
        shaped[field] = sum(i * p for i, p in enumerate(numbers))


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


def _plain_answer(question: Question, raw: Mapping[str, object]) -> Answer | None:
    """A well-formed answer built without the converter, or None to go the careful way
    (:func:`_decode_answer`). It accepts only what the careful way accepts unchanged, so both
    give the same answer (``tests/decision/test_fast_paths.py``): the type asked; each
    probability a float in [0, 1]; a distribution's values each once, of the type asked (an
    option's name, a level's position), every one asked for there; a pick and a confidence
    given in range or left out (then derived as the careful way derives them). Anything else,
    a refusal included, goes the careful way, which reads it or names what is wrong."""
    if raw.get("type") != _TYPES[question.kind]:
        return None
    if isinstance(question, Noul):
        probability = raw.get("probability")
        if type(probability) is float and 0.0 <= probability <= 1.0:
            return trusted_noul(probability)
        return None
    items = raw.get("probabilities")
    confidence = raw.get("confidence")
    if type(items) is not list or not (
        confidence is None or (type(confidence) is float and 0.0 <= confidence <= 1.0)
    ):
        return None
    value_type = str if isinstance(question, Choice) else int
    table: dict[object, float] = {}
    for item in items:
        if type(item) is not dict:
            return None
        value = item.get("value")
        probability = item.get("probability")
        if (
            type(value) is not value_type
            or value in table
            or type(probability) is not float
            or not 0.0 <= probability <= 1.0
        ):
            return None
        table[value] = probability
    if isinstance(question, Choice):
        probabilities: dict[str, float] = {}
        best: str | None = None
        for option in question.options:
            value = table.get(option)
            if value is None:
                return None
            probabilities[option] = value
            if best is None or value > probabilities[best]:  # the first most probable
                best = option
        return _codec.fast_choice(raw.get("choice", best), probabilities, confidence)
    levels = question.levels
    numbers: list[float] = []
    for level in range(len(levels)):
        value = table.get(level)
        if value is None:
            return None
        numbers.append(value)
    if "score" in raw:
        score = raw["score"]
        if type(score) is not float and type(score) is not int:
            return None
    else:  # the expected level, as the careful way fills it in
        score = sum(i * p for i, p in enumerate(numbers))
    return _codec.fast_score(score, levels, numbers, confidence)


def decode_reply(request: DecisionRequest, payload: object) -> WireReply:
    """The answers in a decoded reply ``payload`` to ``request``, mapped back to its ids by
    position; raises :class:`harness.errors.NotAnAnswerError` naming what is missing or wrong."""
    body = payload if type(payload) is dict else _wire.reply_object(payload)  # a dict: no ABC
    answers = body.get("answers")
    if not isinstance(answers, list):
        raise _wire.not_an_answer("the reply has no 'answers' array")
    names = question_names(request)
    decoded: dict[str, Answer] = {}
    for position, (name, (question_id, question)) in enumerate(
        zip(names, request.questions.items(), strict=True)
    ):
        if position >= len(answers):
            raise _wire.not_an_answer(
                f"the reply has no answer for question {question_id!r}: {len(answers)} answers "
                f"for {len(names)} questions (asked: {', '.join(map(repr, request.questions))})"
            )
        raw = answers[position]
        if type(raw) is dict:  # the common shape: its name checked, then read fast if it can be
            given = raw.get("name")
            if given is None or given == name:
                answer = _plain_answer(question, raw)
                if answer is not None:
                    decoded[question_id] = answer
                    continue
        where = f"answer {position} (question {question_id!r})"
        raw = _codec.answer_object(raw, where)
        if raw.get("name") is not None and raw.get("name") != name:
            raise _wire.not_an_answer(
                f"{where} is not named {name!r}: answers must come in question order"
            )
        decoded[question_id] = _decode_answer(question_id, question, raw, where)
    return _codec.wire_reply(body, checked_answers(request, decoded))  # not checked again


decode_body = _codec.body_decoder("OpenAI Decisions", __name__, decode_reply)


def _decode_question(
    given: object, loc: Loc, problems: _server.Problems
) -> tuple[str, Question] | None:
    read = _server.question_kind(
        given, loc, problems, ("choice", "predicate", "score"), "type, name and instructions"
    )
    if read is None:
        return None
    raw, kind = read
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        problems.add(
            (*loc, "name"),
            "name must be identifier-like: ASCII letters, digits and '_', not starting with a "
            "digit, at most 64 characters",
        )
        return None
    instructions = _server.read_instructions(raw, loc, problems)
    if instructions is None:
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
        entries.append((item[key], _server.read_text(item, "description", here, problems)))
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
    payload = _server.body_object(payload)
    problems = _server.Problems()
    model = _server.read_model(payload, problems, missing="model must be a non-empty string")
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
    return _server.built_request(problems, state, questions, model)


def _encode_answer(name: str, answer: Answer) -> dict[str, JsonValue]:
    if isinstance(answer, NoulAnswer):
        return {"type": "predicate", "name": name, "probability": answer.probability}
    if isinstance(answer, ChoiceAnswer | ScoreAnswer):
        kind, pick = _codec.picked(answer)
        return {
            "type": kind,
            "name": name,
            kind: pick,
            "probabilities": _probability_items(answer),
            "confidence": answer.confidence,
        }
    refusal: dict[str, JsonValue] = {"type": "refusal", "name": name}
    if answer.reason is not None:
        refusal["refusal"] = answer.reason
    return refusal


def _probability_items(answer: ChoiceAnswer | ScoreAnswer) -> list[JsonValue]:
    """The distribution as the wire lists it: by option value, or by level index and label."""
    if isinstance(answer, ChoiceAnswer):
        return [{"value": value, "probability": p} for value, p in answer.probabilities.items()]
    return [
        {"value": index, "label": level, "probability": p}
        for index, (level, p) in enumerate(zip(answer.levels, answer.probabilities, strict=True))
    ]


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

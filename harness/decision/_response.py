"""A decision response: the answers by id, what the call cost, and how to read them by shape."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import TypeVar

import attrs

from harness.errors import HarnessError

from ._answers import Answer, ChoiceAnswer, NoulAnswer, RefusedAnswer, ScoreAnswer, slot_setter
from ._frozen_map import FrozenMap
from ._questions import Choice, Score
from ._request import DecisionRequest

__all__ = ["AnswerReadError", "DecisionResponse", "checked_answers"]

_A = TypeVar("_A", ChoiceAnswer, NoulAnswer, ScoreAnswer)

_LARGEST_FLOAT = sys.float_info.max


class AnswerReadError(HarnessError, LookupError):
    """An answer read that cannot be served: never asked, asked in another shape, refused by the
    model, or the whole call failed. The message names the question and what to do instead."""


class _CheckedAnswers(FrozenMap[str, Answer]):
    """Answers a wire codec decoded and checked against one request: every question asked, in
    its order, each answered in the shape asked (a choice's probabilities in the question's
    option order, a score with the question's levels) or refused. Made only by
    :func:`checked_answers`; a response to that same request object built from them is not
    checked again (see :meth:`DecisionResponse.__attrs_post_init__`)."""

    __slots__ = ("request",)

    request: DecisionRequest


def checked_answers(request: DecisionRequest, answers: dict[str, Answer]) -> FrozenMap[str, Answer]:
    """``answers`` as checked answers to ``request``, so a response to the same request object
    takes them without checking them a second time. The dict is kept, not copied: the caller
    made it for these answers and never touches it again. Two callers only: the wire codecs,
    after they checked every answer against ``request`` as :class:`DecisionResponse` would (each
    question answered in order and in its shape, or refused); and the calibration
    (``harness.providers.calibrated_client``), whose answers are a checked response's answers put
    through maps that keep each one's kind, options and levels (each answer's own constructor
    checks its new probabilities; ``tests/evals/test_calibration_client.py`` holds the maps to
    it). A changed or other request, or answers from anywhere else, are checked as usual."""
    made = _CheckedAnswers.__new__(_CheckedAnswers)
    made._lookup = answers
    made.request = request
    return made


def _answers(value: Mapping[str, Answer]) -> FrozenMap[str, Answer]:
    if type(value) is _CheckedAnswers:  # made of answers a codec built: each is an Answer
        return value
    if type(value) is not dict and not isinstance(value, Mapping):  # a dict skips the ABC
        raise ValueError(f"answers must be a mapping of id -> answer, not {type(value).__name__}")
    for question_id, answer in value.items():
        if not isinstance(answer, (ChoiceAnswer, NoulAnswer, ScoreAnswer, RefusedAnswer)):
            raise ValueError(
                f"the answer to {question_id!r} must be a ChoiceAnswer, NoulAnswer, ScoreAnswer "
                f"or RefusedAnswer, not {type(answer).__name__}"
            )
    return FrozenMap.of(value)


def _listed(ids: Mapping[str, object]) -> str:
    return ", ".join(map(repr, ids))


@attrs.frozen(init=False)  # __init__ below: a response is made on every call
class DecisionResponse:
    """What one decision call gave: the answers by question id and what the call cost.

    ``input_tokens`` are the billed input tokens (``None`` when the server did not say); a
    decision generates nothing, so :attr:`output_tokens` is always 0. ``model`` is the model id
    that served the call, ``request_id`` the provider's id for it, ``latency`` its wall time in
    seconds. ``failure`` is the reason a failed call answered nothing (see :meth:`failed`).

    A successful response answers every question asked, each in the shape it was asked (or as a
    :class:`RefusedAnswer`); read them with :meth:`choice`, :meth:`noul` and :meth:`score`.

    >>> from harness.decision import Noul
    >>> request = DecisionRequest("a ticket", {"refund": Noul("Refund?")})
    >>> DecisionResponse(request, {"refund": NoulAnswer(0.8)}).noul("refund").probability
    0.8
    """

    request: DecisionRequest
    answers: Mapping[str, Answer] = attrs.field(converter=_answers)
    input_tokens: int | None = None
    model: str | None = None
    request_id: str | None = None
    latency: float = 0.0
    failure: str | None = None
    reading: Mapping[str, object] | None = attrs.field(default=None, eq=False, repr=False)
    """How the answers were read, when a provider says (the logprob providers: method, mass on
    the options, upstream calls); goes to the call's record and its span."""

    def __init__(
        self,
        request: DecisionRequest,
        answers: Mapping[str, Answer],
        input_tokens: int | None = None,
        model: str | None = None,
        request_id: str | None = None,
        latency: float = 0.0,
        failure: str | None = None,
        reading: Mapping[str, object] | None = None,
    ) -> None:
        # What attrs would generate (the same converter, the same checks), written out so
        # that a response to the request a codec checked its answers for, with the common
        # scalars (tokens None or an int >= 0, a finite latency >= 0, no failure), passes every
        # check of __attrs_post_init__ without calling it; and each slot set through its own
        # descriptor (object.__setattr__ would look every name up again).
        if type(answers) is not _CheckedAnswers:
            answers = _answers(answers)
        _SET_REQUEST(self, request)
        _SET_ANSWERS(self, answers)
        _SET_TOKENS(self, input_tokens)
        _SET_MODEL(self, model)
        _SET_ID(self, request_id)
        _SET_LATENCY(self, latency)
        _SET_FAILURE(self, failure)
        _SET_READING(self, reading)
        if (
            failure is None
            and type(answers) is _CheckedAnswers
            and answers.request is request
            and type(request) is DecisionRequest
            and (input_tokens is None or (type(input_tokens) is int and input_tokens >= 0))
            and type(latency) is float
            and 0.0 <= latency <= _LARGEST_FLOAT
        ):
            return
        self.__attrs_post_init__()

    def __attrs_post_init__(self) -> None:
        request = self.request
        if not isinstance(request, DecisionRequest):
            raise ValueError(
                f"request must be the DecisionRequest answered, not {type(request).__name__}"
            )
        # Each scalar's common value (None or an int >= 0; a finite float >= 0; no failure)
        # passes on a comparison or two; any other gets the full check and its message.
        tokens = self.input_tokens
        if (
            tokens is not None
            and (type(tokens) is not int or tokens < 0)
            and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0)
        ):
            raise ValueError("input_tokens must be a non-negative int, or None when unknown")
        latency = self.latency
        if type(latency) is not float or not 0.0 <= latency <= _LARGEST_FLOAT:
            if (
                isinstance(latency, bool)
                or not isinstance(latency, (int, float))
                or not math.isfinite(latency)
            ):
                raise ValueError("latency must be a finite number of seconds")
            if latency < 0:
                raise ValueError("latency must not be negative")
        if self.failure is not None:
            if not isinstance(self.failure, str):
                raise ValueError(
                    "failure must be the reason as a str, or None, not "
                    f"{type(self.failure).__name__}"
                )
            if not self.failure.strip():
                raise ValueError("the failure reason of a failed response must not be blank")
            if self.answers:
                raise ValueError("a failed response carries no answers")
            return
        answers = self.answers
        if type(answers) is _CheckedAnswers and answers.request is request:
            return  # a codec checked these answers against this very request
        questions = request.questions
        for question_id, answer in self.answers.items():
            if question_id not in questions:
                raise ValueError(
                    f"answer {question_id!r} answers no question asked; the ids asked are "
                    f"{_listed(questions)}"
                )
            question = questions[question_id]
            if isinstance(answer, RefusedAnswer):
                continue
            if answer.kind != question.kind:
                raise ValueError(
                    f"question {question_id!r} was asked as a {question.kind} but answered "
                    f"as a {answer.kind}"
                )
            if (
                isinstance(answer, ChoiceAnswer)
                and isinstance(question, Choice)
                and list(answer.probabilities.keys()) != list(question.options.keys())
            ):
                raise ValueError(
                    f"the answer to {question_id!r} must give one probability per option, "
                    f"in the question's order: {_listed(question.options)}"
                )
            if (
                isinstance(answer, ScoreAnswer)
                and isinstance(question, Score)
                and answer.levels != question.levels
            ):
                raise ValueError(f"the answer to {question_id!r} must carry the question's levels")
        if len(answers) != len(questions):  # each answer's id was asked: some are missing
            missing = [qid for qid in questions if qid not in answers]
            raise ValueError(
                "a successful response answers every question; no answer for "
                f"{_listed(dict.fromkeys(missing))}"
            )

    @classmethod
    def failed(
        cls,
        request: DecisionRequest,
        reason: str,
        *,
        latency: float = 0.0,
        model: str | None = None,
        request_id: str | None = None,
    ) -> DecisionResponse:
        """A call that answered nothing, for ``reason``; every read of it is refused."""
        return cls(
            request=request,
            answers={},
            input_tokens=None,
            model=model,
            request_id=request_id,
            latency=latency,
            failure=reason,
        )

    @property
    def success(self) -> bool:
        """Whether the call answered (every question has an answer or a refusal)."""
        return self.failure is None

    @property
    def output_tokens(self) -> int:
        """Always 0: a decision model generates no text."""
        return 0

    def choice(self, question_id: str) -> ChoiceAnswer:
        """The answer to the :class:`Choice` asked as ``question_id``."""
        return self._read(question_id, ChoiceAnswer)

    def noul(self, question_id: str) -> NoulAnswer:
        """The answer to the :class:`Noul` asked as ``question_id``."""
        return self._read(question_id, NoulAnswer)

    def score(self, question_id: str) -> ScoreAnswer:
        """The answer to the :class:`Score` asked as ``question_id``."""
        return self._read(question_id, ScoreAnswer)

    def _read(self, question_id: str, shape: type[_A]) -> _A:
        if self.failure is not None:
            raise AnswerReadError(
                f"the decision call failed, so question {question_id!r} has no answer: "
                f"{self.failure}"
            )
        questions = self.request.questions
        if question_id not in questions:
            raise AnswerReadError(
                f"question {question_id!r} was never asked; the ids asked are {_listed(questions)}"
            )
        asked = questions[question_id].kind
        if asked != shape.kind:
            raise AnswerReadError(
                f"question {question_id!r} was asked as a {asked}, not a {shape.kind}: read it "
                f"with .{asked}({question_id!r})"
            )
        answer = self.answers[question_id]
        if isinstance(answer, RefusedAnswer):
            why = answer.reason if answer.reason else "no reason given"
            raise AnswerReadError(
                f"the model refused question {question_id!r} ({why}), so it has no {asked} answer"
            )
        if not isinstance(answer, shape):  # the constructor keeps answers in their asked shape
            raise AnswerReadError(f"question {question_id!r} holds no {shape.kind} answer")
        return answer


(
    _SET_REQUEST,
    _SET_ANSWERS,
    _SET_TOKENS,
    _SET_MODEL,
    _SET_ID,
    _SET_LATENCY,
    _SET_FAILURE,
    _SET_READING,
) = (slot_setter(DecisionResponse, field.name) for field in attrs.fields(DecisionResponse))
"""Each field's slot setter, in the order of ``DecisionResponse.__init__``'s parameters, bound
once for the constructor and :func:`answered_response` (read as globals, no tuple unpacked on
each call)."""


def answered_response(
    request: DecisionRequest, answers: FrozenMap[str, Answer], model: str | None, latency: float
) -> DecisionResponse:
    """``DecisionResponse(request, answers, model=model, latency=latency)`` (no billed count, no
    request id): for a client whose ``answers`` a codec checked against this very ``request``
    (:func:`checked_answers`) and whose ``latency`` is a clock's difference, so the constructor
    would check nothing; the same response, made without its call. Anything else goes through
    the constructor."""
    if (
        type(answers) is not _CheckedAnswers
        or answers.request is not request
        or type(request) is not DecisionRequest
        or type(latency) is not float
        or not 0.0 <= latency <= _LARGEST_FLOAT
    ):
        return DecisionResponse(request, answers, None, model, None, latency)
    made: DecisionResponse = _new(DecisionResponse)
    _SET_REQUEST(made, request)
    _SET_ANSWERS(made, answers)
    _SET_TOKENS(made, None)
    _SET_MODEL(made, model)
    _SET_ID(made, None)
    _SET_LATENCY(made, latency)
    _SET_FAILURE(made, None)
    _SET_READING(made, None)
    return made


_new = object.__new__

"""The decision vocabulary: questions, answers, requests, responses, and their wire codecs.

A decision model reads a state and answers typed questions with probabilities: a
:class:`Choice` (which option?), a :class:`Noul` (is it so?) and a :class:`Score` (how much, on
an ordered scale?). A :class:`DecisionRequest` asks several at once; a :class:`DecisionResponse`
holds the answers, read back by the shape asked. :mod:`harness.decision.systemone` and
:mod:`harness.decision.openai` put them on the wire.
"""

from __future__ import annotations

from harness._public import claim_exports

from . import openai as openai
from . import systemone as systemone
from ._answers import Answer as Answer
from ._answers import ChoiceAnswer as ChoiceAnswer
from ._answers import NoulAnswer as NoulAnswer
from ._answers import RefusedAnswer as RefusedAnswer
from ._answers import ScoreAnswer as ScoreAnswer
from ._answers import choice_confidence as choice_confidence
from ._answers import score_confidence as score_confidence
from ._json import JsonValue as JsonValue
from ._questions import Choice as Choice
from ._questions import Noul as Noul
from ._questions import Question as Question
from ._questions import Score as Score
from ._request import DecisionRequest as DecisionRequest
from ._response import AnswerReadError as AnswerReadError
from ._response import DecisionResponse as DecisionResponse
from ._wire import RequestValidationError as RequestValidationError
from ._wire import WireReply as WireReply

__all__ = [
    "Answer",
    "AnswerReadError",
    "Choice",
    "ChoiceAnswer",
    "DecisionRequest",
    "DecisionResponse",
    "JsonValue",
    "Noul",
    "NoulAnswer",
    "Question",
    "RefusedAnswer",
    "RequestValidationError",
    "Score",
    "ScoreAnswer",
    "WireReply",
    "choice_confidence",
    "openai",
    "score_confidence",
    "systemone",
]

claim_exports(__name__, globals(), __all__)

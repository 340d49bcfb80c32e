"""What the packages above use of the wire's machinery and is not part of the vocabulary users
see: JSON written and read through orjson with the standard library's bytes (the canonical
body among them), the bounded reply reader and its byte limit, :func:`served_model` (the model
a reply names, when sensible), :func:`checked_answers` (answers already checked against their
request, for the calibration) and :func:`answered_response` (a response made of them without the
constructor's call), the answers' trusted constructors (values their caller has checked; see
``_answers.py``) and :func:`slot_setter` (a frozen class's field set as its ``__init__`` does),
the answers a model's distribution makes (:func:`most_probable_answer`,
:func:`expected_level_answer`), :func:`wire_questions` (a request's System One questions, made
once and shared), and :func:`reply_answers` with :func:`reply_model` (a System One reply's
answers and model, for a client that reads nothing else of it).
The one module of this package that other harness packages may import besides its public face."""

from harness.decision._answers import expected_level_answer as expected_level_answer
from harness.decision._answers import most_probable_answer as most_probable_answer
from harness.decision._answers import slot_setter as slot_setter
from harness.decision._answers import trusted_choice as trusted_choice
from harness.decision._answers import trusted_noul as trusted_noul
from harness.decision._answers import trusted_score as trusted_score
from harness.decision._codec import reply_model as reply_model
from harness.decision._json import compact_json as compact_json
from harness.decision._json import indented_json as indented_json
from harness.decision._json import json_bytes as json_bytes
from harness.decision._json import load_json as load_json
from harness.decision._response import answered_response as answered_response
from harness.decision._response import checked_answers as checked_answers
from harness.decision._wire import MAX_REPLY_BYTES as MAX_REPLY_BYTES
from harness.decision._wire import load_reply as load_reply
from harness.decision._wire import served_model as served_model
from harness.decision.systemone import _reply_answers as reply_answers
from harness.decision.systemone import wire_questions as wire_questions

__all__ = [
    "MAX_REPLY_BYTES",
    "answered_response",
    "checked_answers",
    "compact_json",
    "expected_level_answer",
    "indented_json",
    "json_bytes",
    "load_json",
    "load_reply",
    "most_probable_answer",
    "reply_answers",
    "reply_model",
    "served_model",
    "slot_setter",
    "trusted_choice",
    "trusted_noul",
    "trusted_score",
    "wire_questions",
]

"""Decision clients: the protocol, one client per provider, the providers table, redaction of
what a provider echoes, and the fake model.

A new provider is one module here (its client, speaking its wire from :mod:`harness.decision`)
and one row in ``_providers.py``."""

from typing import TYPE_CHECKING

from harness.providers._calibrated import CalibratedDecisionClient as CalibratedDecisionClient
from harness.providers._calibrated import CalibratedResponse as CalibratedResponse
from harness.providers._calibrated import calibrate as calibrate
from harness.providers._calibrated import calibrated_client as calibrated_client
from harness.providers._chat_logprobs import ChatLogprobsClient as ChatLogprobsClient
from harness.providers._client import DecisionClient as DecisionClient
from harness.providers._client import check_limits as check_limits
from harness.providers._client import local_answers as local_answers
from harness.providers._completion_logprobs import (
    CompletionLogprobsClient as CompletionLogprobsClient,
)
from harness.providers._fake import FakeDecisionModel as FakeDecisionModel
from harness.providers._fake import Policy as Policy
from harness.providers._fake import ScriptExhaustedError as ScriptExhaustedError
from harness.providers._fake import answer_by_kind as answer_by_kind
from harness.providers._fake import choose as choose
from harness.providers._fake import default_answers as default_answers
from harness.providers._fake import digest_of as digest_of
from harness.providers._fake import rate as rate
from harness.providers._fake import yes as yes
from harness.providers._fitted._client import FittedDecisionClient as FittedDecisionClient
from harness.providers._fitted._client import fitted_model as fitted_model
from harness.providers._fitted._client import heads_answer as heads_answer
from harness.providers._fitted._client import sort_questions as sort_questions
from harness.providers._fitted._encoders import ENCODERS as ENCODERS
from harness.providers._fitted._encoders import MINILM_INSTALL as MINILM_INSTALL
from harness.providers._fitted._encoders import fit_encoder as fit_encoder
from harness.providers._fitted._encoders import minilm_installed as minilm_installed
from harness.providers._fitted._errors import FittedError as FittedError
from harness.providers._fitted._features import Encoder as Encoder
from harness.providers._fitted._file import FittedModel as FittedModel
from harness.providers._fitted._file import amend_fitted as amend_fitted
from harness.providers._fitted._file import arrays_path as arrays_path
from harness.providers._fitted._file import load_fitted as load_fitted
from harness.providers._fitted._file import write_fitted as write_fitted
from harness.providers._fitted._heads import Head as Head
from harness.providers._fitted._reads import head_key as head_key
from harness.providers._fitted._reads import option_texts as option_texts
from harness.providers._fitted._reads import question_text as question_text
from harness.providers._fitted._reads import request_key as request_key
from harness.providers._fitted._tfidf import SparseRows as SparseRows
from harness.providers._http_failures import error_message as error_message
from harness.providers._http_failures import retry_after as retry_after
from harness.providers._logprob_reading import (
    LogprobsUnavailableError as LogprobsUnavailableError,
)
from harness.providers._openai import OpenAIDecisionsClient as OpenAIDecisionsClient
from harness.providers._providers import client_for as client_for
from harness.providers._providers import wire_body as wire_body
from harness.providers._redact import Redaction as Redaction
from harness.providers._systemone import HttpDecisionClient as HttpDecisionClient
from harness.providers._systemone import SystemOneClient as SystemOneClient

if TYPE_CHECKING:
    from harness.providers._embedded import EmbeddedDecisionClient as EmbeddedDecisionClient


def __getattr__(name: str) -> object:
    # The embedded model needs the `local` extra (sparrow-decider, numpy): load it on first use.
    if name == "EmbeddedDecisionClient":
        from harness.providers._embedded import EmbeddedDecisionClient

        return EmbeddedDecisionClient
    raise AttributeError(f"module 'harness.providers' has no attribute {name!r}")

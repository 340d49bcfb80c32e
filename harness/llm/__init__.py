"""Decision clients: the protocol, the providers, the recording wrapper and the fake model."""

from harness.llm._chat_logprobs import ChatLogprobsClient as ChatLogprobsClient
from harness.llm._client import DecisionClient as DecisionClient
from harness.llm._completion_logprobs import CompletionLogprobsClient as CompletionLogprobsClient
from harness.llm._fake import FakeDecisionModel as FakeDecisionModel
from harness.llm._fake import ScriptExhaustedError as ScriptExhaustedError
from harness.llm._fake import choose as choose
from harness.llm._fake import default_answers as default_answers
from harness.llm._fake import rate as rate
from harness.llm._fake import yes as yes
from harness.llm._http import error_message as error_message
from harness.llm._http import retry_after as retry_after
from harness.llm._logprob_reading import LogprobsUnavailableError as LogprobsUnavailableError
from harness.llm._observable import ObservableDecisionClient as ObservableDecisionClient
from harness.llm._openai import OpenAIDecisionsClient as OpenAIDecisionsClient
from harness.llm._providers import client_for as client_for
from harness.llm._providers import wire_body as wire_body
from harness.llm._systemone import HttpDecisionClient as HttpDecisionClient
from harness.llm._systemone import SystemOneClient as SystemOneClient
from harness.llm._systemone import check_limits as check_limits
from harness.llm._systemone import local_answers as local_answers


def __getattr__(name: str) -> object:
    # The embedded model needs the `local` extra (sparrow-decider, numpy): load it on first use.
    if name == "EmbeddedDecisionClient":
        from harness.llm._embedded import EmbeddedDecisionClient

        return EmbeddedDecisionClient
    raise AttributeError(f"module 'harness.llm' has no attribute {name!r}")

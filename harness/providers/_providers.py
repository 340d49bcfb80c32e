"""Which client and which wire a catalog entry's provider means."""

from __future__ import annotations

from harness.catalog import CatalogEntry, count_with_model
from harness.decision import DecisionRequest, openai, systemone
from harness.errors import ExternalServiceError
from harness.providers._client import DecisionClient

__all__ = ["client_for", "wire_body"]


def client_for(entry: CatalogEntry) -> DecisionClient:
    """A fresh client for ``entry``'s provider: ``systemone``, ``openai``, ``openai-chat``,
    ``openai-completions``, ``embedded``, ``llama`` or ``fitted``.

    The ``fake`` provider has no client of its own: a test installs one with
    ``Dispatcher(clients={entry.id: FakeDecisionModel(...)})``.
    """
    if entry.provider == "systemone":
        from harness.providers._systemone import SystemOneClient

        return SystemOneClient()
    if entry.provider == "openai":
        from harness.providers._openai import OpenAIDecisionsClient

        return OpenAIDecisionsClient()
    if entry.provider == "openai-chat":
        from harness.providers._chat_logprobs import ChatLogprobsClient

        return ChatLogprobsClient()
    if entry.provider == "openai-completions":
        from harness.providers._completion_logprobs import CompletionLogprobsClient

        return CompletionLogprobsClient()
    if entry.provider == "embedded":
        from harness.providers._embedded import EmbeddedDecisionClient  # needs the `local` extra

        return EmbeddedDecisionClient()
    if entry.provider == "llama":
        from harness.providers._llama import LlamaDecisionClient  # needs the `llama` extra

        return LlamaDecisionClient()
    if entry.provider == "fitted":
        from harness.providers._fitted._client import FittedDecisionClient  # the `fit` extra

        return FittedDecisionClient(client_for)
    raise ExternalServiceError(
        f"catalog entry {entry.id!r} has provider {entry.provider!r}, which has no client of its "
        f"own: install one with Dispatcher(clients={{{entry.id!r}: client}}), or pin an entry "
        "of provider systemone, openai, openai-chat, openai-completions, embedded, llama or fitted"
    )


def wire_body(request: DecisionRequest, entry: CatalogEntry) -> bytes:
    """The request's wire body as ``entry``'s provider receives it (compact UTF-8 JSON)."""
    if entry.provider == "openai":
        return openai.encode_body(request, entry.wire_model_id)
    if entry.provider == "openai-chat":
        from harness.providers._chat_logprobs import chat_body

        return chat_body(request, entry)
    if entry.provider == "openai-completions":
        from harness.providers._completion_logprobs import completion_body

        return completion_body(request, entry)
    if entry.provider == "llama":
        from harness.providers._llama_body import llama_body

        return llama_body(request, entry)
    return systemone.encode_body(request, entry.wire_model_id)


def _llama_count(entry: CatalogEntry, body: bytes) -> int:
    from harness.providers._llama_body import context_tokens

    return context_tokens(entry, body)


count_with_model("llama", _llama_count)

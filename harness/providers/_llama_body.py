"""A ``llama`` call's wire body (the prompts it evaluates, what ``--bodies`` keeps in the record)
and its count at resolution (the longest sequence a context must hold, in the model's tokens)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.decision._internal import json_bytes, load_json

from ._client import local_answers
from ._llama_gguf import model_for
from ._llama_prompt import ChatTemplate, Prompt, Segment
from ._llama_sequences import chat_template, option_sequences, question_prompts

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest

__all__ = ["context_tokens", "llama_body", "template_if_chat"]


def template_if_chat(entry: CatalogEntry) -> ChatTemplate | None:
    """The GGUF's chat template cut at its messages when the entry's format is ``chat`` (the
    model loaded then), else None."""
    if entry.prompt_format != "chat":
        return None
    return chat_template(entry, model_for(entry))


def llama_body(request: DecisionRequest, entry: CatalogEntry) -> bytes:
    """The prompts a call of ``entry`` evaluates, as compact JSON: each question's prompt (its
    text; a chat prompt as its pieces, each with whether it is template markup), its options'
    continuations and the closing delimiter. What ``--bodies`` keeps in the record."""
    asked = question_prompts(request, entry, template_if_chat(entry), local_answers(request))
    prompts: dict[str, object] = {}
    orderings: dict[str, list[object]] = {}
    for item in asked:
        prompt = item.prompt
        shown: object = (
            prompt.text
            if all(not s.special for s in prompt.segments)
            else [[s.text, s.special] for s in prompt.segments]
        )
        made: dict[str, object] = {
            "prompt": shown,
            "options": list(prompt.options),
            "closing": [prompt.closing.text, prompt.closing.special],
        }
        if entry.orderings > 1:
            made["order"] = list(item.order)
            orderings.setdefault(item.question_id, []).append(made)
            prompts[item.question_id] = orderings[item.question_id]
        else:
            prompts[item.question_id] = made
    body = {
        "model": entry.wire_model_id,
        "prompt_format": entry.prompt_format,
        "prompts": prompts,
    }
    return json_bytes(body, allow_nan=True)


def context_tokens(entry: CatalogEntry, body: bytes) -> int:
    """The tokens the context must hold for the call whose wire body is ``body`` (the longest
    of its sequences: a prompt, an option, the delimiter), counted with the model's own
    tokenizer; what the dispatcher checks against ``max_context_tokens`` at resolution."""
    model = model_for(entry)
    document: Any = load_json(body)  # the body llama_body wrote
    longest = 0
    for found in document.get("prompts", {}).values():
        for item in found if isinstance(found, list) else [found]:
            shown = item["prompt"]
            if isinstance(shown, str):
                segments: tuple[Segment, ...] = (Segment(shown),)
            else:
                segments = tuple(Segment(text, bool(special)) for text, special in shown)
            closing = Segment(item["closing"][0], bool(item["closing"][1]))
            prompt = Prompt(segments, tuple(item["options"]), closing)
            sequences, _ = option_sequences(model, prompt)
            longest = max(longest, *(len(s) for s in sequences))
    return longest

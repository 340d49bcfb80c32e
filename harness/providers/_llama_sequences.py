"""The prompts and token sequences a llama call scores: each question's prompt with the
entry's solved examples for its role, the chat template cut at its messages, and every option's
token sequence in the model's own tokenization (checked to extend its prompt's tokens).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, cast

import attrs

from harness.catalog import role_of
from harness.decision import Answer, DecisionRequest, Question
from harness.errors import ExternalServiceError

from . import _logprob_reading
from ._llama_engine import (
    LlamaModel,
)
from ._llama_prompt import (
    ChatTemplate,
    ChoiceOptions,
    Prompt,
    Segment,
    base_prompt,
    chat_prompt,
    cut_template,
    option_names,
    template_messages,
)

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry, SolvedExample

__all__ = ["chat_template", "option_sequences", "question_prompts"]


# -- prompts --------------------------------------------------------------------------------------


def _examples(entry: CatalogEntry, question_id: str, question: Question) -> Sequence[SolvedExample]:
    examples = getattr(entry, "examples", None)  # the entry's solved examples, when it has some
    if examples is None:
        return ()
    return cast("Sequence[SolvedExample]", examples.for_role(role_of(question_id, question)))


_templates: dict[str, ChatTemplate] = {}


def chat_template(entry: CatalogEntry, model: LlamaModel) -> ChatTemplate:
    """The model's chat template cut at its messages; refused when the GGUF has none."""
    found = _templates.get(model.path)
    if found is not None:
        return found
    rendered = model.render_chat(template_messages(), open_reply=False)
    cut = None if rendered is None else cut_template(rendered)
    if cut is None:
        raise ExternalServiceError(
            f'catalog entry {entry.id!r} asks for prompt_format = "chat", but the GGUF has no '
            'chat template llama.cpp knows: use prompt_format = "base"'
        )
    _templates[model.path] = cut
    return cut


@attrs.frozen
class _Asked:
    """One question under one ordering of its options."""

    question_id: str
    question: Question
    order: tuple[int, ...]
    prompt: Prompt


def question_prompts(
    request: DecisionRequest,
    entry: CatalogEntry,
    template: ChatTemplate | None = None,
    skip: Mapping[str, Answer] | None = None,
) -> list[_Asked]:
    """Every prompt of ``request`` (each question under each of its orderings), the questions
    in ``skip`` left out."""
    state = _logprob_reading.render_state(request)
    how = cast("ChoiceOptions", entry.choice_options)
    asked = []
    for question_id, question in request.questions.items():
        if skip and question_id in skip:
            continue
        examples = _examples(entry, question_id, question)
        count = len(option_names(question, how))
        for order in _logprob_reading.cyclic_orders(count, entry.orderings):
            if entry.prompt_format == "chat":
                assert template is not None
                prompt = chat_prompt(
                    state, question, examples, template, choice_options=how, order=order
                )
            else:
                prompt = base_prompt(state, question, examples, choice_options=how, order=order)
            asked.append(_Asked(question_id, question, tuple(order), prompt))
    return asked


# -- tokens ---------------------------------------------------------------------------------------

_TOKENS_KEPT: Final = 512
_token_cache: OrderedDict[tuple[str, str, bool, bool], tuple[int, ...]] = OrderedDict()
_token_lock = threading.Lock()


def _tokenize(model: LlamaModel, text: str, *, first: bool, special: bool) -> tuple[int, ...]:
    """The model's tokens of ``text``, kept for the last few hundred texts (the count at
    resolution and the call that follows tokenize the same prompts)."""
    key = (model.path, text, first, special)
    with _token_lock:
        found = _token_cache.get(key)
        if found is not None:
            _token_cache.move_to_end(key)
            return found
    made = tuple(model.tokenize(text, first=first, special=special))
    with _token_lock:
        _token_cache[key] = made
        while len(_token_cache) > _TOKENS_KEPT:
            _token_cache.popitem(last=False)
    return made


def _segments_tokens(model: LlamaModel, segments: Sequence[Segment]) -> list[int]:
    """The tokens of ``segments``: each run of plain text tokenized as one text, markup apart."""
    tokens: list[int] = []
    run: list[str] = []
    first = True

    def flush() -> None:
        nonlocal first
        if run:
            tokens.extend(_tokenize(model, "".join(run), first=first, special=False))
            run.clear()
            first = False

    for segment in segments:
        if segment.special:
            flush()
            tokens.extend(_tokenize(model, segment.text, first=first, special=True))
            first = False
        else:
            run.append(segment.text)
    flush()
    return tokens


def option_sequences(model: LlamaModel, prompt: Prompt) -> tuple[list[list[int]], int]:
    """Each option's whole token sequence (the prompt, the option, the closing delimiter) and
    where the options' own tokens start: the prompt's length when its tokens begin every
    sequence (the usual case), else where the sequences first differ."""
    prompt_tokens = _segments_tokens(model, prompt.segments)
    sequences = [
        _segments_tokens(model, (*prompt.segments, Segment(option), prompt.closing))
        for option in prompt.options
    ]
    size = len(prompt_tokens)
    if all(s[:size] == prompt_tokens for s in sequences):
        start = size
    else:  # a merge across the prompt's end: score from where the options first differ
        start = min(_common(sequences[0], s) for s in sequences[1:]) if len(sequences) > 1 else 1
    return sequences, max(1, min(start, min(len(s) for s in sequences)))


def _common(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count

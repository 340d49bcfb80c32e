"""Decisions scored from completions' prompt logprobs (catalog provider ``openai-completions``).

Each question becomes a prompt (the state, the question, its options listed, ``Answer:``), and
each option a continuation of it: ``" " + option + "\\n"`` (the option's key, ``yes`` / ``no``
for a noul, the level's number for a score; the closing newline tells a prefix option,
``billing``, from a longer one, ``billing dispute``). Every prompt-plus-continuation is sent with
``echo: true`` and ``logprobs``, so the server returns the log-probability of each of its own
tokens: the tokenization is the server's, never guessed with another tokenizer.

An option's score is the sum of its text's token logprobs after the tokens all options of the
question share (the shared prefix is scored once and cancels), so the normalised scores are
exactly ``P(prompt + option_i) / sum_j P(prompt + option_j)``: the model's probability of each
option's text, given that it answers with one of them. The share of the model's probability on
the option texts after the prompt goes with the answer as its ``mass`` (refused below the entry's
``mass_floor``, default 0: no floor).

All prompts of a request (every question, option and ordering) go in one call as a list (the
API allows it), split only past :data:`MAX_PROMPTS` a call. A server that takes one prompt a call
(llama-cpp-python's refuses a list) is asked one prompt a call from its first refusal on.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs

from harness.catalog import CatalogEntry
from harness.decision import Answer, DecisionRequest, Noul, RefusedAnswer
from harness.decision._internal import served_model
from harness.errors import NotAnAnswerError, StatusError

from . import _logprob_reading
from ._client import local_answers
from ._http import Endpoint
from ._logprob_reading import Asked, LogprobClient, Read, Reading

__all__ = ["MAX_PROMPTS", "CompletionLogprobsClient", "option_prompts", "question_prompt"]

MAX_PROMPTS = 32
"""The most prompts one completions call carries."""
_LIST_REFUSED = frozenset({400, 413, 422, 500})
"""The statuses with which a server that takes one prompt a call refuses a list."""
DELIMITER = "\n"


def question_prompt(state: str, asked: Asked, order: Sequence[int]) -> str:
    """The prompt of ``asked`` with its options listed in ``order``, ending in ``Answer:``."""
    lines = [state, "", f"Question: {asked.instructions}", "Options:"]
    for index in order:
        name, description = asked.names[index], asked.descriptions[index]
        if asked.kind == "score":
            lines.append(f"- {name}: {description}")
        else:
            lines.append(f"- {name}: {description}" if description else f"- {name}")
    how = {
        "noul": "Answer yes or no.",
        "score": "Answer with the level's number.",
    }.get(asked.kind, "Answer with one option.")
    lines.append(how)
    return "\n".join(lines) + "\nAnswer:"


def option_prompts(prompt: str, asked: Asked) -> list[str]:
    """``prompt`` continued by each option's text and the closing delimiter, in option order."""
    return [f"{prompt} {name}{DELIMITER}" for name in asked.names]


@attrs.frozen
class _Group:
    """The prompts of one question under one ordering."""

    question_id: str
    prompt: str
    texts: tuple[str, ...]
    first: int
    """Where its prompts start in the request's list."""


@attrs.frozen
class _Scored:
    tokens: tuple[str, ...]
    logprobs: tuple[float | None, ...]
    offsets: tuple[int, ...]


class CompletionLogprobsClient(LogprobClient):
    """A :class:`harness.providers.DecisionClient` scoring options with the prompt logprobs of any
    OpenAI-compatible completions endpoint (``echo``; see the module docstring)."""

    service: ClassVar[str] = "OpenAI-compatible completions server"
    method: ClassVar[str] = "completion-echo"

    def __init__(self, *, max_connections: int = 0) -> None:
        super().__init__(max_connections=max_connections)
        self._one_prompt: set[str] = set()
        """Entries whose server took a list of prompts badly: asked one prompt a call."""

    async def read(
        self, request: DecisionRequest, entry: CatalogEntry, deadline: float | None
    ) -> Read:
        """The options' texts scored, as many prompts a call as the server takes."""
        settled = local_answers(request)
        endpoint = self.endpoint(entry, request)
        groups, texts = _groups(request, entry, settled)
        size = 1 if entry.id in self._one_prompt else MAX_PROMPTS
        chunks = [texts[i : i + size] for i in range(0, len(texts), size)]
        calls = len(chunks)
        try:
            replies = await asyncio.gather(
                *(self._score(entry, endpoint, chunk, deadline) for chunk in chunks)
            )
        except (NotAnAnswerError, StatusError) as error:
            # A server that scores one prompt a call (llama-cpp-python's) refuses a list, with a
            # 4xx, a 500 or a wrong number of choices: ask it one prompt a call from now on.
            if size == 1 or not (
                isinstance(error, NotAnAnswerError) or error.status in _LIST_REFUSED
            ):
                raise
            chunks = [[text] for text in texts]
            replies = await asyncio.gather(
                *(self._score(entry, endpoint, chunk, deadline) for chunk in chunks)
            )
            self._one_prompt.add(entry.id)
            calls += len(chunks)
        scored = [item for reply in replies for item in reply[0]]
        questions = request.questions
        shares: dict[str, list[list[float]]] = {}
        mass: dict[str, list[float]] = {}
        for group in groups:
            found = scored[group.first : group.first + len(group.texts)]
            distribution, covered = _distribution(group, found, endpoint, self.service)
            shares.setdefault(group.question_id, []).append(distribution)
            mass.setdefault(group.question_id, []).append(covered)
        floor = entry.mass_floor or 0.0
        answers: dict[str, Answer] = {}
        for question_id, question in questions.items():
            if question_id in settled:
                answers[question_id] = settled[question_id]
                continue
            reads = shares[question_id]
            least = min(mass[question_id])
            if least < floor:
                answers[question_id] = RefusedAnswer(
                    f"only {least:.2%} of the model's probability fell on the options' texts "
                    f"after the prompt (mass_floor {floor:.0%}); rephrase the question or "
                    "lower mass_floor"
                )
                continue
            averaged = [math.fsum(r[i] for r in reads) / len(reads) for i in range(len(reads[0]))]
            answers[question_id] = _logprob_reading.answer_for(question, averaged)
        reading = Reading(
            method=self.method,
            upstream_calls=calls,
            mass={qid: min(values) for qid, values in mass.items()},
            orderings=entry.orderings,
        )
        tokens = [reply[1] for reply in replies]
        return Read(
            answers=answers,
            reading=reading,
            input_tokens=sum(t or 0 for t in tokens)
            if all(t is not None for t in tokens)
            else None,
            models=[model for _, _, model, _ in replies if model],
            request_ids=[request_id for _, _, _, request_id in replies if request_id],
        )

    def body(self, entry: CatalogEntry, prompts: Sequence[str]) -> dict[str, object]:
        """The completions body scoring ``prompts`` (one generated token, ignored)."""
        return {
            "model": entry.wire_model_id,
            "prompt": list(prompts),
            "max_tokens": 1,
            "temperature": 0,
            "echo": True,
            "logprobs": 0,
        }

    async def _score(
        self,
        entry: CatalogEntry,
        endpoint: Endpoint,
        prompts: Sequence[str],
        deadline: float | None,
    ) -> tuple[list[_Scored], int | None, str | None, str | None]:
        reply, http = await self.post(entry, endpoint, self.body(entry, prompts), deadline=deadline)
        choices = reply.get("choices")
        if not isinstance(choices, list) or len(choices) != len(prompts):
            count = len(choices) if isinstance(choices, list) else 0
            raise NotAnAnswerError(
                f"{self.service} at {endpoint.shown_url} answered {count} choices for "
                f"{len(prompts)} prompts; it must take a list of prompts (one choice each)",
                status=http.status,
                request_id=http.request_id,
            )
        by_index: dict[int, _Scored] = {}
        for position, choice in enumerate(choices):
            if not isinstance(choice, Mapping):
                raise self._malformed(endpoint, "a choice that is not an object")
            index = choice.get("index", position)
            if not isinstance(index, int) or not 0 <= index < len(prompts):
                raise self._malformed(endpoint, "a choice index outside the prompts sent")
            logprobs = choice.get("logprobs")
            if not isinstance(logprobs, Mapping) or not isinstance(
                logprobs.get("token_logprobs"), list
            ):
                raise self.no_logprobs(endpoint, entry, "the prompt's token logprobs (echo)")
            by_index[index] = _read_choice(logprobs, prompts[index], endpoint, self)
        if len(by_index) != len(prompts):
            raise self._malformed(endpoint, "two choices with the same index")
        scored = [by_index[i] for i in range(len(prompts))]
        return (
            scored,
            _logprob_reading.usage_tokens(reply),
            served_model(reply.get("model")),
            http.request_id,
        )

    def _malformed(self, endpoint: Endpoint, what: str) -> NotAnAnswerError:
        return NotAnAnswerError(
            f"{self.service} at {endpoint.shown_url} sent {what}; check that it speaks OpenAI's "
            "completions format"
        )

    async def served_model(self, entry: CatalogEntry) -> str:
        """The model's name as the server reports it, after checking it returns prompt logprobs
        (what ``harness serve`` asks at start: a server without them is refused with the fix)."""
        probe = DecisionRequest("1 + 1 = 2", {"probe": Noul("Is this true?")})
        endpoint = self.endpoint(entry, probe)
        reply, _ = await self.post(
            entry, endpoint, self.body(entry, ["Answer: yes\n"]), deadline=time.monotonic() + 30
        )
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        logprobs = first.get("logprobs") if isinstance(first, Mapping) else None
        if not isinstance(logprobs, Mapping) or not isinstance(
            logprobs.get("token_logprobs"), list
        ):
            raise self.no_logprobs(endpoint, entry, "the prompt's token logprobs (echo)")
        return served_model(reply.get("model")) or entry.wire_model_id


def _groups(
    request: DecisionRequest, entry: CatalogEntry, settled: Mapping[str, Answer]
) -> tuple[list[_Group], list[str]]:
    state = _logprob_reading.render_state(request)
    groups: list[_Group] = []
    texts: list[str] = []
    for asked in _logprob_reading.asked_questions(request):
        if asked.question_id in settled:
            continue
        for order in _logprob_reading.cyclic_orders(len(asked.names), entry.orderings):
            prompt = question_prompt(state, asked, order)
            continued = option_prompts(prompt, asked)
            groups.append(_Group(asked.question_id, prompt, tuple(continued), len(texts)))
            texts.extend(continued)
    return groups, texts


def _read_choice(
    logprobs: Mapping[str, object], prompt: str, endpoint: Endpoint, client: LogprobClient
) -> _Scored:
    tokens = logprobs.get("tokens")
    values = logprobs.get("token_logprobs")
    offsets = logprobs.get("text_offset")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise NotAnAnswerError(
            f"{client.service} at {endpoint.shown_url} sent logprobs whose tokens and "
            "token_logprobs differ in length; check that it speaks OpenAI's completions format"
        )
    if not all(isinstance(t, str) for t in tokens):
        raise NotAnAnswerError(
            f"{client.service} at {endpoint.shown_url} sent a token that is not a string"
        )
    if not isinstance(offsets, list) or len(offsets) != len(tokens):
        counted: list[object] = []
        at = 0
        for token in tokens:
            counted.append(at)
            at += len(token)
        offsets = counted
    kept_tokens: list[str] = []
    kept_values: list[float | None] = []
    kept_offsets: list[int] = []
    for token, value, offset in zip(tokens, values, offsets, strict=True):
        if not isinstance(offset, int) or offset >= len(prompt):
            break  # the generated token(s) after the echoed prompt
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not value <= 0
        ):
            raise NotAnAnswerError(
                f"{client.service} at {endpoint.shown_url} sent a token logprob that is not a "
                "number <= 0"
            )
        kept_tokens.append(str(token))
        kept_values.append(None if value is None else float(value))
        kept_offsets.append(offset)
    return _Scored(tuple(kept_tokens), tuple(kept_values), tuple(kept_offsets))


def _distribution(
    group: _Group, scored: Sequence[_Scored], endpoint: Endpoint, service: str
) -> tuple[list[float], float]:
    """The group's option distribution (exact, see the module docstring) and its mass."""
    shared = 0
    shortest = min(len(s.tokens) for s in scored)
    while shared < shortest and all(
        (s.tokens[shared], s.offsets[shared])
        == (scored[0].tokens[shared], scored[0].offsets[shared])
        for s in scored
    ):
        shared += 1
    shared = max(shared, 1)  # the first token has no logprob of its own
    scores: list[float] = []
    after_prompt: list[float] = []
    boundary = len(group.prompt)
    for s in scored:
        tail = s.logprobs[shared:]
        if any(v is None for v in tail):
            raise NotAnAnswerError(
                f"{service} at {endpoint.shown_url} sent a token without a logprob inside an "
                "option's text; it must return every prompt token's logprob with echo"
            )
        scores.append(math.fsum(v for v in tail if v is not None))
        # The option's own tokens: from the one holding the first character after the prompt.
        start = next(
            (
                i
                for i in range(len(s.offsets))
                if (s.offsets[i + 1] if i + 1 < len(s.offsets) else math.inf) > boundary
            ),
            len(s.offsets),
        )
        own = [v for v in s.logprobs[max(start, 1) :] if v is not None]
        after_prompt.append(math.fsum(own))
    top = max(scores)
    weights = [math.exp(score - top) for score in scores]
    total = math.fsum(weights)
    mass = math.fsum(math.exp(v) for v in after_prompt)
    return [w / total for w in weights], min(1.0, mass)


def completion_body(request: DecisionRequest, entry: CatalogEntry) -> bytes:
    """The completions body of ``request``'s longest prompt: what must fit in the model's context
    (``max_context_tokens``) and what admission counts. The call carries every prompt (about
    one per option and ordering), each billed: see docs/providers.md for the cost."""
    from harness.decision._internal import json_bytes

    _, texts = _groups(request, entry, local_answers(request))
    client = CompletionLogprobsClient.__new__(CompletionLogprobsClient)
    longest = max(texts, key=len, default="")
    body = client.body(entry, [longest])
    return json_bytes(body, allow_nan=True)

"""What the two logprob providers share: questions as option lists, prompts, answers, the
reading each answer carries, and the one round trip to an OpenAI-compatible server.

A question becomes a list of options (:class:`Asked`): a choice its options, a noul ``yes`` /
``no``, a score its levels by number. The chat provider
(:mod:`harness.providers._chat_logprobs`) shows them with labels and reads the label's
probability from the first token's ``top_logprobs``; the completions provider
(:mod:`harness.providers._completion_logprobs`) scores each option's text with prompt logprobs.
Both turn the option distribution into the question's answer with :func:`answer_for` and say
how they read it in a :class:`Reading`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs

from harness.catalog import CatalogEntry
from harness.decision import (
    Answer,
    Choice,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Question,
    RefusedAnswer,
    Score,
)
from harness.decision._internal import (
    compact_json,
    expected_level_answer,
    json_bytes,
    load_json,
    most_probable_answer,
)
from harness.errors import ExternalServiceError, NotAnAnswerError

from ._client import CheckedClient
from ._http import Endpoint, HttpReply, HttpTransport

__all__ = [
    "Asked",
    "LogprobClient",
    "LogprobsUnavailableError",
    "Read",
    "Reading",
    "answer_for",
    "asked_questions",
    "cyclic_orders",
    "render_state",
]


class LogprobsUnavailableError(ExternalServiceError):
    """An OpenAI-compatible server answered without the token logprobs a logprob provider reads
    (the server, a gateway or the model does not offer them): names the fix."""


@attrs.frozen
class Asked:
    """One question as the options an LLM picks from, in the question's order."""

    question_id: str
    kind: str
    instructions: str
    names: tuple[str, ...]
    """What each option is called in the answer and in a completion: option keys, ``yes`` /
    ``no``, level numbers ``0``..``n-1``."""
    descriptions: tuple[str | None, ...]


def asked_questions(request: DecisionRequest) -> list[Asked]:
    """Every question of ``request`` as options (see :class:`Asked`)."""
    return [_asked(qid, question) for qid, question in request.questions.items()]


def _asked(question_id: str, question: Question) -> Asked:
    if isinstance(question, Choice):
        names = tuple(question.options)
        descriptions = tuple(question.options.values())
    elif isinstance(question, Noul):
        names = ("yes", "no")
        descriptions = (question.when_true, question.when_false)
    else:
        names = tuple(str(i) for i in range(len(question.levels)))
        descriptions = tuple(question.levels)
    return Asked(question_id, question.kind, question.instructions, names, descriptions)


def render_state(request: DecisionRequest) -> str:
    """The state as the prompt shows it: a string as it is, JSON compactly."""
    state = request.state
    if isinstance(state, str):
        return state
    return compact_json(state, finite=True)  # a request's state: checked


def cyclic_orders(count: int, orderings: int) -> list[list[int]]:
    """``orderings`` cyclic rotations of ``range(count)``, spread evenly (at most ``count``)."""
    shown = max(1, min(orderings, count))
    return [
        [(start + i) % count for i in range(count)]
        for start in sorted({r * count // shown for r in range(shown)})
    ]


def answer_for(question: Question, probabilities: Sequence[float]) -> Answer:
    """The answer of ``question`` from one probability per option (normalised here)."""
    total = math.fsum(probabilities)
    if not total > 0 or not math.isfinite(total):
        return RefusedAnswer("the model put no probability on any option")
    shares = [min(1.0, max(0.0, p / total)) for p in probabilities]
    if isinstance(question, Choice):
        return most_probable_answer(dict(zip(question.options, shares, strict=True)))
    if isinstance(question, Noul):
        return NoulAnswer(shares[0])
    assert isinstance(question, Score)
    return expected_level_answer(question.levels, shares)


@attrs.frozen
class Reading:
    """How a decision was read from logprobs, for the call's record and its span.

    ``method`` is ``"chat-labels"`` or ``"completion-echo"``; ``upstream_calls`` the round trips
    the decision took; ``mass`` the share of the model's probability that fell on each question's
    options (chat: on the labels of its first round; completions: on the option texts after the
    prompt); ``orderings`` the cyclic orderings averaged; ``hierarchy`` the questions read in
    groups (more options than ``top_logprobs`` shows); ``bounded`` the questions with labels
    below the shown ``top_logprobs``, read in another round.
    """

    method: str
    upstream_calls: int
    mass: Mapping[str, float]
    orderings: int = 1
    hierarchy: tuple[str, ...] = ()
    bounded: tuple[str, ...] = ()

    def as_json(self) -> dict[str, object]:
        """The reading as plain JSON values."""
        return {
            "method": self.method,
            "upstream_calls": self.upstream_calls,
            "mass": dict(self.mass),
            "orderings": self.orderings,
            "hierarchy": list(self.hierarchy),
            "bounded": list(self.bounded),
        }


@attrs.frozen
class Read:
    """What a logprob provider read for one request: the answers (settled ones included), how it
    read them, and what the server reported (the prompt tokens, or None when unknown; the models
    and request ids named, the first of each goes in the response)."""

    answers: Mapping[str, Answer]
    reading: Reading
    input_tokens: int | None
    models: Sequence[str]
    request_ids: Sequence[str]


class LogprobClient(CheckedClient):
    """What both logprob providers share: the decision's frame (its deadline and latency, the
    response made of what :meth:`read` found) and the round trip, a POST of JSON to the entry's
    URL classified as every HTTP client of harness classifies it, the reply read as a JSON object.

    Counts round trips in ``upstream_calls``; each response carries its :class:`Reading`.
    """

    service: ClassVar[str] = "OpenAI-compatible server"
    method: ClassVar[str] = ""

    def __init__(self, *, max_connections: int = 0) -> None:
        self._transport = HttpTransport(max_connections=max_connections)
        self.upstream_calls = 0

    async def answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> DecisionResponse:
        """Answer ``request`` with ``entry``'s model (see ``harness.providers.DecisionClient``):
        what :meth:`read` finds within the time left, with the :class:`Reading`."""
        started = time.perf_counter()
        deadline = None if timeout is None else time.monotonic() + timeout
        found = await self.read(request, entry, deadline)
        return DecisionResponse(
            request=request,
            answers=found.answers,
            input_tokens=found.input_tokens,
            model=found.models[0] if found.models else entry.wire_model_id,
            request_id=found.request_ids[0] if found.request_ids else None,
            latency=time.perf_counter() - started,
            failure=None,
            reading=found.reading.as_json(),
        )

    async def read(
        self, request: DecisionRequest, entry: CatalogEntry, deadline: float | None
    ) -> Read:
        """Every answer of ``request``: the one-option choices settled here
        (:func:`~harness.providers.local_answers`), the others read from ``entry``'s model before
        ``deadline`` (a ``time.monotonic()``, or None)."""
        raise NotImplementedError

    def endpoint(self, entry: CatalogEntry, request: DecisionRequest | None) -> Endpoint:
        """The entry's URL with the redaction of ``request``'s text and the entry's key."""
        return Endpoint.of(self.service, entry, request)

    async def post(
        self,
        entry: CatalogEntry,
        endpoint: Endpoint,
        payload: Mapping[str, object],
        *,
        deadline: float | None,
    ) -> tuple[dict[str, object], HttpReply]:
        """One round trip; the reply's JSON object, or :class:`NotAnAnswerError`."""
        timeout = None if deadline is None else max(0.001, deadline - time.monotonic())
        body = json_bytes(payload, allow_nan=True)
        self.upstream_calls += 1
        reply = await self._transport.request("POST", endpoint, entry, body, timeout=timeout)
        try:
            decoded: object = load_json(reply.body)
        except (ValueError, RecursionError):
            decoded = None
        if not isinstance(decoded, dict):
            raise NotAnAnswerError(
                f"{self.service} at {endpoint.shown_url} answered HTTP {reply.status} with a body "
                "that is not a JSON object; check the entry's base_url and path",
                status=reply.status,
                request_id=reply.request_id,
            )
        return decoded, reply

    def no_logprobs(self, endpoint: Endpoint, entry: CatalogEntry, what: str) -> Exception:
        """The refusal of a reply without logprobs, with the fix."""
        return LogprobsUnavailableError(
            f"{self.service} at {endpoint.shown_url} answered without {what}, so entry "
            f"{entry.id!r} ({entry.provider}) cannot read a decision from it: use a server and "
            "model that return logprobs (OpenAI, vLLM, llama.cpp's server, llama-cpp-python; "
            "see docs/providers.md), or another provider"
        )

    async def list_models(self, entry: CatalogEntry) -> list[str] | None:
        """Not asked: an OpenAI-compatible listing says nothing about logprobs."""
        return None

    async def aclose(self) -> None:
        """Close the pooled connections; idempotent."""
        await self._transport.aclose()


def usage_tokens(payload: Mapping[str, object]) -> int | None:
    """``usage.prompt_tokens`` when the reply states it."""
    usage = payload.get("usage")
    if isinstance(usage, Mapping):
        tokens = usage.get("prompt_tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
            return tokens
    return None

"""Decisions from a GGUF model run in this process (catalog provider ``llama``): the client.

The model (named by the entry's ``model_path``, or by ``gguf_package``, an installed package
that ships one and says where through its own API: :mod:`harness.providers._llama_gguf`) is
loaded once per process and shared by every call of every entry naming it. Calls run off the
event loop, each on a worker thread holding one of the entry's contexts
(:mod:`harness.providers._llama_contexts`: ``max_concurrent`` of them at most, one by default;
each its own KV cache over the same weights), so a run's other jobs and a server in the same
process go on.

Each question becomes a prompt (:mod:`harness.providers._llama_prompt`: ``base`` or ``chat``,
after the entry's solved examples for the question's role), each option its continuation closed
by a delimiter; an option's probability is the normalised exponential of its summed
log-likelihood, scored by teacher forcing from the model's logits over the whole vocabulary
(:mod:`harness.providers._llama_engine`: the state evaluated once per request, each question's
prompt once, each option over its own tokens). A ``Noul`` is asked yes/no, a ``Score`` its levels
by number, a ``Choice`` its options (``choice_options``: labels or texts). The share of the
model's probability on the options after the prompt is each question's ``mass`` in the call's
``reading`` (refused below the entry's ``mass_floor``, default 0), beside where the call ran
(the process, its context's number, the process's GGUF loads) and the prompt tokens it reused
from its context's cache (``reused_tokens``).

The prompts a call used are its wire body (:mod:`harness.providers._llama_body`), so ``--bodies``
keeps them in the run's record.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar, Final

import attrs

from harness.decision import Answer, DecisionRequest, DecisionResponse, RefusedAnswer
from harness.errors import ExternalServiceError, TransientError

from . import _logprob_reading
from ._client import CheckedClient, local_answers
from ._llama_body import template_if_chat
from ._llama_contexts import Contexts, Place, contexts_for, settings_of
from ._llama_engine import EngineError, LateError, LlamaModel
from ._llama_gguf import gguf_path, model_for
from ._llama_sequences import option_sequences, question_prompts
from ._logprob_reading import Reading

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = [
    "METHOD",
    "LlamaDecisionClient",
    "contexts_for",
    "gguf_path",
    "model_for",
    "settings_of",
]

METHOD: Final = "llama-logits"
"""The ``reading``'s method: options scored from the model's own logits in this process."""


@attrs.frozen
class _Outcome:
    answers: Mapping[str, Answer]
    reading: Reading
    place: Place
    tokens: int
    reused: int
    model: str


class LlamaDecisionClient(CheckedClient):
    """A :class:`harness.providers.DecisionClient` answering with a GGUF model in this process
    (see the module's notes). Holds nothing of its own: the model and its contexts are the
    process's, shared by every client of the entry."""

    method: ClassVar[str] = METHOD

    async def answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> DecisionResponse:
        """Answer ``request`` with ``entry``'s model, on one of its contexts' threads."""
        started = time.perf_counter()
        deadline = None if timeout is None else time.monotonic() + timeout
        settled = local_answers(request)
        if len(settled) == len(request.questions):
            model = await self._model(entry)
            return DecisionResponse(request, settled, input_tokens=0, model=model.name)
        loop = asyncio.get_running_loop()
        model = await self._model(entry)
        pool = contexts_for(settings_of(entry))
        work = loop.run_in_executor(
            pool.executor, _decide, pool, model, request, entry, settled, deadline
        )
        try:
            outcome = await asyncio.wait_for(work, timeout)
        except TimeoutError:
            raise TransientError(
                f"the model of entry {entry.id!r} gave no answer within {timeout:.3g} s "
                "(raise decision_timeout_s for a slow machine or a long state)"
            ) from None
        return DecisionResponse(
            request=request,
            answers=outcome.answers,
            input_tokens=outcome.tokens,
            model=outcome.model,
            request_id=None,
            latency=time.perf_counter() - started,
            failure=None,
            reading={
                **outcome.reading.as_json(),
                **outcome.place.as_json(),
                "reused_tokens": outcome.reused,
            },
        )

    async def _model(self, entry: CatalogEntry) -> LlamaModel:
        return await asyncio.to_thread(model_for, entry)

    async def served_model(self, entry: CatalogEntry) -> str:
        """The GGUF's own name (its ``general.name``, else the file's stem), loaded now."""
        return (await self._model(entry)).name

    async def list_models(self, entry: CatalogEntry) -> list[str] | None:
        """Not asked: the entry names one file."""
        return None

    async def aclose(self) -> None:
        """Nothing to release: the model and its contexts stay for the process."""


def _decide(
    pool: Contexts,
    model: LlamaModel,
    request: DecisionRequest,
    entry: CatalogEntry,
    settled: Mapping[str, Answer],
    deadline: float | None,
) -> _Outcome:
    """One call, on a worker thread: the prompts, their tokens, the scoring, the answers."""
    asked = question_prompts(request, entry, template_if_chat(entry), settled)
    sequences: list[list[int]] = []
    starts: list[int] = []
    spans: list[tuple[int, int]] = []
    for item in asked:
        made, start = option_sequences(model, item.prompt)
        spans.append((len(sequences), len(made)))
        sequences.extend(made)
        starts.extend([start] * len(made))
    batched = entry.batch_questions
    try:
        scored, place = pool.run(
            model,
            lambda context: context.score(sequences, starts, batched=batched, deadline=deadline),
        )
    except LateError:
        raise TransientError(
            f"the model of entry {entry.id!r} gave no answer within its time (raise "
            "decision_timeout_s for a slow machine or a long state)"
        ) from None
    except EngineError as error:
        raise ExternalServiceError(f"catalog entry {entry.id!r}: {error}") from None
    reads: dict[str, list[list[float]]] = {}
    mass: dict[str, list[float]] = {}
    for item, (first, count) in zip(asked, spans, strict=True):
        values = scored.logprobs[first : first + count]
        top = max(values)
        weights = [math.exp(v - top) for v in values]
        total = math.fsum(weights)
        reads.setdefault(item.question_id, []).append([w / total for w in weights])
        mass.setdefault(item.question_id, []).append(
            min(1.0, math.fsum(math.exp(v) for v in values))
        )
    floor = entry.mass_floor or 0.0
    answers: dict[str, Answer] = {}
    for question_id, question in request.questions.items():
        if question_id in settled:
            answers[question_id] = settled[question_id]
            continue
        least = min(mass[question_id])
        if least < floor:
            answers[question_id] = RefusedAnswer(
                f"only {least:.2%} of the model's probability fell on the options after the "
                f"prompt (mass_floor {floor:.0%}); rephrase the question or lower mass_floor"
            )
            continue
        found = reads[question_id]
        averaged = [math.fsum(r[i] for r in found) / len(found) for i in range(len(found[0]))]
        answers[question_id] = _logprob_reading.answer_for(question, averaged)
    reading = Reading(
        method=METHOD,
        upstream_calls=scored.decodes,
        mass={qid: min(values) for qid, values in mass.items()},
        orderings=entry.orderings,
    )
    return _Outcome(answers, reading, place, scored.tokens, scored.reused, model.name)

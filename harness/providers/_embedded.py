"""The embedded default model: ``sparrow-decider`` run in-process behind ``DecisionClient``.

sparrow-decider (numpy only, its weights inside its wheel) answers System One questions in well
under a millisecond on a CPU, offline. This client speaks to it in the System One wire shapes
(:func:`harness.decision.systemone.encode_request` in, :func:`~harness.decision.systemone.
decode_reply` out), so its answers are checked exactly as a remote server's would be. What
differs from a remote model:

* the model is loaded once per process, on first use, whichever thread gets there first;
* a small request (a wire body of at most ``inline_bytes``, default :data:`INLINE_BYTES`) is
  answered on the event loop's own thread: the model holds the GIL for nearly all of such a
  decision (numpy on tiny matrices), so a worker thread added no parallelism, only a handoff
  that cost as much as the model itself (benchmarks/embedded.py, docs/performance.md). A larger
  request runs on a small worker pool (sized from the entry's ``max_concurrent``), so a long
  decision never stalls the loop; admission comes from the dispatcher either way;
* the model reports zero usage, so the billed input tokens are recorded as unknown (``None``);
  the dispatcher's own count (the reservation) stays apart;
* the served model of every response is the loaded model's own name (``sparrow-nano-general-
  v1.1`` for the bundled default), never the entry's alias: a request answered wholly here (a
  one-option choice) loads the model too, so its response names the same model as the rest
  and a misnamed model fails on its first use, whatever the question;
* a one-option choice is answered here with certainty (sparrow refuses it), the entry's
  ``max_options`` / ``max_levels`` and sparrow's own 2-10 levels are checked before asking;
* a ``Noul`` is asked as a two-option choice (``"yes"`` / ``"no"``, described by its
  ``when_true`` / ``when_false``) when ``noul_as_choice`` is on, and answered with P(yes).
  The default follows the measurement in ``benchmarks/noul_as_choice.py`` (docs/embedded.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Coroutine, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Protocol, cast

from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Question,
    Score,
    systemone,
)
from harness.decision._internal import (
    answered_response,
    reply_answers,
    reply_model,
    wire_questions,
)
from harness.errors import ExternalServiceError, HarnessError, InvalidInputError, TransientError

from ._client import CheckedClient, check_limits, local_answers
from ._redact import Redaction

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = [
    "DEFAULT_MODEL_IDS",
    "NOUL_AS_CHOICE",
    "SPARROW_MAX_LEVELS",
    "EmbeddedDecisionClient",
]

NOUL_AS_CHOICE: Final = False
"""Whether a Noul is asked as a yes/no choice by default: what benchmarks/noul_as_choice.py
measured as selecting better (see docs/embedded.md for the figures)."""

DEFAULT_MODEL_IDS: Final = frozenset({"sparrow-decider", "sparrow", "default"})
"""Wire model ids that mean sparrow's bundled default model; any other id is a sparrow model
name (``nano-robot``, ``sparrow-nano-general-v1.1``) or a ``.sparrow`` file path."""

SPARROW_MAX_LEVELS: Final = 10
"""sparrow-decider scores 2 to 10 levels, whatever the entry says."""

YES: Final = "yes"
NO: Final = "no"
WHEN_TRUE: Final = "the statement holds for this state"
WHEN_FALSE: Final = "the statement does not hold for this state"

INLINE_BYTES: Final = 1024
"""Wire bodies up to this many bytes are answered on the loop's thread (about a millisecond of
the model's time on a CPU); larger ones on the worker pool."""
_DEFAULT_WORKERS: Final = 4


class _Decider(Protocol):
    """The part of ``sparrow_decider.Decider`` this client uses."""

    name: str

    def ask(self, state: object, questions: Mapping[str, object]) -> dict[str, object]: ...


_models: dict[str | None, _Decider] = {}
_models_lock = threading.Lock()


def _model_key(wire_model_id: str) -> str | None:
    """The sparrow model name a wire id stands for (``None``: the bundled default)."""
    return None if wire_model_id in DEFAULT_MODEL_IDS else wire_model_id


def _load(entry_id: str, wire_model_id: str) -> _Decider:
    """The sparrow model an entry names, loaded once per process (thread-safe)."""
    name = _model_key(wire_model_id)
    with _models_lock:
        found = _models.get(name)
        if found is not None:
            return found
        try:
            import sparrow_decider
        except ImportError as error:
            raise ExternalServiceError(
                f"catalog entry {entry_id!r} runs the embedded model, but sparrow-decider is "
                "not installed: pip install 'harness[local]'"
            ) from error
        try:
            model = cast(_Decider, sparrow_decider.Decider.load(name))
        except FileNotFoundError as error:
            raise ExternalServiceError(
                f"catalog entry {entry_id!r}: sparrow-decider has no model {wire_model_id!r} "
                f"({Redaction().message(str(error))}); set wire_model_id to 'sparrow-decider' "
                "for the bundled default"
            ) from error
        _models[name] = model
        return model


_NONE_SETTLED: Final[Mapping[str, Answer]] = MappingProxyType({})


def _scan(request: DecisionRequest, entry: CatalogEntry, *, limits: bool) -> bool:
    """One pass over the questions: refuse what the entry (``limits``: its ``max_options`` /
    ``max_levels``, :func:`check_limits`) or sparrow (at most :data:`SPARROW_MAX_LEVELS`
    levels) cannot take, with the errors of those checks, in their order; whether some choice
    has one option (answered here, :func:`local_answers`)."""
    max_options = entry.max_options if limits else None
    max_levels = entry.max_levels if limits else None
    most_levels = (
        SPARROW_MAX_LEVELS if max_levels is None or max_levels > SPARROW_MAX_LEVELS else max_levels
    )
    local = False
    for question in request.questions.values():
        if isinstance(question, Choice):
            count = len(question.options)
            if max_options is not None and count > max_options:
                break
            if count == 1:
                local = True
        elif isinstance(question, Score) and len(question.levels) > most_levels:
            break
    else:
        return local
    if limits:
        check_limits(request, entry)
    _check_levels(request, entry)
    raise AssertionError("a question past a limit was not refused")  # pragma: no cover


def _check_levels(request: DecisionRequest, entry: CatalogEntry) -> None:
    for question_id, question in request.questions.items():
        if isinstance(question, Score) and len(question.levels) > SPARROW_MAX_LEVELS:
            raise InvalidInputError(
                f"level count of question {question_id!r}",
                len(question.levels),
                f"entry {entry.id!r} runs sparrow-decider, which scores at most "
                f"{SPARROW_MAX_LEVELS} levels; use fewer levels or pin another entry",
            )


def _as_choice(noul: Noul) -> Choice:
    """The Noul asked as a two-option choice: yes (when it holds) or no."""
    return Choice(
        noul.instructions,
        {YES: noul.when_true or WHEN_TRUE, NO: noul.when_false or WHEN_FALSE},
    )


class EmbeddedDecisionClient(CheckedClient):
    """Answers decision requests with sparrow-decider in this process (see the module's notes).

    ``noul_as_choice`` asks each Noul as a yes/no choice and answers it with P(yes); its default
    is what the measurement chose (:data:`NOUL_AS_CHOICE`). ``max_workers`` sizes the worker
    pool; by default it is the first entry's ``max_concurrent`` (the entry's admission bound).
    ``inline_bytes`` is the largest wire body answered on the loop's thread (0: none).
    """

    def __init__(
        self,
        *,
        noul_as_choice: bool = NOUL_AS_CHOICE,
        max_workers: int | None = None,
        inline_bytes: int = INLINE_BYTES,
    ) -> None:
        if max_workers is not None and max_workers < 1:
            raise ValueError("max_workers must be >= 1 (or None to follow the entry)")
        if inline_bytes < 0:
            raise ValueError("inline_bytes must be >= 0 (0 sends every request to the workers)")
        self.noul_as_choice = noul_as_choice
        self.inline_bytes = inline_bytes
        self._max_workers = max_workers
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def _executor(self, entry: CatalogEntry) -> concurrent.futures.ThreadPoolExecutor:
        if self._pool is None:
            workers = self._max_workers or entry.max_concurrent or _DEFAULT_WORKERS
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="harness-embedded"
            )
        return self._pool

    def _asked(self, question: Question) -> Question:
        if self.noul_as_choice and isinstance(question, Noul):
            return _as_choice(question)
        return question

    def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> Coroutine[None, None, DecisionResponse]:
        """Answer ``request`` with the entry's sparrow model; see :class:`DecisionClient`. The
        entry's limits (:func:`~harness.providers.check_limits`) and sparrow's own are checked
        in the same pass over the questions that finds those answered here.

        A coroutine, as an ``async def`` gives (awaited, it answers or raises; a refusal of the
        limits is raised when it is awaited, never when it is made), made without a frame of
        its own around the answer's."""
        try:
            local = _scan(request, entry, limits=True)
        except Exception as refused:
            return _raised(refused)
        return self._answer(request, entry, timeout, local)

    async def answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> DecisionResponse:
        """Answer ``request`` with the entry's sparrow model; see :class:`DecisionClient`."""
        return await self._answer(request, entry, timeout, _scan(request, entry, limits=False))

    async def _answer(
        self, request: DecisionRequest, entry: CatalogEntry, timeout: float | None, local: bool
    ) -> DecisionResponse:
        """Answer ``request`` (checked); ``local``: some question may be answered here."""
        if local or self.noul_as_choice:
            settled = local_answers(request) if local else _NONE_SETTLED
            asked = self._asked_questions(request, settled)
        else:  # the common case: the request's own questions (its encoded body is reused)
            settled, asked = _NONE_SETTLED, request.questions
        wire_model_id = entry.wire_model_id
        model = _models.get(None if wire_model_id in DEFAULT_MODEL_IDS else wire_model_id)
        if model is None:
            model = await self._loaded(entry, asyncio.get_running_loop())
        if not asked:
            return DecisionResponse(request, settled, input_tokens=0, model=model.name)
        same = asked is request.questions
        wire_request = request if same else DecisionRequest(request.state, asked)
        # what sparrow reads of encode_request's body, its questions made once per request
        body = {"state": wire_request.state, "questions": wire_questions(wire_request)}
        inline = self.inline_bytes
        started = time.perf_counter()
        try:
            # Whether the request is small enough to answer on the loop's thread (its encoded
            # body was made when the call was priced).
            if inline and len(systemone.encode_body(wire_request, wire_model_id)) <= inline:
                if timeout is not None and timeout <= 0:
                    raise TransientError(
                        f"the embedded model of entry {entry.id!r} gave no answer within "
                        f"{timeout:.3g} s (the call's time was spent before it was asked)"
                    )
                reply = _ask(model, entry, body)
            else:
                loop = asyncio.get_running_loop()
                work = loop.run_in_executor(self._executor(entry), _ask, model, entry, body)
                try:
                    reply = await asyncio.wait_for(work, timeout)
                except TimeoutError:
                    raise TransientError(
                        f"the embedded model of entry {entry.id!r} gave no answer within "
                        f"{timeout:.3g} s"
                    ) from None
        except _Refused as refused:  # the model's own words may quote the request: redacted
            said = Redaction.of(wire_request).message(refused.text)
            raise ExternalServiceError(
                f"the embedded model of entry {entry.id!r} refused the request: {said}"
            ) from None
        latency = time.perf_counter() - started
        # the reply checked as systemone.decode_reply checks it; its usage is not read (sparrow
        # reports zeros: the billed count is unknown, None)
        reply_object, decoded = reply_answers(wire_request, reply)
        model_name = reply_model(reply_object) or wire_model_id
        if same:  # answers checked against the request itself: made without a second check
            return answered_response(request, decoded, model_name, latency)
        answers = {
            qid: settled[qid] if qid in settled else _answer(question, decoded[qid])
            for qid, question in request.questions.items()
        }
        return DecisionResponse(
            request, answers, input_tokens=None, model=model_name, request_id=None, latency=latency
        )

    async def served_model(self, entry: CatalogEntry) -> str:
        """The name of the model ``entry`` runs (loaded now if it is not yet): what every
        response of this entry names as its model."""
        model = await self._loaded(entry, asyncio.get_running_loop())
        return model.name

    def _asked_questions(
        self, request: DecisionRequest, settled: Mapping[str, Answer]
    ) -> Mapping[str, Question]:
        """The questions the model is asked: the request's own mapping when nothing is answered
        here nor reshaped (the common case, so the request's encoded body is reused)."""
        reshaped = self.noul_as_choice and any(
            isinstance(q, Noul) for q in request.questions.values()
        )
        if not settled and not reshaped:
            return request.questions
        return {
            qid: self._asked(question)
            for qid, question in request.questions.items()
            if qid not in settled
        }

    async def _loaded(self, entry: CatalogEntry, loop: asyncio.AbstractEventLoop) -> _Decider:
        """The entry's model: from the process's cache, else loaded on the worker pool."""
        cached = _models.get(_model_key(entry.wire_model_id))
        if cached is not None:
            return cached
        return await loop.run_in_executor(
            self._executor(entry), _load, entry.id, entry.wire_model_id
        )

    async def aclose(self) -> None:
        """Stop the worker pool (a later ``decide`` starts a new one); idempotent."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)


async def _raised(error: Exception) -> DecisionResponse:
    """A coroutine that raises ``error`` when awaited."""
    raise error


def _ask(model: _Decider, entry: CatalogEntry, body: Mapping[str, object]) -> dict[str, object]:
    """One round trip to the model: a System One reply body."""
    try:
        answers = model.ask(body["state"], cast(Mapping[str, object], body["questions"]))
    except (ValueError, KeyError, TypeError) as error:
        raise _Refused(str(error) or type(error).__name__) from None
    return {"model": model.name, "answers": answers, "usage": {"input_tokens": 0}}


class _Refused(HarnessError):
    """The model refused a request; ``text`` is its unredacted message (never shown as is)."""

    def __init__(self, text: str) -> None:
        super().__init__("the embedded model refused the request")
        self.text = text


def _answer(question: Question, answer: Answer) -> Answer:
    """The answer in the shape asked: a Noul asked as a choice is answered with P(yes)."""
    if isinstance(question, Noul) and isinstance(answer, ChoiceAnswer):
        return NoulAnswer(answer.probabilities[YES])
    return answer

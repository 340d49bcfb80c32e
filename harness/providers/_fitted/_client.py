"""The ``fitted`` provider's client: a fitted file's heads answer, its base model the rest.

A request's questions are sorted once: those a head of the file answers (its key, and for a
choice with fixed options or a score, the same options or levels) and those it does not (sent
together, as one request, to the file's ``base`` model). Every text the heads read is encoded in
one batched pass (a request's N selections are N digest lines: one encoder call), then each head
reads its rows. The response's ``reading`` says, per question, which model gave the answer and
the version of the head that did (``fitted select@1a2b3c4d5e6f`` or ``base embedded``).

The file is loaded once per process per file (its path, size and modification time): batch
workers, servers and evals share it. Small requests are answered on the event loop's thread
(a TF-IDF encoding of a few lines takes well under a millisecond); the ``minilm`` encoder runs
on a worker thread, so a long forward pass never stalls the loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from harness import decision
from harness.catalog._internal import OncePerProcess
from harness.decision._internal import expected_level_answer, most_probable_answer
from harness.errors import ExternalServiceError

from .._client import CheckedClient, DecisionClient, local_answers
from ._encoders import Encoder, Matrix
from ._errors import FittedError
from ._file import FittedModel, load_fitted
from ._heads import Head
from ._reads import head_key, option_texts, question_text

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["FittedDecisionClient", "fitted_model", "heads_answer", "sort_questions"]

ClientFor = Callable[["CatalogEntry"], DecisionClient]


def _loaded(key: tuple[str, int, int]) -> FittedModel:
    return load_fitted(key[0])


_files: OncePerProcess[tuple[str, int, int], FittedModel] = OncePerProcess(_loaded)


def fitted_path(entry: CatalogEntry) -> Path:
    """The fitted file an entry names (``file``, else its wire model id)."""
    return Path(entry.file or entry.wire_model_id).expanduser()


def fitted_model(entry: CatalogEntry) -> FittedModel:
    """The fitted file of ``entry``, loaded once per process (per path, size and time)."""
    path = fitted_path(entry)
    try:
        status = path.stat()
    except OSError:
        load_fitted(path)  # raises the file's own error (not found, unreadable)
        raise
    return _files((str(path.resolve()), status.st_size, status.st_mtime_ns))


def base_entry(name: str, of: str) -> CatalogEntry:
    """The entry the base model ``name`` of fitted file ``of`` stands for: a model string, an
    entry of the shipped catalog (``embedded``), or one of the configured catalog."""
    from harness.catalog import CatalogError, default_catalog, entry_for_model, load_catalog

    if name.startswith("fitted:"):
        raise FittedError(
            f"fitted file {of!r} names another fitted model ({name!r}) as its base: a base is "
            "a model that answers any question (e.g. 'embedded'); fit it with --base"
        )
    made = entry_for_model(name)
    if made is not None:
        return made
    shipped = default_catalog()
    if name in shipped.entries:
        return shipped.entry(name)
    try:
        return load_catalog().entry(name)
    except CatalogError as error:
        raise FittedError(
            f"fitted file {of!r}: its base model {name!r} is neither a model string nor an entry "
            f"of the catalog ({error}); set base in the catalog entry, or fit with --base"
        ) from None


def _fits(head: Head, question: decision.Question) -> bool:
    """Whether ``head`` can answer ``question`` (its kind, its options or levels)."""
    if head.form == "binary":
        return isinstance(question, decision.Noul)
    if head.form == "pairwise":
        return isinstance(question, decision.Choice)
    if head.form == "classes":
        return isinstance(question, decision.Choice) and all(
            o in head.classes for o in question.options
        )
    return isinstance(question, decision.Score) and tuple(question.levels) == head.classes


class FittedDecisionClient(CheckedClient):
    """Answers with a fitted file's heads and its base model (see the module's notes).

    ``client_for`` makes the base model's client (the providers table's own ``client_for``);
    one base client is kept per base entry and closed with this client.
    """

    def __init__(self, client_for: ClientFor) -> None:
        self._client_for = client_for
        self._bases: dict[str, tuple[CatalogEntry, DecisionClient]] = {}

    async def answer(
        self, request: decision.DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> decision.DecisionResponse:
        started = time.perf_counter()
        model = fitted_model(entry)
        settled: dict[str, decision.Answer] = dict(local_answers(request))
        by: dict[str, str] = dict.fromkeys(settled, "local (one option)")
        mine, rest = sort_questions(model.heads, request, settled)
        if mine:
            if model.encoder.name == "tfidf":
                answered = heads_answer(model.encoder, request.state, mine)
            else:
                answered = await asyncio.to_thread(heads_answer, model.encoder, request.state, mine)
            settled.update(answered)
            by.update({qid: f"fitted {head.key}@{head.version}" for qid, _, head in mine})
        input_tokens: int | None = None
        base_model: str | None = None
        if rest:
            base, client = self._base(model, entry)
            response = await client.decide(
                decision.DecisionRequest(request.state, rest), base, timeout=timeout
            )
            settled.update(response.answers)
            base_model = response.model or base.wire_model_id
            input_tokens = response.input_tokens
            by.update(dict.fromkeys(rest, f"base {base.id}"))
        reading: dict[str, object] = {
            "method": "fitted",
            "file": model.name,
            "file_digest": model.digest[:12],
            "encoder": model.encoder.name,
            "answered_by": by,
        }
        if base_model is not None:
            reading["base_model"] = base_model
        return decision.DecisionResponse(
            request,
            {qid: settled[qid] for qid in request.questions},
            input_tokens=input_tokens,
            model=f"fitted:{model.name}",
            latency=time.perf_counter() - started,
            reading=reading,
        )

    def _base(self, model: FittedModel, entry: CatalogEntry) -> tuple[CatalogEntry, DecisionClient]:
        name = entry.base or model.base
        found = self._bases.get(name)
        if found is None:
            base = base_entry(name, model.name)
            if base.provider == "fitted":
                raise FittedError(
                    f"fitted file {model.name!r}: its base {name!r} is itself a fitted model; "
                    "name a model that answers any question (e.g. 'embedded')"
                )
            try:
                found = (base, self._client_for(base))
            except ExternalServiceError as error:
                raise FittedError(f"fitted file {model.name!r}: its base model: {error}") from None
            self._bases[name] = found
        return found

    async def aclose(self) -> None:
        bases, self._bases = self._bases, {}
        for _, client in bases.values():
            await client.aclose()


Asked = list[tuple[str, decision.Question, Head]]
"""Questions a head answers: id, question, head."""


def sort_questions(
    heads: Mapping[str, Head],
    request: decision.DecisionRequest,
    settled: Mapping[str, decision.Answer],
) -> tuple[Asked, dict[str, decision.Question]]:
    """The questions of ``request`` (but the ``settled`` ones) a head of ``heads`` answers, and
    the rest (for the base model)."""
    mine: Asked = []
    rest: dict[str, decision.Question] = {}
    for qid, question in request.questions.items():
        if qid in settled:
            continue
        head = heads.get(head_key(qid, question))
        if head is not None and _fits(head, question):
            mine.append((qid, question, head))
        else:
            rest[qid] = question
    return mine, rest


def heads_answer(encoder: Encoder, state: object, asked: Asked) -> dict[str, decision.Answer]:
    """The heads' answers to ``asked`` over ``state``: every text encoded in one pass, then
    each head reads its rows."""
    texts: list[str] = []
    spans: list[tuple[int, int, Mapping[str, str] | None]] = []
    for qid, question, head in asked:
        if head.form == "pairwise":
            assert isinstance(question, decision.Choice)
            made = option_texts(qid, question, state)
            spans.append((len(texts), len(texts) + len(made), made))
            texts.extend(made.values())
        else:
            spans.append((len(texts), len(texts) + 1, None))
            texts.append(question_text(qid, question, state))
    if not texts:
        return {}
    features = encoder.encode(texts)
    rows = _rows(features)
    answers: dict[str, decision.Answer] = {}
    for (qid, question, head), (start, end, options) in zip(asked, spans, strict=True):
        part = rows(start, end)
        if head.form == "binary":
            answers[qid] = decision.NoulAnswer(float(head.yes(part)[0]))
        elif head.form == "ordinal":
            assert isinstance(question, decision.Score)
            answers[qid] = _score(question, head.over_levels(part))
        else:
            assert isinstance(question, decision.Choice)
            keys = list(question.options)
            if head.form == "pairwise":
                assert options is not None
                logits = head.logits(part)
                z = np.exp(logits - logits.max())
                probabilities = z / z.sum()
            else:
                found = head.over_classes(part, keys)
                assert found is not None  # _fits checked every option is a class
                probabilities = found
            answers[qid] = _choice(keys, probabilities)
    return answers


def _rows(features: Matrix) -> Callable[[int, int], Matrix]:
    def rows(start: int, end: int) -> Matrix:
        return cast(Matrix, features[start:end])  # type: ignore[index]  # an array or a CSR matrix: both slice rows

    return rows


def _choice(keys: list[str], probabilities: np.ndarray) -> decision.ChoiceAnswer:
    shares = {key: float(p) for key, p in zip(keys, probabilities, strict=True)}
    return most_probable_answer(shares)


def _score(question: decision.Score, probabilities: np.ndarray) -> decision.ScoreAnswer:
    return expected_level_answer(question.levels, [float(p) for p in probabilities])

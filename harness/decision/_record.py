"""The record of a job: every model call it made, successful or failed.

It lives with the vocabulary (below llm, which writes it, and jobs, which carry it), so neither
of those imports the other for it; ``harness.jobs`` re-exports both names."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from harness.decision._answers import Answer

__all__ = ["JobRecord", "ModelCall"]


@attrs.frozen
class ModelCall:
    """One model call as it landed on its job's record.

    ``input_tokens`` is what the server billed (``None`` when it reported nothing usable);
    ``counted_input_tokens`` is harness's own count of the wire body, and ``counted_by`` says how
    it was found: ``"tokenizer"`` (counted under the entry's tokenizer), ``"bytes"`` (the body's
    byte length, an upper bound on its tokens: a concurrency-bounded entry without a price is not
    counted) or ``"given"`` (a flat count). A decision generates nothing, so ``output_tokens`` is
    always 0.
    """

    entry_id: str
    provider: str
    success: bool
    answers: Mapping[str, Answer]
    reason: str | None
    input_tokens: int | None
    counted_input_tokens: int | None
    latency: float
    model: str | None
    request_id: str | None
    cost: float | None
    output_tokens: int = 0
    counted_by: str | None = None


class JobRecord:
    """The model calls of one job, in the order they were made (retries included)."""

    def __init__(self) -> None:
        self._calls: list[ModelCall] = []

    def add(self, call: ModelCall) -> None:
        """Append a call to the record."""
        self._calls.append(call)

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        """Every call so far."""
        return tuple(self._calls)

    def __len__(self) -> int:
        return len(self._calls)

    def __iter__(self) -> Iterator[ModelCall]:
        return iter(tuple(self._calls))

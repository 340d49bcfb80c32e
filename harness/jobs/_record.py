"""The record of a job: every model call it made, successful or failed.

It lives with the jobs that carry it; :class:`~harness.jobs.ObservableDecisionClient` (the
recording wrapper the thinker puts around a provider's client) writes it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import attrs

from harness.decision import Answer

__all__ = ["JobRecord", "ModelCall"]


@attrs.frozen(repr=False)
class ModelCall:
    """One model call as it landed on its job's record.

    ``input_tokens`` is what the server billed (``None`` when it reported nothing usable);
    ``counted_input_tokens`` is harness's own count of the wire body, and ``counted_by`` says how
    it was found: ``"tokenizer"`` (counted under the entry's tokenizer), ``"bytes"`` (the body's
    byte length, an upper bound on its tokens: a concurrency-bounded entry without a price is not
    counted) or ``"given"`` (a flat count). A decision generates nothing, so ``output_tokens`` is
    always 0. ``answers`` are the model's own; ``calibrated`` are the same answers after the
    entry's calibration, as the thinker read them (``None`` when the entry has none).
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
    reading: Mapping[str, object] | None = None
    """How the answers were read (the logprob providers: method, mass, upstream calls)."""
    calibrated: Mapping[str, Answer] | None = None

    def __repr__(self) -> str:
        # Reads like the call: "ModelCall(embedded: answered 3 questions, 812 input tokens
        # counted, billed 800, 0.002 s, model 'sparrow-decider', request id None, cost None)".
        outcome = (
            f"answered {len(self.answers)} question{'' if len(self.answers) == 1 else 's'}"
            if self.success
            else f"failed: {self.reason!r}"
        )
        return (
            f"ModelCall({self.entry_id}: {outcome}, {self.counted_input_tokens} input tokens "
            f"counted, billed {self.input_tokens}, {self.latency:.3f} s, model {self.model!r}, "
            f"request id {self.request_id!r}, cost {self.cost!r})"
        )


class JobRecord:
    """The model calls of one job, in the order they were made (retries included).

    A call may be added as what makes its :class:`ModelCall` (``_add_made``, the recording
    client's way): it is made when the record is first read, from values that cannot change,
    so a record nobody reads costs no ``ModelCall``; read, it holds the same calls."""

    __slots__ = ("_calls", "_unmade")

    def __init__(self) -> None:
        self._calls: list[ModelCall | tuple[Callable[..., ModelCall], tuple[object, ...]]] = []
        self._unmade = False

    def add(self, call: ModelCall) -> None:
        """Append a call to the record."""
        self._calls.append(call)

    def _add_made(self, make: Callable[..., ModelCall], *args: object) -> None:
        """Append the call ``make(*args)`` makes, made when the record is read (``make`` must
        be pure and ``args`` unchanging)."""
        self._calls.append((make, args))
        self._unmade = True

    def _made(self) -> list[ModelCall]:
        calls = self._calls
        if self._unmade:
            for index, call in enumerate(calls):
                if isinstance(call, tuple):
                    make, args = call
                    calls[index] = make(*args)
            self._unmade = False
        return calls  # type: ignore[return-value]  # every call is made now

    @property
    def calls(self) -> tuple[ModelCall, ...]:
        """Every call so far."""
        return tuple(self._made())

    def __len__(self) -> int:
        return len(self._calls)

    def __iter__(self) -> Iterator[ModelCall]:
        return iter(tuple(self._made()))

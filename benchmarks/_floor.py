"""The contract's floor: the least code that keeps harness's contract for one call on the
embedded model, written by hand for one request and one entry, with nothing general about it.

Every call through harness is priced, admitted, recorded and traceable (docs/performance.md). The
floor path does exactly that and no more, so what it costs beside the model bounds what any
implementation could reach; ``embedded.py`` measures it in the same runs as harness, and
``instructions.py floor`` counts its instructions. What a floor call does:

* an identity (a job id) and a context variable naming the running job, set and reset
  (traceable);
* the call priced: the body's length reserved against the entry's ceiling (the body encoded
  once per request, as harness keeps it on the request);
* a time limit: the call's deadline added to and taken from a set (one timer per loop, as
  harness does);
* admitted: a permit from an ``asyncio.Semaphore`` of the entry's ``max_concurrent``, held while
  the model runs;
* the model asked, its time taken with two clock reads;
* the reply checked once: an object per question, of the type asked, a probability for every
  option that is a float in [0, 1], the choice one of the options, the confidence a probability
  or computed;
* the shipped entry's calibration applied (its temperature map on the choice);
* recorded: a record holding the request, the model's answers, the calibrated ones and the
  latency, appended to the job's list.

A call awaited alone runs in the awaiting task, which cancels it by being cancelled (harness's
``Dispatcher.run`` does the same with a decision call); a call submitted among many runs as a
task of its own (a job can be awaited and cancelled on its own). It has no catalog, no
resolution, no retries, no events, no hooks, no error messages and no answer objects beyond
tuples: whatever harness does beyond it is design, not contract.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import math
import time
from collections.abc import Mapping
from typing import Any

from harness.catalog import TemperatureMap, default_catalog
from harness.decision import Choice, DecisionRequest, systemone
from harness.decision._internal import json_bytes

__all__ = ["Floor", "model", "temperature"]

_job = contextvars.ContextVar[int]("floor_job")
_EPSILON = 1e-12


class _Record:
    """What the floor path keeps of a call."""

    __slots__ = ("calibrated", "job_id", "latency", "raw", "request", "reserved")

    def __init__(
        self,
        job_id: int,
        request: DecisionRequest,
        reserved: int,
        raw: dict[str, tuple[str, dict[str, float], float]],
        calibrated: dict[str, tuple[str, dict[str, float], float]],
        latency: float,
    ) -> None:
        self.job_id = job_id
        self.request = request
        self.reserved = reserved
        self.raw = raw
        self.calibrated = calibrated
        self.latency = latency


class Floor:
    """The floor path for one request on the embedded entry (see the module's notes)."""

    def __init__(
        self, model: Any, request: DecisionRequest, temperature: float
    ) -> None:  # Any: sparrow's Decider
        self.model = model
        self.request = request
        body = systemone.encode_request(request, "sparrow-decider")
        questions = body["questions"]
        if not isinstance(questions, dict):
            raise TypeError("the wire's questions are an object")
        self.state = body["state"]
        self.questions: dict[str, Any] = questions  # sparrow's own JSON shapes
        self.body_length = len(json_bytes(body))
        self.ceiling = 1 << 20
        self.options = {
            qid: tuple(q.options) for qid, q in request.questions.items() if isinstance(q, Choice)
        }
        self.inverse_temperature = 1.0 / temperature
        self.gate = asyncio.Semaphore(4)
        self.deadlines: set[float] = set()
        self.ids = itertools.count(1)
        self.records: list[_Record] = []

    def check(self, reply: Mapping[str, object]) -> dict[str, tuple[str, dict[str, float], float]]:
        """The reply's answers, checked once (a failure raises, unexplained: no messages here)."""
        answers: dict[str, tuple[str, dict[str, float], float]] = {}
        for qid, options in self.options.items():
            raw = reply[qid]
            if type(raw) is not dict or raw.get("type", "choice") != "choice":
                raise ValueError(qid)
            table = raw["probabilities"]
            probabilities: dict[str, float] = {}
            for option in options:
                p = table[option]
                if type(p) is not float or not 0.0 <= p <= 1.0:
                    raise ValueError(qid)
                probabilities[option] = p
            choice = raw["choice"]
            if type(choice) is not str or choice not in probabilities:
                raise ValueError(qid)
            sure = raw.get("confidence")
            if sure is None:
                sure = _confidence(list(probabilities.values()))
            elif type(sure) is not float or not 0.0 <= sure <= 1.0:
                raise ValueError(qid)
            answers[qid] = (choice, probabilities, sure)
        return answers

    def calibrate(
        self, answers: dict[str, tuple[str, dict[str, float], float]]
    ) -> dict[str, tuple[str, dict[str, float], float]]:
        """The entry's temperature map on every choice."""
        out: dict[str, tuple[str, dict[str, float], float]] = {}
        inverse = self.inverse_temperature
        for qid, (choice, probabilities, _) in answers.items():
            logs = [math.log(max(_EPSILON, p)) * inverse for p in probabilities.values()]
            top = max(logs)
            weights = [math.exp(v - top) for v in logs]
            total = sum(weights)
            values = [w / total for w in weights]
            out[qid] = (choice, dict(zip(probabilities, values, strict=True)), _confidence(values))
        return out

    async def job(self) -> dict[str, tuple[str, dict[str, float], float]]:
        """One call: identity, context, price, limit, permit, the model, check, calibration,
        record."""
        job_id = next(self.ids)
        token = _job.set(job_id)
        try:
            reserved = self.body_length
            if reserved > self.ceiling:
                raise ValueError("over the ceiling")
            deadline = time.monotonic() + 60.0
            self.deadlines.add(deadline)
            try:
                async with self.gate:
                    started = time.perf_counter()
                    reply = self.model.ask(self.state, self.questions)
                    latency = time.perf_counter() - started
            finally:
                self.deadlines.discard(deadline)
            raw = self.check(reply)
            calibrated = self.calibrate(raw)
            self.records.append(_Record(job_id, self.request, reserved, raw, calibrated, latency))
            return calibrated
        finally:
            _job.reset(token)

    async def call(self) -> dict[str, tuple[str, dict[str, float], float]]:
        """One call awaited: in the awaiting task, as harness runs an awaited decision call
        (``Job.runs_inline``); cancelling the awaiter cancels it."""
        return await self.job()


def _confidence(values: list[float]) -> float:
    count = len(values)
    if count == 1:
        return 1.0
    uniform = 1 / count
    return min(1.0, max(0.0, (max(values) - uniform) / (1 - uniform)))


def temperature() -> float:
    """The shipped embedded entry's temperature for a choice (the ``choice`` role)."""
    entry = default_catalog().resolve_decision(None, asked_by="benchmark")
    calibration = entry.calibration
    found = None if calibration is None else calibration.roles.get("choice")
    if not isinstance(found, TemperatureMap):
        raise SystemExit("the shipped entry has no temperature map for a choice: nothing to copy")
    return found.temperature


def model() -> Any:  # Any: sparrow's Decider
    import sparrow_decider

    return sparrow_decider.Decider.load()

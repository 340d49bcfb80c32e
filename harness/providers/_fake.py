"""An in-process decision model for tests: a policy function, or a script of answers.

:class:`FakeDecisionModel` implements :class:`harness.providers.DecisionClient` with no HTTP. It
records every request it saw and the System One body a real client would have sent for it, and runs
the answers its policy gives through the System One reply codec, so an answer a real server could
not send (a choice not offered, a probability outside [0, 1], a missing answer) fails the same way
(:class:`harness.errors.NotAnAnswerError`). Usage is one input token per four bytes of wire body,
rounded up, as the fake server reports.

The answer builders (:func:`choose`, :func:`yes`, :func:`rate`), :func:`answer_by_kind` (every
question of a request answered by the function for its kind) and :func:`default_answers` (the
first option of every choice at 0.9, every noul 0.5, every score its middle level) serve policies
and the fake server alike.
"""

from __future__ import annotations

import inspect
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from harness import decision
from harness.decision import systemone as systemone_codec
from harness.decision._internal import expected_level_answer
from harness.errors import HarnessError, NotAnAnswerError

from ._client import CheckedClient

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = [
    "FakeDecisionModel",
    "Policy",
    "ScriptExhaustedError",
    "answer_by_kind",
    "choose",
    "default_answers",
    "rate",
    "yes",
]

Policy: TypeAlias = Callable[
    [decision.DecisionRequest],
    Mapping[str, decision.Answer] | Awaitable[Mapping[str, decision.Answer]],
]
"""Answers a request: a mapping question id -> answer (or an awaitable of one)."""

ScriptStep: TypeAlias = Mapping[str, decision.Answer] | BaseException
"""One step of a script: the answers to the next request, or the exception it raises."""


def choose(
    question: decision.Choice, key: str, *, probability: float = 0.97
) -> decision.ChoiceAnswer:
    """An answer picking ``key`` at ``probability``, the rest spread evenly over the others."""
    if key not in question.options:
        offered = ", ".join(repr(option) for option in question.options)
        raise ValueError(f"choose: {key!r} is not an option of this choice (offered: {offered})")
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"choose: probability {probability} is outside [0, 1]")
    count = len(question.options)
    if count == 1:
        return decision.ChoiceAnswer(choice=key, probabilities={key: 1.0}, confidence=1.0)
    rest = (1.0 - probability) / (count - 1)
    probabilities = {option: probability if option == key else rest for option in question.options}
    return decision.ChoiceAnswer(
        choice=key,
        probabilities=probabilities,
        confidence=decision.choice_confidence(probabilities),
    )


def yes(probability: float = 1.0) -> decision.NoulAnswer:
    """A noul answer: true with ``probability`` (``yes(0.0)`` is a firm no)."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"yes: probability {probability} is outside [0, 1]")
    return decision.NoulAnswer(probability=probability)


def digest_of(request: decision.DecisionRequest, ref: str) -> str:
    """The digest line of ``ref`` in a thinker's request (``"<ref> (<alias>): <words>"``), read
    from the state's ``artifacts`` where every scheme puts it once; ``""`` when it is not there.

    A policy deciding a ``select_<ref>`` question reads the candidate's words here::

        keep = '"keep":true' in digest_of(request, qid.removeprefix("select_"))
    """
    state = request.state
    lines = state.get("artifacts") if isinstance(state, Mapping) else None
    if isinstance(lines, list | tuple):
        prefix = f"{ref} ("
        for line in lines:
            if isinstance(line, str) and line.startswith(prefix):
                return line
    return ""


def rate(question: decision.Score, level: int, *, probability: float = 0.9) -> decision.ScoreAnswer:
    """A score answer putting ``probability`` on ``level`` (0 = lowest), the rest spread evenly."""
    count = len(question.levels)
    if not 0 <= level < count:
        raise ValueError(f"rate: level {level} is outside 0..{count - 1}")
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"rate: probability {probability} is outside [0, 1]")
    rest = (1.0 - probability) / (count - 1)
    probabilities = [probability if index == level else rest for index in range(count)]
    return expected_level_answer(question.levels, probabilities)


def answer_by_kind(
    request: decision.DecisionRequest,
    *,
    choice: Callable[[str, decision.Choice], decision.Answer],
    noul: Callable[[str, decision.Noul], decision.Answer],
    score: Callable[[str, decision.Score], decision.Answer],
) -> dict[str, decision.Answer]:
    """Every question of ``request`` answered, in the order asked, by the function for its kind,
    called with the question's id and the question.

    The walk of a policy that answers question by question::

        def policy(request: DecisionRequest) -> dict[str, Answer]:
            return answer_by_kind(
                request,
                choice=lambda qid, question: choose(question, next(iter(question.options))),
                noul=lambda qid, question: yes(0.9 if qid == "select_note#1" else 0.1),
                score=lambda qid, question: rate(question, 0),
            )
    """
    answers: dict[str, decision.Answer] = {}
    for question_id, question in request.questions.items():
        if isinstance(question, decision.Choice):
            answers[question_id] = choice(question_id, question)
        elif isinstance(question, decision.Noul):
            answers[question_id] = noul(question_id, question)
        else:
            answers[question_id] = score(question_id, question)
    return answers


def default_answers(request: decision.DecisionRequest) -> dict[str, decision.Answer]:
    """The default policy: first option of every choice at 0.9, noul 0.5, score middle level.

    A policy that cares about some questions only can start from it:
    ``{**default_answers(request), "next": choose(question, "finish")}``.
    """
    return answer_by_kind(
        request,
        choice=lambda _, question: choose(question, next(iter(question.options)), probability=0.9),
        noul=lambda _, question: yes(0.5),
        score=lambda _, question: rate(question, (len(question.levels) - 1) // 2),
    )


class ScriptExhaustedError(HarnessError, AssertionError):
    """A scripted fake model was asked more often than its script says."""


class _Script:
    def __init__(self, steps: Iterable[ScriptStep]) -> None:
        self.steps: deque[ScriptStep] = deque(steps)
        self.used = 0

    def __call__(self, request: decision.DecisionRequest) -> Mapping[str, decision.Answer]:
        if not self.steps:
            raise ScriptExhaustedError(
                f"the fake decision model's script ran out after {self.used} requests; add a step "
                f"for request {self.used + 1} (asking {', '.join(request.questions)})"
            )
        step = self.steps.popleft()
        self.used += 1
        if isinstance(step, BaseException):
            raise step
        return step


class FakeDecisionModel(CheckedClient):
    """A :class:`harness.providers.DecisionClient` answering in-process with a policy.

    ``policy`` (default :func:`default_answers`) may be swapped at any time
    (``model.policy = f``); it may be async, and an exception it raises comes out of
    :meth:`decide` as is (raise a :class:`harness.errors.OverloadedError` to play a 503).
    ``model`` is the served model id reported (default: the entry's ``wire_model_id``).
    """

    def __init__(self, policy: Policy = default_answers, *, model: str | None = None) -> None:
        self.policy: Policy = policy
        self.model = model
        self.requests: list[decision.DecisionRequest] = []
        """Every request asked, in order."""
        self.bodies: list[bytes] = []
        """The System One wire body of every request, as a real client would send it."""
        self.entries: list[CatalogEntry] = []
        """The catalog entry of every request."""
        self.closed = False

    @classmethod
    def scripted(
        cls, steps: Iterable[ScriptStep], *, model: str | None = None
    ) -> FakeDecisionModel:
        """A model answering request n with step n: answers, or an exception to raise.

        Asked once more than the script says, it raises :class:`ScriptExhaustedError`.
        """
        return cls(_Script(steps), model=model)

    @property
    def remaining(self) -> int | None:
        """Steps left in the script; None for a policy model."""
        return len(self.policy.steps) if isinstance(self.policy, _Script) else None

    async def answer(
        self, request: decision.DecisionRequest, entry: CatalogEntry, timeout: float | None
    ) -> decision.DecisionResponse:
        """Answer ``request`` with the policy; see :class:`harness.providers.DecisionClient`."""
        body = systemone_codec.encode_body(request, entry.wire_model_id)
        self.requests.append(request)
        self.bodies.append(body)
        self.entries.append(entry)
        started = time.perf_counter()
        produced = self.policy(request)
        given = await produced if inspect.isawaitable(produced) else produced
        answers = _checked(request, given)
        return decision.DecisionResponse(
            request=request,
            answers=answers,
            input_tokens=math.ceil(len(body) / 4),
            model=self.model or entry.wire_model_id,
            request_id=f"fake-{len(self.requests)}",
            latency=time.perf_counter() - started,
            failure=None,
        )

    async def aclose(self) -> None:
        """Nothing to release; idempotent."""
        self.closed = True


def _checked(
    request: decision.DecisionRequest, given: Mapping[str, decision.Answer]
) -> dict[str, decision.Answer]:
    """The policy's answers as a real server's reply would decode, refusals kept as given."""
    missing = [question_id for question_id in request.questions if question_id not in given]
    if missing:
        raise NotAnAnswerError(
            f"the fake decision model's policy gave no answer for {', '.join(map(repr, missing))}"
            f" (asked: {', '.join(map(repr, request.questions))}); this is not an answer"
        )
    refused = {qid: a for qid, a in given.items() if isinstance(a, decision.RefusedAnswer)}
    sent = {qid: given[qid] for qid in request.questions if qid not in refused}
    decoded: Mapping[str, decision.Answer] = {}
    if sent:
        asked = decision.DecisionRequest(
            request.state, {qid: request.questions[qid] for qid in request.questions if qid in sent}
        )
        payload = systemone_codec.encode_reply(sent, model="fake", input_tokens=0)
        decoded = systemone_codec.decode_reply(asked, payload).answers
    return {qid: refused[qid] if qid in refused else decoded[qid] for qid in request.questions}

"""Running a decision pack: each labelled request asked once through a dispatcher, then scored.

The requests go out ``concurrency`` at a time through one dispatcher over the model's catalog
(admission, budgets, records, overrides and cassettes apply as to any decision); each labelled
question becomes a :class:`ScoredDecision` under the pack's roles (a question id, or ``next``,
``<tool>_input``, ``select`` for requests taken from a thinker's turns).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import TextIO

import attrs

from harness.batch import with_contexts
from harness.catalog import DECISION, Catalog
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionResponse,
    Noul,
    NoulAnswer,
    Question,
    Score,
    ScoreAnswer,
)
from harness.evals import metrics as m
from harness.evals._drawn import refuse_drawn, refuse_fitted_on
from harness.evals._pack import DecisionPack, Label, LabelledDecision
from harness.evals._report import CaseResult, EvalReport, Placed, ScoredDecision
from harness.evals._run import _model_name, _sync_form, score, with_orderings
from harness.jobs import Dispatcher
from harness.runs import ModelChoice, seat_for
from harness.scope import Workflow
from harness.thinker import DecisionCall

__all__ = ["evaluate_pack", "evaluate_pack_async", "scored"]

NOUL_THRESHOLD = 0.5
"""A pack's yes/no answer is "yes" at this probability or above."""


def scored(
    case: str, question_id: str, question: Question, answer: Answer, label: Label
) -> ScoredDecision | None:
    """The labelled decision an answer makes (``None`` for a refused answer)."""
    if isinstance(question, Noul) and isinstance(answer, NoulAnswer):
        p = answer.probability
        return ScoredDecision(
            case=case,
            question=question_id,
            kind="noul",
            options=("yes", "no"),
            probabilities=(p, 1.0 - p),
            chosen=0 if p >= NOUL_THRESHOLD else 1,
            label=0 if label is True else 1,
            threshold=NOUL_THRESHOLD,
        )
    if isinstance(question, Choice) and isinstance(answer, ChoiceAnswer):
        options = tuple(question.options)
        return ScoredDecision(
            case=case,
            question=question_id,
            kind="choice",
            options=options,
            probabilities=tuple(answer.probabilities.get(o, 0.0) for o in options),
            chosen=options.index(answer.choice),
            label=options.index(str(label)),
        )
    if isinstance(question, Score) and isinstance(answer, ScoreAnswer):
        levels = tuple(question.levels)
        probabilities = tuple(answer.probabilities)
        top = max(range(len(probabilities)), key=lambda k: (probabilities[k], -k))
        return ScoredDecision(
            case=case,
            question=question_id,
            kind="score",
            options=levels,
            probabilities=probabilities,
            chosen=top,
            label=levels.index(str(label)),
        )
    return None


def _case(decision: LabelledDecision, response: DecisionResponse | Exception) -> CaseResult:
    if isinstance(response, Exception):
        return CaseResult(
            decision.name,
            decision.tags,
            "failed",
            (),
            (),
            error=f"{type(response).__name__}: {response}"[:500],
        )
    found: list[ScoredDecision] = []
    refused: list[str] = []
    for question_id, label in decision.labels.items():
        question = decision.request.questions[question_id]
        answer = response.answers.get(question_id)
        made = (
            None if answer is None else scored(decision.name, question_id, question, answer, label)
        )
        if made is None:
            refused.append(question_id)
        else:
            found.append(made)
    return CaseResult(
        decision.name,
        decision.tags,
        "failed" if refused else "completed",
        (),
        (),
        decisions=tuple(found),
        error=f"no answer to {', '.join(refused)}" if refused else None,
        placed=tuple(
            Placed(d.role, len(d.options), d.chosen, d.label) for d in found if d.kind == "choice"
        ),
    )


async def evaluate_pack_async(
    pack: DecisionPack,
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    concurrency: int = 8,
    contexts: int | None = None,
    progress: TextIO | None = None,
    seed: int = 0,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
    split: str = "all",
    orderings: int | None = None,
) -> EvalReport:
    """Ask every request of ``pack`` of ``model`` (anything the run API takes) and score the
    labelled answers: per role accuracy, Brier, log loss, ECE, AUC and RPS with intervals (each
    decision its own case: the requests of a pack are independent), and the baselines.
    ``contexts`` runs an entry that holds its model in this process (``llama``) on that many
    contexts of the one loaded model (default: the entry's ``max_concurrent``). ``orderings``
    asks each choice in that many cyclic orders and averages them (an entry that reads logits,
    see :func:`harness.evals.with_orderings`)."""
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    seat = seat_for(model, catalog)
    seat = attrs.evolve(
        seat, catalog=with_orderings(with_contexts(seat.catalog, contexts), orderings)
    )
    refuse_drawn(seat.catalog.pinned(), (d.request.state for d in pack), f"{pack.name}'s decisions")
    refuse_fitted_on(seat.catalog.pinned(), (d.request for d in pack), f"{pack.name}'s decisions")
    began = time.perf_counter()
    stream = progress or sys.stderr
    slots = asyncio.Semaphore(concurrency)
    workflow = Workflow()
    done = 0

    async def ask(dispatcher: Dispatcher, decision: LabelledDecision) -> CaseResult:
        nonlocal done
        async with slots:
            try:
                response: DecisionResponse | Exception = await dispatcher.run(
                    DecisionCall(workflow, decision.request)
                )
            except Exception as error:  # a failed call is the case's result, not the eval's end
                response = error
        done += 1
        if done == len(pack) or done % 100 == 0:
            stream.write(f"eval: {done}/{len(pack)} decisions asked\n")
            stream.flush()
        return _case(decision, response)

    async with Dispatcher(seat.catalog, clients=dict(seat.clients)) as dispatcher:
        cases = await asyncio.gather(*(ask(dispatcher, d) for d in pack))
    asked = time.perf_counter() - began
    report = score(
        cases,
        subject=f"pack {pack.name}",
        dataset=pack.name,
        model=seat.catalog.pinned(DECISION).id if model is None else _model_name(model),
        split=split,
        seed=seed,
        resamples=resamples,
        runs=False,
    )
    return attrs.evolve(report, timings={**report.timings, "eval_seconds": asked})


evaluate_pack = _sync_form(evaluate_pack_async, "evaluate_pack")

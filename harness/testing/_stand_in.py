"""A fitted file as a fake model's policy: property tests of a thinker on a distilled stand-in.

``check_thinker(Triage, inputs, policies=st.just(fitted_policy("stand-in.json")))`` runs the
invariant checker with the stand-in's answers instead of drawn ones: the moves and selections a
production model would make (as far as the stand-in learned them), offline and deterministic. A
question no head of the file reads is answered by ``rest`` (default: the fake model's
:func:`~harness.providers.default_answers`), not by the file's base model: a policy answers at
once, in the test's process, with no client to open.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from harness.decision import Answer, DecisionRequest
from harness.providers import (
    default_answers,
    heads_answer,
    load_fitted,
    local_answers,
    sort_questions,
)

__all__ = ["fitted_policy"]


def fitted_policy(
    path: str | os.PathLike[str],
    *,
    rest: Callable[[DecisionRequest], Mapping[str, Answer]] = default_answers,
) -> Callable[[DecisionRequest], dict[str, Answer]]:
    """A policy answering with the fitted file at ``path`` (loaded now; a bad file raises its
    :class:`~harness.providers.FittedError`), and with ``rest`` what no head reads."""
    model = load_fitted(path)

    def policy(request: DecisionRequest) -> dict[str, Answer]:
        answers: dict[str, Answer] = dict(local_answers(request))
        mine, others = sort_questions(model.heads, request, answers)
        answers.update(heads_answer(model.encoder, request.state, mine))
        if others:
            answers.update(rest(DecisionRequest(request.state, others)))
        return {qid: answers[qid] for qid in request.questions}

    return policy

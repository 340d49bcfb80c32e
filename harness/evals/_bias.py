"""Position bias: how much of a model's probability follows an option's place, not its content.

Each choice of each request is asked again with its options in ``orderings`` cyclic orders (the
first option moved to the end, then the next, ...; ``orderings`` at most the number of options,
spread evenly). Over those orders an option keeps its content and changes its place, so the
probability of one question splits into

* a **content** part: each option's mean probability over the orders, minus ``1/n``;
* a **position** part: the mean probability of each *place* over the orders, minus ``1/n``
  (a model reading only content puts ``1/n`` on every place on average when every option
  visits every place, as with ``orderings = n``).

:func:`position_bias` reports, over every choice asked, the **position share**: the position
part's sum of squares over the content's and the position's (0: probability follows content
only, 1: place only), the mean probability of each place (for choices of the same size), and
how often the top option stays the same option in every order. Each figure carries its 95 %
bootstrap interval resampled by request. Scores (ordered levels) and nouls are not permuted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence

import attrs

from harness.catalog import Catalog
from harness.decision import Choice, DecisionRequest, Question
from harness.evals._report import DIGITS, _estimate_json
from harness.evals.metrics import BOOTSTRAP_RESAMPLES, Estimate, UndefinedMetricError
from harness.evals.metrics._intervals import bootstrap_grouped
from harness.jobs import Dispatcher
from harness.providers._internal import cyclic_orders
from harness.runs import ModelChoice, seat_for
from harness.thinker import DecisionCall
from harness.tools import Workflow

__all__ = ["PositionBias", "QuestionBias", "position_bias", "question_bias", "rotated_options"]


def rotated_options(options: Sequence[str], orderings: int) -> list[list[str]]:
    """``orderings`` rotations of ``options`` (at most one per option), their shifts spread
    evenly: the first is the options as given. The orders are the logprob providers' own
    (:func:`harness.providers._internal.cyclic_orders`), so a probe asks as they do."""
    if orderings < 1:
        raise ValueError(f"orderings must be at least 1, got {orderings}")
    return [[options[i] for i in order] for order in cyclic_orders(len(options), orderings)]


@attrs.frozen
class QuestionBias:
    """One choice asked in several orders: per order, each option's probability.

    ``orders[r]`` is the option order of the ``r``-th asking, ``probabilities[r][option]`` what
    the model gave that option then."""

    request: int
    question: str
    orders: tuple[tuple[str, ...], ...]
    probabilities: tuple[Mapping[str, float], ...]

    @property
    def options(self) -> tuple[str, ...]:
        """The options, in the order first asked."""
        return self.orders[0]

    def content(self) -> dict[str, float]:
        """Each option's mean probability over the orders, minus ``1/n``."""
        n = len(self.options)
        return {
            option: sum(p[option] for p in self.probabilities) / len(self.probabilities) - 1 / n
            for option in self.options
        }

    def position(self) -> list[float]:
        """Each place's mean probability over the orders, minus ``1/n``."""
        n = len(self.options)
        return [
            sum(p[order[place]] for order, p in zip(self.orders, self.probabilities, strict=True))
            / len(self.orders)
            - 1 / n
            for place in range(n)
        ]

    def sums_of_squares(self) -> tuple[float, float]:
        """(position, content) sums of squares of the two parts."""
        return (
            sum(h * h for h in self.position()),
            sum(c * c for c in self.content().values()),
        )

    def stable(self) -> bool:
        """Whether the top option is the same option in every order."""
        tops = {max(p, key=lambda option: p[option]) for p in self.probabilities}
        return len(tops) == 1


@attrs.frozen
class PositionBias:
    """What re-asking in permuted orders showed (see the module's notes)."""

    orderings: int
    questions: tuple[QuestionBias, ...]
    position_share: Estimate
    stable_top: Estimate
    place_means: Mapping[int, tuple[float, ...]]
    """For each number of options, the mean probability of each place (first place first)."""

    def to_json(self) -> dict[str, object]:
        """The figures as a JSON object (numbers rounded as in an eval's report)."""
        return {
            "orderings": self.orderings,
            "choices": len(self.questions),
            "position_share": _estimate_json(self.position_share),
            "stable_top": _estimate_json(self.stable_top),
            "place_means": {
                str(count): [round(p, DIGITS) for p in means]
                for count, means in sorted(self.place_means.items())
            },
        }

    def lines(self) -> list[str]:
        """A few lines for a terminal."""
        shown = [
            f"position bias over {len(self.questions)} choices, {self.orderings} cyclic orders "
            "each:",
            f"  share of probability following position rather than content: {self.position_share}",
            f"  top option unchanged in every order: {self.stable_top}",
        ]
        for count, means in sorted(self.place_means.items()):
            places = ", ".join(f"{p:.3f}" for p in means)
            shown.append(
                f"  {count} options: mean probability by place {places} (even: {1 / count:.3f})"
            )
        return shown


def _rotated(question: Choice, order: Sequence[str]) -> Choice:
    return Choice(question.instructions, {option: question.options[option] for option in order})


def _requests(
    request: DecisionRequest, orders: Sequence[Mapping[str, list[str]]]
) -> list[DecisionRequest]:
    made = []
    for chosen in orders:
        questions: dict[str, Question] = {}
        for qid, question in request.questions.items():
            if qid in chosen and isinstance(question, Choice):
                questions[qid] = _rotated(question, chosen[qid])
        made.append(DecisionRequest(request.state, questions))
    return made


async def question_bias(
    requests: Iterable[DecisionRequest],
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    orderings: int = 3,
) -> list[QuestionBias]:
    """Each choice of ``requests`` (of at least two options) asked in ``orderings`` cyclic
    orders on ``model`` (anything the run API takes), through decision calls."""
    seat = seat_for(model, catalog)
    found: list[QuestionBias] = []
    async with Dispatcher(seat.catalog, clients=dict(seat.clients)) as dispatcher:
        for index, request in enumerate(requests):
            choices = {
                qid: q
                for qid, q in request.questions.items()
                if isinstance(q, Choice) and len(q.options) > 1
            }
            if not choices:
                continue
            per_question = {
                qid: rotated_options(list(q.options), orderings) for qid, q in choices.items()
            }
            rounds = max(len(orders) for orders in per_question.values())
            plan = [
                {qid: orders[r] for qid, orders in per_question.items() if r < len(orders)}
                for r in range(rounds)
            ]
            responses = await asyncio.gather(
                *(
                    dispatcher.run(DecisionCall(Workflow(), asked))
                    for asked in _requests(request, plan)
                )
            )
            for qid, orders in per_question.items():
                found.append(
                    QuestionBias(
                        request=index,
                        question=qid,
                        orders=tuple(tuple(order) for order in orders),
                        probabilities=tuple(
                            dict(responses[r].choice(qid).probabilities) for r in range(len(orders))
                        ),
                    )
                )
    return found


def summarize(
    found: Sequence[QuestionBias],
    orderings: int,
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> PositionBias:
    """The figures of :class:`PositionBias` from the re-asked questions, resampled by request."""

    def request(question: QuestionBias) -> int:
        return question.request

    def share(questions: Sequence[QuestionBias]) -> float:
        position = content = 0.0
        for question in questions:
            p, c = question.sums_of_squares()
            position, content = position + p, content + c
        if position + content == 0:
            raise UndefinedMetricError("the position share is undefined: every answer is even")
        return position / (position + content)

    def stable(questions: Sequence[QuestionBias]) -> float:
        if not questions:
            raise UndefinedMetricError("no choice of two options or more was asked")
        return sum(q.stable() for q in questions) / len(questions)

    means: dict[int, list[list[float]]] = {}
    for question in found:
        n = len(question.options)
        means.setdefault(n, []).append([h + 1 / n for h in question.position()])
    place_means = {
        n: tuple(sum(column) / len(column) for column in zip(*rows, strict=True))
        for n, rows in means.items()
    }
    return PositionBias(
        orderings=orderings,
        questions=tuple(found),
        position_share=bootstrap_grouped(found, request, share, seed=seed, resamples=resamples),
        stable_top=bootstrap_grouped(found, request, stable, seed=seed, resamples=resamples),
        place_means=place_means,
    )


def position_bias(
    requests: Iterable[DecisionRequest],
    *,
    model: ModelChoice = None,
    catalog: Catalog | None = None,
    orderings: int = 3,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> PositionBias:
    """Re-ask every choice of ``requests`` (a decision pack's: ``[d.request for d in pack]``) in
    ``orderings`` cyclic orders on ``model`` and report how much probability follows position
    rather than content (see the module's notes)."""
    found = asyncio.run(question_bias(requests, model=model, catalog=catalog, orderings=orderings))
    return summarize(found, orderings, seed=seed, resamples=resamples)

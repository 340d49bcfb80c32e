"""Budgets: what a run or a workflow may spend on decisions, checked before each call.

A :class:`Budget` is a value (limits only); a :class:`BudgetAccount` is the running count of one
scope (a run, a workflow) against its budget. The dispatcher charges every account a job's
identity carries with each decision call's reservation *before* admission, so a call that would
pass a limit is refused by :class:`~harness.errors.BudgetExceededError` and nothing goes on the
wire. What is charged is known before the wire: one decision per call sent (a re-run is another
call), the reservation's input tokens (harness's own count of the wire body under the entry's
tokenizer) and their cost at the entry's price (an entry without a price costs nothing here).
"""

from __future__ import annotations

import math

import attrs

from harness.errors import BudgetExceededError

__all__ = ["Budget", "BudgetAccount"]


@attrs.frozen
class Budget:
    """Limits on what a run or a workflow may spend; ``None`` is no limit.

    ``max_decisions``: decision calls sent (re-runs count); ``max_input_tokens``: their counted
    input tokens; ``max_cost``: their cost in the catalog's currency (entries without a price
    cost 0).
    """

    max_decisions: int | None = None
    max_input_tokens: int | None = None
    max_cost: float | None = None

    def __attrs_post_init__(self) -> None:
        for name in ("max_decisions", "max_input_tokens", "max_cost"):
            value: object = getattr(self, name)
            if value is None:
                continue
            numeric = (int, float) if name == "max_cost" else (int,)
            if (
                isinstance(value, bool)
                or not isinstance(value, numeric)
                or not math.isfinite(value)
                or value < 0
            ):
                wanted = "a number" if name == "max_cost" else "an integer"
                raise ValueError(f"{name} must be {wanted} >= 0 or None (no limit), got {value!r}")

    def __repr__(self) -> str:
        shown = [
            f"{field.name}={getattr(self, field.name)!r}"
            for field in attrs.fields(Budget)
            if getattr(self, field.name) is not None
        ]
        return f"Budget({', '.join(shown)})"


class BudgetAccount:
    """What one scope has been charged against its :class:`Budget`.

    :meth:`charge` checks every limit first and charges nothing when one would be passed, so a
    refused call leaves the account as it was.
    """

    def __init__(self, budget: Budget, scope: str) -> None:
        self.budget = budget
        self.scope = scope
        self.decisions = 0
        self.input_tokens = 0
        self.cost = 0.0

    def check(self, *, decisions: int, input_tokens: int, cost: float) -> None:
        """Refuse (raise :class:`BudgetExceededError`) when this charge would pass a limit."""
        budget = self.budget
        limits: tuple[tuple[str, float | None, float, float, str], ...] = (
            ("decisions", budget.max_decisions, self.decisions, decisions, "max_decisions"),
            (
                "input_tokens",
                budget.max_input_tokens,
                self.input_tokens,
                input_tokens,
                "max_input_tokens",
            ),
            ("cost", budget.max_cost, self.cost, cost, "max_cost"),
        )
        for kind, limit, spent, asked, name in limits:
            if limit is not None and spent + asked > limit:
                raise BudgetExceededError(
                    f"the {self.scope} budget refused a decision call before sending it: "
                    f"{_amount(kind, spent)} spent + {_amount(kind, asked)} for this call would "
                    f"pass its {name} of {_amount(kind, limit)}; nothing was sent. Raise {name} or "
                    "let the run ask fewer or smaller decisions",
                    scope=self.scope,
                    kind=kind,
                    limit=limit,
                    spent=spent,
                    asked=asked,
                )

    def charge(self, *, decisions: int, input_tokens: int, cost: float) -> None:
        """Check, then add this charge."""
        self.check(decisions=decisions, input_tokens=input_tokens, cost=cost)
        self.decisions += decisions
        self.input_tokens += input_tokens
        self.cost += cost

    def __repr__(self) -> str:
        return (
            f"BudgetAccount({self.scope!r}, decisions={self.decisions}, "
            f"input_tokens={self.input_tokens}, cost={self.cost:g}, budget={self.budget!r})"
        )


def _amount(kind: str, value: float) -> str:
    if kind == "cost":
        return f"{value:.6g}"
    return f"{int(value)} {'decision' if kind == 'decisions' else 'input token'}" + (
        "" if int(value) == 1 else "s"
    )

"""The dispatcher's budget hook: charge a job's budgets with its priced calls before admission.

Budgets themselves (:class:`~harness.scope.Budget`, :class:`~harness.scope.BudgetAccount`) live
in :mod:`harness.scope` with the identities that carry them; this module turns a job's resolved
bindings into one charge per account. Every account is checked before any is charged, so a call
refused by one budget is charged to none.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.jobs._requirements import ResolvedBinding
from harness.scope import Identity

__all__ = ["charge_budgets"]


def charge_budgets(identity: Identity, resolved: Sequence[ResolvedBinding]) -> None:
    """Charge every budget ``identity`` spends against with ``resolved``'s reservations, or
    raise :class:`~harness.errors.BudgetExceededError` having charged nothing.

    Called by the dispatcher after pricing and before admission, once per attempt (a re-run is
    another call on the wire): nothing that is refused reaches a gate, a bucket or the wire.
    """
    if not identity.budgets or not resolved:
        return
    decisions = len(resolved)
    tokens = sum(item.reservation.input_tokens for item in resolved)
    cost = sum(item.entry.cost(item.reservation.input_tokens) or 0.0 for item in resolved)
    for account in identity.budgets:
        account.check(decisions=decisions, input_tokens=tokens, cost=cost)
    for account in identity.budgets:
        account.charge(decisions=decisions, input_tokens=tokens, cost=cost)

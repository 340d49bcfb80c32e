"""Who a job or tool acts for: job, parent, workflow and user identities."""

from __future__ import annotations

import itertools
import os
from typing import Protocol, runtime_checkable

import attrs

from harness.scope._budget import Budget, BudgetAccount

__all__ = ["Identifiable", "Identity", "Workflow", "new_job_id"]

_ids = itertools.count(1)
_prefix = f"{os.getpid():x}"


def new_job_id(kind: str = "job") -> str:
    """A process-unique job id, ``<kind>-<pid>-<n>``."""
    return f"{kind}-{_prefix}-{next(_ids)}"


@attrs.frozen
class Identity:
    """The identity a job carries: its own id, its parent's, its workflow's and its user's.

    ``budgets`` are the accounts of the scopes the job spends against (its workflow's, its
    run's), handed down to every child; they take no part in equality.
    """

    job_id: str
    workflow_id: str
    parent_id: str | None = None
    user_id: str | None = None
    budgets: tuple[BudgetAccount, ...] = attrs.field(default=(), eq=False, repr=False)

    def child(self, job_id: str) -> Identity:
        """The identity of a job started by this one (same workflow, user and budgets)."""
        return Identity(job_id, self.workflow_id, self.job_id, self.user_id, self.budgets)

    def spending_against(self, account: BudgetAccount) -> Identity:
        """This identity, also charging ``account`` (e.g. a run's budget inside a workflow)."""
        return attrs.evolve(self, budgets=(*self.budgets, account))


@runtime_checkable
class Identifiable(Protocol):
    """Anything that can parent a job or a tool: a workflow, a job's context, a tool."""

    @property
    def identity(self) -> Identity: ...


@attrs.frozen
class Workflow:
    """A root identity: the parent of the first job of a piece of work.

    With a ``budget``, every decision of every job under this workflow is charged to one
    account (:attr:`account`), across runs: a call that would pass it is refused before the
    wire.
    """

    workflow_id: str = attrs.field(factory=lambda: new_job_id("workflow"))
    user_id: str | None = None
    budget: Budget | None = attrs.field(default=None, eq=False)
    account: BudgetAccount | None = attrs.field(init=False, eq=False, repr=False)
    _root: Identity = attrs.field(init=False, eq=False, repr=False)

    @account.default
    def _account(self) -> BudgetAccount | None:
        if self.budget is None:
            return None
        return BudgetAccount(self.budget, f"workflow {self.workflow_id}")

    @_root.default
    def _root_identity(self) -> Identity:
        budgets = () if self.account is None else (self.account,)
        return Identity(self.workflow_id, self.workflow_id, None, self.user_id, budgets)

    @property
    def identity(self) -> Identity:
        """The root identity of the workflow's jobs (one value, made with the workflow)."""
        return self._root

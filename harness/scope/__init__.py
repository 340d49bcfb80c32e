"""Scope: who a job acts for (its identity and workflow) and what it may spend (budgets).

The lowest layer above the vocabulary: jobs, tools and everything above take identities and
budgets from here, so no two of them import each other for them.
"""

from harness.scope._budget import Budget as Budget
from harness.scope._budget import BudgetAccount as BudgetAccount
from harness.scope._identity import Identifiable as Identifiable
from harness.scope._identity import Identity as Identity
from harness.scope._identity import Workflow as Workflow
from harness.scope._identity import new_job_id as new_job_id

__all__ = ["Budget", "BudgetAccount", "Identifiable", "Identity", "Workflow", "new_job_id"]

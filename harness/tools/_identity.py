"""Who a job or tool acts for: moved to :mod:`harness.scope` (below jobs and tools, so the two
never import each other); this module keeps the old import path working."""

from harness.scope import Identifiable as Identifiable
from harness.scope import Identity as Identity
from harness.scope import Workflow as Workflow
from harness.scope import new_job_id as new_job_id

__all__ = ["Identifiable", "Identity", "Workflow", "new_job_id"]

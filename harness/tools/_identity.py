"""Who a job or tool acts for: job, parent, workflow and user identities."""

from __future__ import annotations

import itertools
import os
from typing import Protocol, runtime_checkable

import attrs

__all__ = ["Identifiable", "Identity", "Workflow", "new_job_id"]

_ids = itertools.count(1)
_prefix = f"{os.getpid():x}"


def new_job_id(kind: str = "job") -> str:
    """A process-unique job id, ``<kind>-<pid>-<n>``."""
    return f"{kind}-{_prefix}-{next(_ids)}"


@attrs.frozen
class Identity:
    """The identity a job carries: its own id, its parent's, its workflow's and its user's."""

    job_id: str
    workflow_id: str
    parent_id: str | None = None
    user_id: str | None = None

    def child(self, job_id: str) -> Identity:
        """The identity of a job started by this one."""
        return Identity(job_id, self.workflow_id, self.job_id, self.user_id)


@runtime_checkable
class Identifiable(Protocol):
    """Anything that can parent a job or a tool: a workflow, a job's context, a tool."""

    @property
    def identity(self) -> Identity: ...


@attrs.frozen
class Workflow:
    """A root identity: the parent of the first job of a piece of work."""

    workflow_id: str = attrs.field(factory=lambda: new_job_id("workflow"))
    user_id: str | None = None

    @property
    def identity(self) -> Identity:
        return Identity(self.workflow_id, self.workflow_id, None, self.user_id)

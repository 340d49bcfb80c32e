"""Runs: one call to run a thinker, its result, and what ``model=`` names.

``harness.run_sync(Triage, note, model="embedded")`` builds the thinker (any callable taking the
parent, such as a thinker class with the ``(parent)`` constructor) under a fresh workflow, runs
it through a dispatcher and returns a :class:`RunResult`: the typed answer, each item's ref, the
turns, the usage and the record.
``await harness.run(Triage, note, ...)`` is the same in async code.

Durable runs (docs/durable.md): ``run(..., journal=PATH)`` journals each turn;
``resume(Triage, PATH)`` continues after a crash; ``branch(Triage, PATH, at=K, move=...)``
re-runs with a move forced; ``@requires_approval(below=0.8)`` pauses a run (a
:class:`PausedResult`) until a person's :class:`Approval`.
"""

from harness._public import claim_exports
from harness.record import RunFailedError as RunFailedError
from harness.runs._durable import Approver as Approver
from harness.runs._durable import JournalMismatchError as JournalMismatchError
from harness.runs._durable import PausedResult as PausedResult
from harness.runs._journal import JournalError as JournalError
from harness.runs._journal import read_journal as read_journal
from harness.runs._model import CLIENT_ENTRY as CLIENT_ENTRY
from harness.runs._model import ModelChoice as ModelChoice
from harness.runs._model import Seat as Seat
from harness.runs._model import seat_for as seat_for
from harness.runs._result import RunResult as RunResult
from harness.runs._result import Usage as Usage
from harness.runs._resume import Branch as Branch
from harness.runs._resume import branch as branch
from harness.runs._resume import resume as resume
from harness.runs._resume import resume_sync as resume_sync
from harness.runs._resume import run_journalled as run_journalled
from harness.runs._run import ThinkerFactory as ThinkerFactory
from harness.runs._run import run as run
from harness.runs._run import run_sync as run_sync
from harness.runs._target import TARGET_ERRORS as TARGET_ERRORS
from harness.runs._target import TargetError as TargetError
from harness.runs._target import build_target as build_target
from harness.runs._target import import_module as import_module
from harness.runs._target import import_object as import_object
from harness.runs._target import import_target as import_target
from harness.runs._target import module_of_path as module_of_path
from harness.runs._target import require_extra as require_extra
from harness.runs._target import target_input_type as target_input_type
from harness.thinker import Approval as Approval
from harness.thinker import ApprovalRequiredError as ApprovalRequiredError
from harness.thinker import BranchError as BranchError
from harness.thinker import IdempotencyKey as IdempotencyKey
from harness.thinker import PendingApproval as PendingApproval
from harness.thinker import idempotency_key as idempotency_key
from harness.thinker import requires_approval as requires_approval

__all__ = [
    "CLIENT_ENTRY",
    "TARGET_ERRORS",
    "Approval",
    "ApprovalRequiredError",
    "Approver",
    "Branch",
    "BranchError",
    "IdempotencyKey",
    "JournalError",
    "JournalMismatchError",
    "ModelChoice",
    "PausedResult",
    "PendingApproval",
    "RunFailedError",
    "RunResult",
    "Seat",
    "TargetError",
    "ThinkerFactory",
    "Usage",
    "branch",
    "build_target",
    "idempotency_key",
    "import_module",
    "import_object",
    "import_target",
    "module_of_path",
    "read_journal",
    "require_extra",
    "requires_approval",
    "resume",
    "resume_sync",
    "run",
    "run_journalled",
    "run_sync",
    "seat_for",
    "target_input_type",
]

claim_exports(__name__, globals(), __all__)  # tracebacks and reprs say harness.runs.RunResult

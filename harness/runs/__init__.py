"""Runs: one call to run a thinker, its result, and what ``model=`` names.

``harness.run_sync(Triage, note, model="embedded")`` builds the thinker (any callable taking the
parent, such as a thinker class with the ``(parent)`` constructor) under a fresh workflow, runs
it through a dispatcher and returns a :class:`RunResult`: the typed answer, each item's ref, the
turns, the usage and the record.
``await harness.run(Triage, note, ...)`` is the same in async code.
"""

from harness.record import RunFailedError as RunFailedError
from harness.runs._model import CLIENT_ENTRY as CLIENT_ENTRY
from harness.runs._model import ModelChoice as ModelChoice
from harness.runs._model import Seat as Seat
from harness.runs._model import seat_for as seat_for
from harness.runs._result import RunResult as RunResult
from harness.runs._result import Usage as Usage
from harness.runs._run import ThinkerFactory as ThinkerFactory
from harness.runs._run import run as run
from harness.runs._run import run_sync as run_sync

__all__ = [
    "CLIENT_ENTRY",
    "ModelChoice",
    "RunFailedError",
    "RunResult",
    "Seat",
    "ThinkerFactory",
    "Usage",
    "run",
    "run_sync",
    "seat_for",
]

for _name in ("RunResult", "Usage", "Seat"):
    globals()[_name].__module__ = __name__  # tracebacks and reprs say harness.runs.RunResult
del _name

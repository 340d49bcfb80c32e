"""What the command line needs of the run API beyond its public face: a run with moves forced
(``harness replay --branch``), two runs' turns side by side, the journal's file format (to
tell a journal from a record), and the one maker of a coroutine's synchronous form (evals
uses it for ``evaluate`` and ``evaluate_pack``).

Not for users: ``harness.runs`` is the run API. This module is the one place other harness
packages reach into the run API's internals (the layer test allows ``harness.x._internal``).
"""

from harness.runs._journal import JOURNAL_FILE as JOURNAL_FILE
from harness.runs._resume import branch_replayed as branch_replayed
from harness.runs._resume import turns_side_by_side as turns_side_by_side
from harness.runs._run import blocking as blocking

__all__ = ["JOURNAL_FILE", "blocking", "branch_replayed", "turns_side_by_side"]

"""What the command line needs of evals beyond its public face: a report's JSON text as
``report.json`` holds it (``harness eval --json`` prints the same bytes, a position bias added).

Not for users: ``harness.evals`` is the eval API. This module is the one place other harness
packages reach into evals' internals (the layer test allows ``harness.x._internal``).
"""

from harness.evals._report import report_text as report_text

__all__ = ["report_text"]

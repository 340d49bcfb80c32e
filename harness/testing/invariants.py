"""The decision thinker's invariants, for your own thinkers and palettes.

* :func:`check_thinker` (call it from a plain test): hypothesis runs your thinker on drawn inputs
  under drawn model policies and checks every invariant of every run;
* :func:`assert_invariants` (inside your own ``@given`` test): one run, checked, its
  :class:`RunReport` returned;
* :func:`invariant_problems` lists what a recorded run broke; :func:`record_run` records one;
  :func:`takes` says whether a palette tool takes an artifact (as the legal moves count it).

A run breaking an invariant raises :class:`InvariantViolation`, whose text lists the problems
and then the run: the world, each request with the answers given, each turn.
"""

from harness.testing._invariants import InvariantViolation as InvariantViolation
from harness.testing._invariants import assert_invariants as assert_invariants
from harness.testing._invariants import check_thinker as check_thinker
from harness.testing._invariants import invariant_problems as invariant_problems
from harness.testing._invariants import takes as takes
from harness.testing._run_report import RunReport as RunReport
from harness.testing._run_report import record_run as record_run
from harness.testing._run_report import run_digest as run_digest

__all__ = [
    "InvariantViolation",
    "RunReport",
    "assert_invariants",
    "check_thinker",
    "invariant_problems",
    "record_run",
    "run_digest",
    "takes",
]

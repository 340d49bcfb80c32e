"""The decision thinker's invariants, for your own thinkers and palettes.

* :func:`check_thinker` (call it from a plain test): hypothesis runs your thinker on drawn inputs
  under drawn model policies, checks every invariant of every run and runs each example twice,
  comparing the bytes; every run is bounded in decisions and in wall-clock time;
* :func:`assert_invariants` (inside your own ``@given`` test): one example, checked and run
  again, its :class:`RunReport` returned;
* :func:`check_reproducible`: one example in fresh interpreters under several
  ``PYTHONHASHSEED`` values, compared byte for byte;
* :func:`invariant_problems` lists what a recorded run broke; :func:`report_run` records one;
  :func:`takes` says whether a palette tool takes an artifact (as the legal moves count it).

A broken run raises :class:`InvariantViolation`, whose ``kind`` (an :class:`InvariantKind`) says
which promise broke and whose text lists the problems, what they point to (a traceback, a diff
of two requests) and then the run: the world, each request with the answers given, each turn.
"""

from harness.testing._invariants import STATE_KEYS as STATE_KEYS
from harness.testing._invariants import assert_invariants as assert_invariants
from harness.testing._invariants import check_thinker as check_thinker
from harness.testing._invariants import invariant_problems as invariant_problems
from harness.testing._invariants import replay_problems as replay_problems
from harness.testing._invariants import takes as takes
from harness.testing._reproducible import DEFAULT_HASH_SEEDS as DEFAULT_HASH_SEEDS
from harness.testing._reproducible import DEFAULT_RUN_TIMEOUT as DEFAULT_RUN_TIMEOUT
from harness.testing._reproducible import check_reproducible as check_reproducible
from harness.testing._reproducible import first_difference as first_difference
from harness.testing._reproducible import reproducibility_problems as reproducibility_problems
from harness.testing._run_facts import Hang as Hang
from harness.testing._run_facts import RunBytes as RunBytes
from harness.testing._run_facts import RunReport as RunReport
from harness.testing._run_report import report_run as report_run
from harness.testing._run_report import run_digest as run_digest
from harness.testing._violation import InvariantKind as InvariantKind
from harness.testing._violation import InvariantViolation as InvariantViolation
from harness.testing._violation import Problem as Problem

__all__ = [
    "DEFAULT_HASH_SEEDS",
    "DEFAULT_RUN_TIMEOUT",
    "STATE_KEYS",
    "Hang",
    "InvariantKind",
    "InvariantViolation",
    "Problem",
    "RunBytes",
    "RunReport",
    "assert_invariants",
    "check_reproducible",
    "check_thinker",
    "first_difference",
    "invariant_problems",
    "replay_problems",
    "report_run",
    "reproducibility_problems",
    "run_digest",
    "takes",
]

"""Test doubles for harness's tests and for users' tests: the fake decision model, the fake
System One server on loopback, replay from cassettes (and the pytest plugin,
``harness.testing.pytest_plugin``), and (in ``harness.testing.strategies``) hypothesis strategies.

The property-testing names (``check_thinker``, ``Scenario``, ...) need hypothesis (the ``test``
extra) and load on first use.
"""

from typing import TYPE_CHECKING

from harness._public import claim_exports
from harness.providers import FakeDecisionModel as FakeDecisionModel
from harness.providers import ScriptExhaustedError as ScriptExhaustedError
from harness.providers import answer_by_kind as answer_by_kind
from harness.providers import choose as choose
from harness.providers import default_answers as default_answers
from harness.providers import digest_of as digest_of
from harness.providers import rate as rate
from harness.providers import yes as yes
from harness.replay import Cassette as Cassette
from harness.replay import CassetteError as CassetteError
from harness.replay import RealModelBlockedError as RealModelBlockedError
from harness.replay import ReplayClient as ReplayClient
from harness.replay import ReplayMissError as ReplayMissError
from harness.replay import load_cassette as load_cassette
from harness.replay import override as override
from harness.testing._bigram import BigramModel as BigramModel
from harness.testing._fake_server import FakeSystemOneServer as FakeSystemOneServer
from harness.testing._faults import ECHO_SHAPES as ECHO_SHAPES
from harness.testing._faults import EchoShape as EchoShape
from harness.testing._faults import ErrorShape as ErrorShape
from harness.testing._faults import Fault as Fault
from harness.testing._faults import error_body as error_body
from harness.testing._logprob_server import LogprobServer as LogprobServer
from harness.testing._stand_in import fitted_policy as fitted_policy
from harness.testing._violation import InvariantKind as InvariantKind
from harness.testing._violation import InvariantViolation as InvariantViolation
from harness.testing._violation import Problem as Problem

claim_exports(__name__, globals(), ("InvariantKind", "InvariantViolation", "Problem"))

# The lazy names are written as ``harness/__init__.py`` writes its own: a table the loader
# reads, the same names imported under TYPE_CHECKING for type checkers, and one plain import per
# module in __getattr__. The two faces do not share a loader: one would import modules by name,
# which no harness module does (the layer test reads plain imports only).
_NEEDS_HYPOTHESIS: dict[str, str] = {
    "RunReport": "harness.testing.invariants",
    "assert_invariants": "harness.testing.invariants",
    "check_reproducible": "harness.testing.invariants",
    "check_thinker": "harness.testing.invariants",
    "invariant_problems": "harness.testing.invariants",
    "report_run": "harness.testing.invariants",
    "run_digest": "harness.testing.invariants",
    "RandomPolicy": "harness.testing.strategies",
    "Scenario": "harness.testing.strategies",
}

if TYPE_CHECKING:
    from harness.testing.invariants import RunReport as RunReport
    from harness.testing.invariants import assert_invariants as assert_invariants
    from harness.testing.invariants import check_reproducible as check_reproducible
    from harness.testing.invariants import check_thinker as check_thinker
    from harness.testing.invariants import invariant_problems as invariant_problems
    from harness.testing.invariants import report_run as report_run
    from harness.testing.invariants import run_digest as run_digest
    from harness.testing.strategies import RandomPolicy as RandomPolicy
    from harness.testing.strategies import Scenario as Scenario
else:  # type checkers read the imports above; unknown names stay errors

    def __getattr__(name: str) -> object:
        module = _NEEDS_HYPOTHESIS.get(name)
        if module is None:
            raise AttributeError(f"module 'harness.testing' has no attribute {name!r}")
        try:  # plain imports (no importlib), so the layer test reads what loads
            if module == "harness.testing.invariants":
                from harness.testing import invariants as found
            else:
                from harness.testing import strategies as found
            value = getattr(found, name)
        except ModuleNotFoundError as error:
            raise ImportError(
                f"harness.testing.{name} needs hypothesis: pip install 'harness[test]'"
            ) from error
        globals()[name] = value
        return value

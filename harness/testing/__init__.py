"""Test doubles for harness's tests and for users' tests: the fake decision model, the fake
System One server on loopback, and (in ``harness.testing.strategies``) hypothesis strategies."""

from harness.llm._fake import FakeDecisionModel as FakeDecisionModel
from harness.llm._fake import ScriptExhaustedError as ScriptExhaustedError
from harness.llm._fake import choose as choose
from harness.llm._fake import default_answers as default_answers
from harness.llm._fake import rate as rate
from harness.llm._fake import yes as yes
from harness.testing._fake_server import ErrorShape as ErrorShape
from harness.testing._fake_server import FakeSystemOneServer as FakeSystemOneServer
from harness.testing._fake_server import Fault as Fault
from harness.testing._fake_server import error_body as error_body
from harness.testing.invariants import InvariantViolation as InvariantViolation
from harness.testing.invariants import RunReport as RunReport
from harness.testing.invariants import assert_invariants as assert_invariants
from harness.testing.invariants import check_thinker as check_thinker
from harness.testing.invariants import invariant_problems as invariant_problems
from harness.testing.invariants import record_run as record_run
from harness.testing.invariants import run_digest as run_digest
from harness.testing.strategies import RandomPolicy as RandomPolicy
from harness.testing.strategies import Scenario as Scenario

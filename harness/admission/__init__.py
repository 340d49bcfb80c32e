"""Admission: what lets a call go. Gates (concurrency), token buckets (a window's tokens), the
adaptive limit that shrinks on 429s, and the Redis-backed admission shared by several processes.

A new admission policy is one module here, an :class:`Admission` subclass (see ``_adaptive.py``).
Users import from here; the private modules behind it may move.
"""

from harness.admission._adaptive import AdaptiveAdmission as AdaptiveAdmission
from harness.admission._adaptive import AdaptiveLimit as AdaptiveLimit
from harness.admission._admission import Admission as Admission
from harness.admission._admission import Demand as Demand
from harness.admission._admission import Permit as Permit
from harness.admission._bucket import TokenBucket as TokenBucket
from harness.admission._gate import AdmissionError as AdmissionError
from harness.admission._gate import Gate as Gate
from harness.admission._redis_admission import (
    AdmissionUnavailableError as AdmissionUnavailableError,
)
from harness.admission._redis_admission import RedisAdmission as RedisAdmission

"""Jobs and the dispatcher: identity, time limits, retry policies, admission, events, the record."""

from harness.errors import JobTimeoutError as JobTimeoutError  # lives in harness.errors
from harness.jobs._dispatcher import Dispatcher as Dispatcher
from harness.jobs._dispatcher import JobHandle as JobHandle
from harness.jobs._events import EventKind as EventKind
from harness.jobs._events import JobEvent as JobEvent
from harness.jobs._events import JobSnapshot as JobSnapshot
from harness.jobs._events import Subscription as Subscription
from harness.jobs._job import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from harness.jobs._job import DEFAULT_UPSTREAM_RETRIES as DEFAULT_UPSTREAM_RETRIES
from harness.jobs._job import DefaultTimeout as DefaultTimeout
from harness.jobs._job import Job as Job
from harness.jobs._job import JobContext as JobContext
from harness.jobs._observable import ObservableDecisionClient as ObservableDecisionClient
from harness.jobs._pacing import Pacing as Pacing
from harness.jobs._record import JobRecord as JobRecord
from harness.jobs._record import ModelCall as ModelCall
from harness.jobs._requirements import DecisionBinding as DecisionBinding
from harness.jobs._requirements import Requirements as Requirements
from harness.jobs._requirements import ResolvedBinding as ResolvedBinding
from harness.jobs._retry import SDK_STATUSES as SDK_STATUSES
from harness.jobs._retry import RetryPolicy as RetryPolicy

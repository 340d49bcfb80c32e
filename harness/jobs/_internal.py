"""What the packages above use of the dispatcher's machinery and is not for users: the hooks
``harness.observe`` installs into every dispatcher, and the two writers of a decision's entry on
its job's record (the decision call records its own calls with them, as
:class:`~harness.jobs.ObservableDecisionClient` does, without a client wrapped around another).
The one module of this package that other harness packages may import besides its public face."""

from harness.jobs._dispatcher import DISPATCHER_HOOKS as DISPATCHER_HOOKS
from harness.jobs._observable import record_answered as record_answered
from harness.jobs._observable import record_failed as record_failed

__all__ = ["DISPATCHER_HOOKS", "record_answered", "record_failed"]

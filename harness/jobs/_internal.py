"""What the packages above use of the dispatcher's machinery and is not for users: the hooks
``harness.observe`` installs into every dispatcher. The one module of this package that other
harness packages may import besides its public face."""

from harness.jobs._hooks import DISPATCHER_HOOKS as DISPATCHER_HOOKS

__all__ = ["DISPATCHER_HOOKS"]

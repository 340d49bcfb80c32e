"""Fine-grained dependencies, so the mypy daemon re-checks a palette when a class it relies on
changes in another module.

Why the plugin is needed: a palette check reads the bases of every tool class and every artifact
class on the way (a third module's ``class Verdict(Note)`` decides reachability), but the module
holding the palette does not name them, so ``dmypy`` would keep a stale verdict after an edit and
a revert there. Each class involved becomes a trigger of the target being checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.checker import TypeChecker
from mypy.plugin import CheckerPluginInterface
from mypy.server.trigger import make_trigger

__all__ = ["depend_on"]


def depend_on(api: CheckerPluginInterface, fullnames: Iterable[str]) -> None:
    """Make the target being checked depend on each class in ``fullnames`` (daemon only uses
    them; an ordinary run re-checks a module whose imports changed anyway)."""
    if not isinstance(api, TypeChecker):
        return
    target = api.tscope.current_target()
    plugin_deps = api.tree.plugin_deps
    for fullname in fullnames:
        plugin_deps.setdefault(make_trigger(fullname), set()).add(target)

"""Fine-grained dependencies, so the mypy daemon re-checks a palette when a class it relies on
changes in another module.

Why the plugin is needed: a palette check reads the bases of every tool class and every artifact
class on the way (a third module's ``class Verdict(Note)`` decides reachability), but the module
holding the palette does not name them, so ``dmypy`` would keep a stale verdict after an edit and
a revert there. Each class involved becomes a trigger of the target being checked.

A class's trigger fires when its bases, type parameters or MRO change, not when one member does:
a tool's constructor and its ``@tool_name`` (declared by the plugin as ``__harness_tool_name__``)
are members, so they get triggers of their own, for every class in the tool's MRO (an inherited
constructor or a generic base in a third module counts).
"""

from __future__ import annotations

from collections.abc import Iterable

from mypy.checker import TypeChecker
from mypy.nodes import TypeInfo
from mypy.plugin import CheckerPluginInterface
from mypy.server.trigger import make_trigger

from mypy_plugin._names import NAME_ATTR

__all__ = ["class_triggers", "depend_on", "wants_dependencies"]


def class_triggers(infos: Iterable[TypeInfo]) -> list[str]:
    """What a tool check reads of each class: the class itself, its constructor, its name."""
    out: list[str] = []
    for info in infos:
        out += [info.fullname, f"{info.fullname}.__init__", f"{info.fullname}.{NAME_ATTR}"]
    return out


def wants_dependencies(api: CheckerPluginInterface) -> bool:
    """Whether anyone reads fine-grained dependencies in this run: the daemon, or a run writing
    them into the cache for a daemon (``--cache-fine-grained``). An ordinary run re-checks a
    module whose imports changed anyway, so it skips collecting them (every palette check
    would walk the MRO of every class involved for nothing)."""
    options = api.options
    return (options.fine_grained_incremental or options.cache_fine_grained) and isinstance(
        api, TypeChecker
    )


def depend_on(api: CheckerPluginInterface, fullnames: Iterable[str]) -> None:
    """Make the target being checked depend on each name in ``fullnames`` (a class or a class
    member; the daemon only uses them: an ordinary run re-checks a module whose imports
    changed anyway)."""
    if not isinstance(api, TypeChecker):
        return
    target = api.tscope.current_target()
    plugin_deps = api.tree.plugin_deps
    for fullname in fullnames:
        plugin_deps.setdefault(make_trigger(fullname), set()).add(target)

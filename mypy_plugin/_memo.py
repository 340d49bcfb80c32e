"""What the checks remember within one build: each tool class's facts, and which modules a
palette check read call forms from (until mypy asks for the module's indirect dependencies).

:func:`mypy_plugin._facts.facts_of` reads a class's facts from what semantic analysis settled
(bases, decorators, declared signatures), which type checking never changes, so a tool checked
where it is defined and again in a palette is read once. Each entry keeps the class and the
options it was read under, so an id is never taken for another object's. Emptied when a build
starts (:func:`forget`, from the plugin's constructor); each ``--num-workers`` process has its
own; the daemon, which updates classes in place, never uses it. Kept apart from ``_facts`` so
the plugin's constructor loads nothing of harness.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CONSULTED", "FACTS", "FACTS_LIMIT", "NODES", "PLAIN", "VERDICTS", "forget"]

#: (id of the class, id of the options) -> (class, options, facts).
FACTS: Final[dict[tuple[int, int], tuple[Any, Any, Any]]] = {}  # Any: mypy and harness objects

#: id of a class's remembered facts -> (facts, the class's own verdicts).
VERDICTS: Final[dict[int, tuple[Any, Any]]] = {}  # Any: harness objects (not loaded here)

#: class -> the type node of its instance without type arguments (see ``_facts._plain_node``).
NODES: Final[dict[Any, Any]] = {}  # Any: a mypy TypeInfo -> a MypyType (not loaded here)

#: class -> (options, its plain tool or ``None``: see ``_plain.plain_tool``).
PLAIN: Final[dict[Any, tuple[Any, Any]]] = {}  # Any: a mypy TypeInfo -> (Options, PlainTool)

#: module being checked -> the modules its palette checks read call forms from, until mypy asks
#: for the module's indirect dependencies (right after checking it, in the same process).
CONSULTED: Final[dict[str, set[str]]] = {}

#: More entries than this empty the memo (a bound on what a huge build keeps alive).
FACTS_LIMIT: Final = 8192


def forget() -> None:
    """Start a build with nothing remembered."""
    FACTS.clear()
    VERDICTS.clear()
    NODES.clear()
    PLAIN.clear()
    CONSULTED.clear()

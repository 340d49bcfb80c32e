"""Reachability: which artifact types a run can hold, and the rules on them (the key tool's
input reachable, ``harness-graph``; every palette tool's input reachable, ``harness-dead-tool``).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from harness.palette._types import N, ToolFacts, ToolSides, Verdict
from harness.palette._types import quoted as _q

__all__ = ["dead_tool_verdicts", "graph_verdict", "is_fed", "reach", "reachable_types"]


def _feeds(artifact: N, wanted: N) -> bool:
    # A list feeds only a tool taking a list; a plain artifact only a tool taking a plain one.
    return (artifact.iterand() is None) == (wanted.iterand() is None) and artifact.is_subtype_of(
        wanted
    )


def _with_iterands(node: N) -> list[N]:
    out = [node]
    inner = node.iterand()
    while inner is not None:
        out.append(inner)
        inner = inner.iterand()
    return out


def reachable_types(thinker_input: N, tools: Sequence[ToolFacts[N]]) -> list[N]:
    """Every artifact type a run can hold, in discovery order: the input, then each output of a
    tool fed by something reachable (a list's iterands count by their own type)."""
    return reach(thinker_input, tools)[0]


def reach(thinker_input: N, tools: Sequence[ToolSides[N]]) -> tuple[list[N], frozenset[str]]:
    """:func:`reachable_types`, and the keys of the tools something reachable feeds (each such
    tool fired on the way, so the rules after it need not ask again).

    Passes over the tools until none fires; a tool is only asked about the types that became
    reachable since it was last asked (the list only grows), newest first (in a chain the tool
    before it produced the type that feeds it), and only about types of its own kind (a list
    feeds only a tool taking a list): a palette costs about one subtype check per tool and one
    per pair of reachable types (each new type against the known ones), not tools times types
    per pass."""
    reachable: list[N] = _with_iterands(thinker_input)
    kinds: tuple[list[N], list[N]] = ([], [])  # plain types, lists: what may feed each kind
    for node in reachable:
        kinds[node.iterand() is not None].append(node)
    # each tool with both sides known, not fed yet: facts, input, output, the types of its kind
    waiting: list[tuple[ToolSides[N], N, N, list[N]]] = []
    for facts in tools:
        wanted, produced = facts.input_node, facts.output_node
        if wanted is not None and produced is not None:
            waiting.append((facts, wanted, produced, kinds[wanted.iterand() is not None]))
    asked = [0] * len(waiting)
    fed: set[str] = set()
    progress = True
    while progress and waiting:
        progress = False
        still: list[int] = []
        for index, (facts, wanted, produced, kind) in enumerate(waiting):
            known = len(kind)
            for newest_first in range(known - 1, asked[index] - 1, -1):
                if kind[newest_first].is_subtype_of(wanted):
                    break
            else:
                asked[index] = known
                still.append(index)
                continue
            fed.add(facts.key)
            progress = True
            for node in _with_iterands(produced):
                for have in reachable:
                    if node.is_subtype_of(have) and have.is_subtype_of(node):
                        break  # the same type, found before
                else:
                    reachable.append(node)
                    kinds[node.iterand() is not None].append(node)
        waiting = [waiting[i] for i in still]
        asked = [asked[i] for i in still]
    return reachable, frozenset(fed)


def _reachable_note(thinker_input: N, reachable: Sequence[N]) -> str:
    return _reachable_note_text(thinker_input.render(), reachable)


def _reachable_note_text(start: str, reachable: Sequence[N]) -> str:
    listed = ", ".join(_q(node.render()) for node in reachable)
    return f"Reachable from {_q(start)}: {listed}"


def is_fed(wanted: N, reachable: Sequence[N]) -> bool:
    """Whether some reachable artifact type is an instance of ``wanted``."""
    return any(_feeds(have, wanted) for have in reachable)


def graph_verdict(
    key: ToolFacts[N],
    thinker_input: N,
    reachable: Sequence[N],
    fed: AbstractSet[str] = frozenset(),
) -> Verdict | None:
    """The key tool's input is reachable from the thinker's input through the palette; ``fed``
    are keys of tools known to be fed (see :func:`reach`), not asked again."""
    wanted = key.input_node
    if wanted is None or key.key in fed or is_fed(wanted, reachable):
        return None
    return Verdict(
        "harness-graph",
        key.label,
        f"Key tool {_q(key.label)} takes {_q(wanted.render())}, which no run starting from "
        f"{_q(thinker_input.render())} can produce",
        (
            _reachable_note(thinker_input, reachable),
            f"Add a tool producing {_q(wanted.render())} to the palette, or change the key tool",
        ),
        key=key.key,
    )


def dead_tool_verdicts(
    tools: Sequence[ToolFacts[N]],
    key_key: str,
    thinker_input: N,
    reachable: Sequence[N],
    shown: str | None = None,
    fed: AbstractSet[str] = frozenset(),
) -> list[Verdict]:
    """Every palette tool (the key tool aside) whose input no run can produce; ``shown`` is
    how the thinker's input reads when it is a union of artifact classes; ``fed`` are keys of
    tools known to be fed (see :func:`reach`), not asked again."""
    out: list[Verdict] = []
    seen: set[str] = {key_key}
    for facts in tools:
        if facts.key in seen or facts.key in fed:
            continue
        wanted = facts.input_node
        if wanted is None:
            continue
        seen.add(facts.key)
        if not is_fed(wanted, reachable):
            start = shown if shown is not None else thinker_input.render()
            out.append(
                Verdict(
                    "harness-dead-tool",
                    facts.label,
                    f"Tool {_q(facts.label)} can never run: nothing reachable from "
                    f"{_q(start)} is an instance of {_q(wanted.render())}",
                    (
                        _reachable_note_text(start, reachable),
                        "Remove it from the palette, or add a tool producing "
                        f"{_q(wanted.render())}",
                    ),
                    key=facts.key,
                )
            )
    return out

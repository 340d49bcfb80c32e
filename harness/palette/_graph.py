"""Reachability: which artifact types a run can hold, and the rules on them (the key tool's
input reachable, ``harness-graph``; every palette tool's input reachable, ``harness-dead-tool``).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.palette._types import N, ToolFacts, Verdict
from harness.palette._types import quoted as _q

__all__ = ["dead_tool_verdicts", "graph_verdict", "is_fed", "reachable_types"]


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
    tool fed by something reachable (a list's iterands count by their own type).

    Passes over the tools until none fires; a tool is only asked about the types that became
    reachable since it was last asked (the list only grows), so a palette costs tools times
    types subtype checks, not that once per pass."""
    reachable: list[N] = _with_iterands(thinker_input)
    fired: set[int] = set()
    asked = [0] * len(tools)  # how many of ``reachable`` each tool was asked about
    progress = True
    while progress:
        progress = False
        for index, facts in enumerate(tools):
            wanted, produced = facts.input_node, facts.output_node
            if index in fired or wanted is None or produced is None:
                continue
            fed = any(_feeds(have, wanted) for have in reachable[asked[index] :])
            asked[index] = len(reachable)
            if fed:
                fired.add(index)
                progress = True
                for node in _with_iterands(produced):
                    if not any(node.is_subtype_of(r) and r.is_subtype_of(node) for r in reachable):
                        reachable.append(node)
    return reachable


def _reachable_note(thinker_input: N, reachable: Sequence[N]) -> str:
    return _reachable_note_text(thinker_input.render(), reachable)


def _reachable_note_text(start: str, reachable: Sequence[N]) -> str:
    listed = ", ".join(_q(node.render()) for node in reachable)
    return f"Reachable from {_q(start)}: {listed}"


def is_fed(wanted: N, reachable: Sequence[N]) -> bool:
    """Whether some reachable artifact type is an instance of ``wanted``."""
    return any(_feeds(have, wanted) for have in reachable)


def graph_verdict(key: ToolFacts[N], thinker_input: N, reachable: Sequence[N]) -> Verdict | None:
    """The key tool's input is reachable from the thinker's input through the palette."""
    wanted = key.input_node
    if wanted is None or is_fed(wanted, reachable):
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
) -> list[Verdict]:
    """Every palette tool (the key tool aside) whose input no run can produce; ``shown`` is
    how the thinker's input reads when it is a union of artifact classes."""
    start = shown if shown is not None else thinker_input.render()
    out: list[Verdict] = []
    seen: set[str] = {key_key}
    for facts in tools:
        wanted = facts.input_node
        if facts.key in seen or wanted is None:
            continue
        seen.add(facts.key)
        if not is_fed(wanted, reachable):
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

"""Reachability as the rules compute it (``harness.palette._graph.reach``) against the plain
fixed-point pass it replaces, on many small generated palettes: the same reachable types in the
same order, the same tools fed, the same ``harness-graph`` and ``harness-dead-tool`` verdicts.

The shortcuts being held here (a tool asked only about types of its own kind, newest first; the
tools found fed handed to the rules after it) are what keeps a palette check cheap in a large
code base; a type node is a small fake with an explicit set of bases, so subtyping, lists and
lists of lists are all exercised, a type with an unknown side too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.palette._graph import dead_tool_verdicts, graph_verdict, reach, reachable_types
from harness.palette._rules import palette_verdicts
from harness.palette._types import ToolFacts


@dataclass(frozen=True, eq=False)
class Node:
    """A fake artifact type: a name, the names it is a subtype of, and its list iterand."""

    name: str
    bases: frozenset[str] = field(default_factory=frozenset)
    inner: Node | None = None

    def is_subtype_of(self, other: Node) -> bool:
        if self.inner is not None or other.inner is not None:
            return (
                self.inner is not None
                and other.inner is not None
                and self.inner.is_subtype_of(other.inner)
            )
        return other.name == self.name or other.name in self.bases

    def iterand(self) -> Node | None:
        return self.inner

    def render(self) -> str:
        return self.name if self.inner is None else f"ListArtifact[{self.inner.render()}]"


def _feeds(artifact: Node, wanted: Node) -> bool:
    return (artifact.iterand() is None) == (wanted.iterand() is None) and artifact.is_subtype_of(
        wanted
    )


def _with_iterands(node: Node) -> list[Node]:
    out = [node]
    while (inner := out[-1].iterand()) is not None:
        out.append(inner)
    return out


def _plain_reachable(start: Node, tools: Sequence[ToolFacts[Node]]) -> list[Node]:
    """The specification: pass over the tools until none fires, each asked about every type."""
    reachable = _with_iterands(start)
    fired: set[int] = set()
    progress = True
    while progress:
        progress = False
        for index, facts in enumerate(tools):
            wanted, produced = facts.input_node, facts.output_node
            if index in fired or wanted is None or produced is None:
                continue
            if any(_feeds(have, wanted) for have in reachable):
                fired.add(index)
                progress = True
                for node in _with_iterands(produced):
                    if not any(node.is_subtype_of(r) and r.is_subtype_of(node) for r in reachable):
                        reachable.append(node)
    return reachable


def _types(rng: random.Random) -> list[Node]:
    """A few classes, each a subtype of some earlier ones (a DAG), their lists and a list of
    lists."""
    plain: list[Node] = []
    for index in range(rng.randint(2, 7)):
        parents = [p for p in plain if rng.random() < 0.3]
        bases = frozenset(b for p in parents for b in (p.name, *p.bases))
        plain.append(Node(f"T{index}", bases))
    lists = [Node(f"L{p.name}", inner=p) for p in plain if rng.random() < 0.5]
    nested = [Node(f"L{lst.name}", inner=lst) for lst in lists[:1]]
    return plain + lists + nested


def _palette(rng: random.Random, pool: list[Node]) -> list[ToolFacts[Node]]:
    tools = []
    for index in range(rng.randint(1, 9)):
        side_in = rng.choice(pool) if rng.random() < 0.95 else None
        side_out = rng.choice(pool) if rng.random() < 0.9 else None
        tools.append(ToolFacts(f"m.Tool{index}", f"Tool{index}", input=side_in, output=side_out))
    if tools and rng.random() < 0.2:
        tools.append(tools[0])  # a class listed twice
    return tools


def test_reach_finds_what_the_plain_pass_finds_in_the_same_order() -> None:
    rng = random.Random(20261203)
    for _ in range(3000):
        pool = _types(rng)
        tools = _palette(rng, pool)
        start = rng.choice(pool)
        expected = _plain_reachable(start, tools)
        found, fed = reach(start, tools)
        assert [n.render() for n in found] == [n.render() for n in expected]
        assert reachable_types(start, tools) == found
        should_be_fed = {
            t.key
            for t in tools
            if t.input_node is not None
            and t.output_node is not None
            and any(_feeds(have, t.input_node) for have in expected)
        }
        assert fed == should_be_fed
        key = tools[-1]
        assert graph_verdict(key, start, found, fed) == graph_verdict(key, start, expected)
        assert dead_tool_verdicts(tools, key.key, start, found, fed=fed) == dead_tool_verdicts(
            tools, key.key, start, expected
        )


def test_a_union_input_judges_dead_tools_by_every_member() -> None:
    """A tool fed from one member of a union input only is alive; the graph verdict is per
    member (the fed tools of each member are handed on, never mixed up between members)."""
    note, orphan, verdict = Node("Note"), Node("Orphan"), Node("Verdict")
    answers = Node("LVerdict", inner=verdict)
    from_note = ToolFacts("m.FromNote", "FromNote", name="from_note", input=note, output=verdict)
    key = ToolFacts("m.Judge", "Judge", name="judge", input=verdict, output=answers)
    found = palette_verdicts(
        thinker_input=None,
        output_type=verdict,
        key_tool=key,
        palette=(from_note,),
        input_members=(note, orphan),
    )
    assert [(v.code, v.subject) for v in found] == [("harness-graph", "Judge")]
    assert '"Judge" takes "Verdict", which no run starting from "Orphan"' in found[0].message

"""The palette rules, as pure functions over a tiny type-node interface.

One source of truth for two front ends: the runtime validator (``harness.palette``) reads the
facts from live classes, the mypy plugin (``mypy_plugin``) reads them from mypy's types. Both
feed the same :class:`ToolFacts` here and get the same :class:`Verdict` codes and messages back.

A type node only has to answer three questions: is it a subtype of another node, is it a
``ListArtifact[X]`` (and what is ``X``), and how does it read in a message.

The rules by concern: this module holds the rules on one tool and on a whole palette (and is
the one the front ends import); the codes are in ``_codes``, the type node, facts and verdict in
``_types``, reachability in ``_graph``, what only a type checker cannot decide in
``_undecidable``. The mypy plugin puts a digest of every one of them into mypy's cache key
(``mypy_plugin._plugin.SOURCE_DIGEST``).

One concern, past 400 lines: the rules on one tool and on a palette, each beside its message
and fix, which both front ends import as one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from harness.palette._codes import CODES
from harness.palette._graph import (
    dead_tool_verdicts,
    graph_verdict,
    is_fed,
    reach,
    reachable_types,
)
from harness.palette._types import (
    PLACEHOLDER,
    N,
    Open,
    ToolFacts,
    TypeNode,
    Verdict,
    object_entry,
    subscripted_entry,
    tool_instance_entry,
)
from harness.palette._types import quoted as _q
from harness.palette._undecidable import (
    aliased_name_verdict,
    call_form_verdict,
    container_entry_verdict,
    generic_input_verdict,
    overridable_entry_verdict,
    too_many_branches_verdict,
    undecidable_name_verdict,
    unknown_entry_verdict,
    unread_call_form_verdict,
    unseen_name_verdict,
)
from harness.tools import RESERVED_TOOL_NAMES, validate_tool_name

__all__ = [
    "CODES",
    "Open",
    "ToolFacts",
    "TypeNode",
    "Verdict",
    "aliased_name_verdict",
    "call_form_verdict",
    "container_entry_verdict",
    "dead_tool_verdicts",
    "decorated_non_tool_verdict",
    "duplicate_verdicts",
    "generic_input_verdict",
    "graph_verdict",
    "invalid_name_verdict",
    "is_fed",
    "key_output_verdict",
    "object_entry",
    "objective_verdict",
    "overridable_entry_verdict",
    "palette_shape_verdict",
    "palette_verdicts",
    "reachable_types",
    "subscripted_entry",
    "too_many_branches_verdict",
    "tool_instance_entry",
    "tool_verdicts",
    "undecidable_name_verdict",
    "unknown_entry_verdict",
    "unread_call_form_verdict",
    "unseen_name_verdict",
]


def tool_verdicts(facts: ToolFacts[N]) -> list[Verdict]:
    """The rules about one class on its own: concrete tool, own valid name, ``(parent)``
    constructor, both type parameters bound to concrete artifact classes."""
    if (  # most tools break none of them: one look at each fact, no message built
        facts.not_a_tool is None
        and not facts.abstract
        and facts.name is not None
        and facts.ctor is None
        and facts.narrow_parent is None
        and facts.execute_input is None
        and not isinstance(facts.input, Open)
        and not isinstance(facts.output, Open)
        and validate_tool_name(facts.name) is None
    ):
        return []
    label = _q(facts.label)
    if facts.not_a_tool is not None:
        return [
            Verdict(
                "harness-tool",
                facts.label,
                f"{label} is not a tool class: {facts.not_a_tool}",
                (
                    facts.not_a_tool_fix
                    or "A palette holds DecisionTool subclasses: pass the tool classes themselves",
                ),
                key=facts.key,
            )
        ]
    out: list[Verdict] = []
    if facts.abstract:
        missing = ", ".join(_q(m) for m in facts.abstract)
        out.append(
            Verdict(
                "harness-tool",
                facts.label,
                f"Tool {label} is abstract (missing {missing})",
                (f"A thinker instantiates its tools: implement {missing} in {label}",),
                key=facts.key,
            )
        )
    out += _name_verdicts(facts)
    if facts.ctor is not None:
        out.append(
            Verdict(
                "harness-ctor",
                facts.label,
                f"Tool {label} cannot be built from its parent alone: {facts.ctor}",
                (
                    f"A thinker builds each tool as {facts.label}(parent): keep "
                    '"def __init__(self, parent: Identifiable) -> None"',
                ),
                definition=True,
                key=facts.key,
            )
        )
    if facts.ctor is None and facts.narrow_parent is not None:
        out.append(
            Verdict(
                "harness-ctor",
                facts.label,
                f"Tool {label} takes a parent of type {_q(facts.narrow_parent)}, narrower than "
                '"Identifiable": it cannot be built for every parent a palette gives it',
                (
                    f"A thinker builds each tool as {facts.label}(parent): keep "
                    '"def __init__(self, parent: Identifiable) -> None"',
                ),
                definition=True,
                key=facts.key,
            )
        )
    narrower = _narrower_execute(facts)
    if narrower is not None:
        out.append(narrower)
    for role, side in (("input", facts.input), ("output", facts.output)):
        if isinstance(side, Open):
            out.append(
                Verdict(
                    "harness-open-type",
                    facts.label,
                    f"Tool {label} leaves its {role} type open ({side.shown})",
                    (side.fix if side.fix is not None else _bind_note(facts),),
                    definition=True,
                    key=facts.key,
                )
            )
    return out


def _narrower_execute(facts: ToolFacts[N]) -> Verdict | None:
    """``execute`` taking less than the declared input: a thinker offers the tool every
    artifact of its declared input type (mypy reports it as ``[override]``)."""
    declared, taken = facts.input_node, facts.execute_input
    if declared is None or taken is None or declared.is_subtype_of(taken):
        return None
    return Verdict(
        "harness-open-type",
        facts.label,
        f"Tool {_q(facts.label)} declares its input type {_q(declared.render())}, but its "
        f"execute method takes only {_q(taken.render())}",
        (
            f"A thinker offers the tool every {_q(declared.render())}: declare the input it "
            f'takes, "class {facts.label}(DecisionTool[{taken.render()}, ...])", or take '
            f"{_q(declared.render())} in execute",
        ),
        definition=True,
        key=facts.key,
    )


def _bind_note(facts: ToolFacts[N]) -> str:
    """The fix for an open type parameter, from the tool's own types: each bound side as it is,
    each open side from ``execute``'s annotation when that is concrete, else a placeholder."""
    shown: list[str] = []
    for side, hint in zip((facts.input, facts.output), facts.execute_hints, strict=True):
        if side is not None and not isinstance(side, Open):
            shown.append(side.render())
        else:
            shown.append(hint if hint is not None else PLACEHOLDER)
    source = (
        " (from the types of its execute method)"
        if any(
            h is not None and isinstance(s, Open)
            for s, h in zip((facts.input, facts.output), facts.execute_hints, strict=True)
        )
        else ""
    )
    return (
        "Bind both type parameters to concrete artifact classes, e.g. "
        f'"class {facts.label}(DecisionTool[{shown[0]}, {shown[1]}])"{source}'
    )


def _name_verdicts(facts: ToolFacts[N]) -> list[Verdict]:
    label = _q(facts.label)
    if facts.name is None and facts.unseen_decorator is not None:
        return [unseen_name_verdict(facts.label, facts.unseen_decorator, facts.key)]
    if facts.name is None:
        if facts.inherited_from is not None:
            name, parent = facts.inherited_from
            message = f"Tool {label} only inherits the name {_q(name)} from {_q(parent)}"
        else:
            message = f"Tool {label} has no @tool_name of its own"
        return [
            Verdict(
                "harness-name",
                facts.label,
                message,
                (f'Decorate the class: @tool_name("...") on {label}',),
                key=facts.key,
            )
        ]
    verdict = invalid_name_verdict(facts.label, facts.name, facts.key)
    return [] if verdict is None else [verdict]


def invalid_name_verdict(label: str, name: str, key: str = "") -> Verdict | None:
    """``name`` given by ``@tool_name`` to the class ``label`` is valid (the runtime decorator's
    own check, which raises ``ValueError`` at import), or the verdict saying why not."""
    problem = validate_tool_name(name)
    if problem is None:
        return None
    reserved = ", ".join(_q(r) for r in sorted(RESERVED_TOOL_NAMES))
    return Verdict(
        "harness-name",
        label,
        f"Invalid tool name {_q(name)} for {_q(label)}: {problem}",
        (
            "A tool name is an ASCII identifier: letters a-z and A-Z, digits and '_', not "
            f"starting with a digit, not a Python keyword, and not {reserved}",
        ),
        definition=True,
        key=key,
    )


def decorated_non_tool_verdict(label: str, key: str = "") -> Verdict:
    """``@tool_name`` on a class that is not a ``DecisionTool`` subclass (the runtime decorator
    raises ``TypeError`` on it)."""
    return Verdict(
        "harness-tool",
        label,
        f"@tool_name decorates {_q(label)}, which is not a DecisionTool subclass",
        ('Name tool classes only: "class Tool(DecisionTool[Note, Verdict])"',),
        definition=True,
        key=key,
    )


def palette_shape_verdict(shown: str, entries: Sequence[str] = ()) -> Verdict:
    """A palette that is not a tuple (a list, say): the thinker's signature asks for a tuple,
    and a type checker only keeps each entry's class in a tuple. ``entries`` are the names of
    what it holds, when known, for the fix."""
    if entries:
        written = ", ".join(entries) + ("," if len(entries) == 1 else "")
        fix = f"Write it as a tuple: palette=({written})"
    else:
        fix = "Write it as a tuple: palette=(SplitNote, RefineNote), or palette=() for none"
    return Verdict(
        "harness-tool",
        "palette",
        f"The palette must be a tuple of tool classes, not {_q(shown)}",
        (fix,),
    )


def duplicate_verdicts(tools: Iterable[ToolFacts[N]]) -> list[Verdict]:
    """Names unique within a palette; a class listed twice (the key tool too) counts once."""
    seen_keys: set[str] = set()
    owner: dict[str, ToolFacts[N]] = {}
    out: list[Verdict] = []
    for facts in tools:
        if facts.key in seen_keys or facts.name is None:
            continue
        seen_keys.add(facts.key)
        first = owner.setdefault(facts.name, facts)
        if first is not facts:
            out.append(
                Verdict(
                    "harness-duplicate",
                    facts.label,
                    f"Tool name {_q(facts.name)} of {_q(facts.label)} is already used by "
                    f"{_q(first.label)} in this palette",
                    ("Names are unique within a palette: rename one with @tool_name(...)",),
                    key=facts.key,
                )
            )
    return out


def key_output_verdict(key: ToolFacts[N], output_type: N) -> Verdict | None:
    """The key tool outputs ``ListArtifact[X]`` with ``X`` a subtype of the thinker's ``O``."""
    produced = key.output_node
    if produced is None:
        return None  # an open or unknown output is reported by its own rule
    iterand = produced.iterand()
    if iterand is not None and iterand.is_subtype_of(output_type):
        return None
    want = f"ListArtifact[{output_type.render()}]"
    return Verdict(
        "harness-key-tool",
        key.label,
        f"Key tool {_q(key.label)} produces {_q(produced.render())}, not {_q(want)}",
        (
            f"The key tool assembles the answer: its output must be {_q(want)} "
            f"(the thinker's output type is {_q(output_type.render())})",
        ),
        key=key.key,
    )


def objective_verdict(objective: str) -> Verdict | None:
    """The objective says what the run is for: it is not blank."""
    if objective.strip():
        return None
    return Verdict(
        "harness-objective",
        "objective",
        "The objective must be a non-blank string: say what the run is for",
        ('Write it as a sentence, e.g. objective="Judge every part of the note"',),
    )


def palette_verdicts(
    *,
    thinker_input: N | None,
    output_type: N | None,
    key_tool: ToolFacts[N],
    palette: Sequence[ToolFacts[N]],
    objective: str | None = None,
    complete: bool = True,
    input_members: Sequence[N] = (),
    own_verdicts: Callable[[ToolFacts[N]], Sequence[Verdict]] | None = None,
) -> list[Verdict]:
    """Every verdict on a thinker's palette, in a stable order: per class (palette order, then
    the key tool once), duplicates, the key tool's output, reachability, dead tools, objective.

    ``input_members`` are the artifact classes of a union input (``Note | Orphan``, with
    ``thinker_input`` ``None``): a run starts from any one of them, so the key tool must be
    reachable from each, and a tool is dead when no member reaches it.

    ``own_verdicts`` gives each class's own verdicts (default :func:`tool_verdicts`; the mypy
    plugin passes the ones it already found where the class is defined).

    ``thinker_input`` ``None`` (unknown, e.g. erased at run time) skips the reachability rules;
    ``output_type`` ``None`` skips the key tool's output; ``objective`` ``None`` skips the
    objective. ``complete=False`` says ``palette`` lacks entries the caller could not identify
    (see :func:`unknown_entry_verdict`): an unknown entry might feed any tool, so reachability
    and dead tools are not judged; two known entries sharing a name are still a duplicate.
    """
    tools = [facts for facts in palette if facts.key != key_tool.key]
    tools.append(key_tool)  # folded in after the others, once, as the thinker does
    out: list[Verdict] = []
    seen: set[str] = set()
    for facts in tools:
        if facts.key not in seen:
            seen.add(facts.key)
            out += (own_verdicts or tool_verdicts)(facts)
    out += duplicate_verdicts(tools)
    if output_type is not None and key_tool.not_a_tool is None:
        verdict = key_output_verdict(key_tool, output_type)
        if verdict is not None:
            out.append(verdict)
    if thinker_input is not None and complete:
        reachable, fed = reach(thinker_input, tools)
        verdict = graph_verdict(key_tool, thinker_input, reachable, fed)
        if verdict is not None:
            out.append(verdict)
        out += dead_tool_verdicts(tools, key_tool.key, thinker_input, reachable, fed=fed)
    elif input_members and complete:
        combined: list[N] = []
        fed_by_any: set[str] = set()
        for member in input_members:
            reachable, fed = reach(member, tools)
            fed_by_any |= fed
            verdict = graph_verdict(key_tool, member, reachable, fed)
            if verdict is not None:
                out.append(verdict)
            for node in reachable:
                if not any(node.is_subtype_of(r) and r.is_subtype_of(node) for r in combined):
                    combined.append(node)
        shown = " | ".join(member.render() for member in input_members)
        out += dead_tool_verdicts(
            tools, key_tool.key, input_members[0], combined, shown, fed=fed_by_any
        )
    if objective is not None:
        verdict = objective_verdict(objective)
        if verdict is not None:
            out.append(verdict)
    return out

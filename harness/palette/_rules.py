"""The palette rules, as pure functions over a tiny type-node interface.

One source of truth for two front ends: the runtime validator (``harness.palette``) reads the
facts from live classes, the mypy plugin (``mypy_plugin``) reads them from mypy's types. Both
feed the same :class:`ToolFacts` here and get the same :class:`Verdict` codes and messages back.

A type node only has to answer three questions: is it a subtype of another node, is it a
``ListArtifact[X]`` (and what is ``X``), and how does it read in a message.

One module over 400 lines on purpose: the mypy plugin puts a digest of this file (with its own
sources) into mypy's cache key (``mypy_plugin._plugin.SOURCE_DIGEST``), so every wording and rule
a cached verdict depends on lives here; splitting it would have to grow that list in step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, Self, TypeVar

from harness.tools import RESERVED_TOOL_NAMES, validate_tool_name

__all__ = [
    "CODES",
    "Open",
    "ToolFacts",
    "TypeNode",
    "Verdict",
    "aliased_name_verdict",
    "container_entry_verdict",
    "dead_tool_verdicts",
    "decorated_non_tool_verdict",
    "duplicate_verdicts",
    "generic_input_verdict",
    "graph_verdict",
    "invalid_name_verdict",
    "key_output_verdict",
    "objective_verdict",
    "overridable_entry_verdict",
    "palette_shape_verdict",
    "palette_verdicts",
    "reachable_types",
    "too_many_branches_verdict",
    "tool_verdicts",
    "undecidable_name_verdict",
    "unknown_entry_verdict",
    "unseen_name_verdict",
]

#: Every verdict code, with what it means (the mypy plugin's error codes carry the same names).
CODES: dict[str, str] = {
    "harness-tool": "a palette entry or key tool that is not a concrete DecisionTool class",
    "harness-name": "a tool without its own @tool_name, or with an invalid or reserved name",
    "harness-ctor": "a tool that changes the (parent) constructor",
    "harness-open-type": "a tool that leaves a type parameter Any, open or not an artifact, or "
    "whose execute method takes less than its declared input",
    "harness-duplicate": "two tools with the same name in one palette",
    "harness-key-tool": "a key tool whose output is not ListArtifact[O] for the thinker's O",
    "harness-graph": "a key tool whose input is unreachable from the thinker's input",
    "harness-dead-tool": "a palette tool whose input is unreachable from the thinker's input",
    "harness-objective": "a blank objective",
    "harness-undecidable": "what a type checker cannot decide: a computed tool name, an entry or "
    "key tool that is not one specific class",
}

#: The open side of a suggested base when nothing concrete is known for it.
PLACEHOLDER = "<an artifact class>"


class TypeNode(Protocol):
    """An artifact type as a front end sees it: enough to decide subtyping and lists."""

    def is_subtype_of(self, other: Self) -> bool:
        """Whether an artifact of this type is an instance of ``other``."""
        ...

    def iterand(self) -> Self | None:
        """``X`` when this is ``ListArtifact[X]``, else ``None``."""
        ...

    def render(self) -> str:
        """How the type reads in a message (without quotes)."""
        ...


N = TypeVar("N", bound=TypeNode)


def _q(text: str) -> str:
    return f'"{text}"'


@dataclass(frozen=True)
class Open:
    """A type parameter that is not a concrete artifact type: ``Any``, a type variable, ...

    Build one with the class methods, so both front ends word it alike from the same parts: the
    open part and the whole type, each as mypy prints it (``T``, ``ListArtifact[Any]``).
    """

    shown: str  # how the open part reads, e.g. 'Any' or 'type variable "T"'
    fix: str | None = None  # the fix when binding the parameter is not it

    @classmethod
    def any(cls, whole: str | None = None) -> Open:
        """``Any`` itself, or ``Any`` inside ``whole`` (e.g. ``ListArtifact[Any]``)."""
        return cls("Any" if whole is None else f"Any in {_q(whole)}")

    @classmethod
    def type_variable(cls, name: str, whole: str | None = None) -> Open:
        """A type variable ``name`` (as written, ``T``), itself or inside ``whole``."""
        shown = f"type variable {_q(name)}"
        return cls(shown if whole is None else f"{shown} in {_q(whole)}")

    @classmethod
    def not_an_artifact(cls, whole: str) -> Open:
        """A type that is not one artifact class, such as a union ``Part | Verdict``."""
        return cls(f"{_q(whole)}, not one artifact class")

    @classmethod
    def new_type(cls, name: str, supertype: str) -> Open:
        """A ``NewType`` over an artifact class: a type checker's alias, no class at run time
        (nothing is ever an instance of it)."""
        return cls(f"{_q(name)} is a NewType of {_q(supertype)}, not a class at run time")

    @classmethod
    def type_checking_only(cls, name: str) -> Open:
        """A forward reference to a name imported only under ``if TYPE_CHECKING:``."""
        return cls(
            f"{_q(name)} is imported only under TYPE_CHECKING, so it does not exist at run time",
            f'Import {_q(name)} at module level (outside "if TYPE_CHECKING:"), so the tool\'s '
            "types exist when a thinker builds it",
        )


@dataclass(frozen=True)
class ToolFacts(Generic[N]):
    """What a front end knows about one tool class."""

    key: str  # identity of the class (its full name): the key tool counts once
    label: str  # how the class reads in a message
    not_a_tool: str | None = None  # why it is not a concrete tool class at all, if so
    abstract: tuple[str, ...] = ()  # the abstract members left unimplemented
    name: str | None = None  # its own @tool_name, None when it has none
    inherited_from: tuple[str, str] | None = None  # (name, class) when it only inherits one
    ctor: str | None = None  # None when ``Tool(parent)`` builds it, else what the ctor needs
    narrow_parent: str | None = None  # the parent's type when narrower than Identifiable
    # a decorator other than @tool_name that may name the class at run time (a library's own
    # wrapper of tool_name), when the class has no @tool_name a type checker can see
    unseen_decorator: str | None = None
    input: N | Open | None = None  # None: unknown (not a tool)
    output: N | Open | None = None
    # ``execute``'s own annotations (input, output) rendered, when concrete artifact types: the
    # fix for an open type parameter is built from them
    execute_hints: tuple[str | None, str | None] = (None, None)
    # the concrete type ``execute``'s input is annotated with, when the class overrides it (a
    # narrower one than the declared input refuses artifacts a thinker offers the tool)
    execute_input: N | None = None

    @property
    def input_node(self) -> N | None:
        """The concrete input type, when there is one."""
        return None if isinstance(self.input, Open) else self.input

    @property
    def output_node(self) -> N | None:
        """The concrete output type, when there is one."""
        return None if isinstance(self.output, Open) else self.output


@dataclass(frozen=True)
class Verdict:
    """One broken rule: its code, the class it is about, the message and the notes (fix last)."""

    code: str
    subject: str  # the class (its label) or "objective"
    message: str
    notes: tuple[str, ...] = field(default=())
    definition: bool = False  # a property of the class itself, reportable where it is defined
    key: str = ""  # the class's identity (ToolFacts.key), to find the node it is about

    @property
    def fix(self) -> str:
        """The last note: how to fix it."""
        return self.notes[-1] if self.notes else ""

    def render(self) -> str:
        """The verdict on a few lines, the way mypy would print it."""
        lines = [f"{self.message}  [{self.code}]"]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def tool_verdicts(facts: ToolFacts[N]) -> list[Verdict]:
    """The rules about one class on its own: concrete tool, own valid name, ``(parent)``
    constructor, both type parameters bound to concrete artifact classes."""
    label = _q(facts.label)
    if facts.not_a_tool is not None:
        return [
            Verdict(
                "harness-tool",
                facts.label,
                f"{label} is not a tool class: {facts.not_a_tool}",
                ("A palette holds DecisionTool subclasses: pass the tool classes themselves",),
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


#: How a user opts out of a check the type checker cannot do, knowingly.
_RUNTIME_ONLY = (
    'or, to leave it to the runtime validator, add "# type: ignore[harness-undecidable]" here'
)


def unknown_entry_verdict(role: str, shown: str) -> Verdict:
    """A palette entry or key tool (``role``) whose type (``shown``, already quoted) is not one
    specific class, e.g. ``type[SplitNote]`` or a union: a type checker cannot prove it.

    The palette rules that need every entry (reachability, dead tools) are skipped then
    (``palette_verdicts(..., complete=False)``), never guessed; the runtime validator, which
    sees the classes, decides them when the thinker is built.
    """
    return Verdict(
        "harness-undecidable",
        shown,
        f"{role} of type {shown} is not one specific tool class: the palette cannot be proved "
        "legal at type-check time",
        (
            "Its subclasses (or the members of a union) may break any rule; reachability and "
            "dead tools are not judged while an entry is unknown",
            "Pass the tool classes themselves, in a tuple literal or a Final tuple constant, "
            + _RUNTIME_ONLY,
        ),
    )


def unseen_name_verdict(label: str, decorator: str, key: str = "") -> Verdict:
    """``label`` has no ``@tool_name`` a type checker can see, but another decorator
    (``decorator``, e.g. a library's wrapper of ``tool_name``) may name it at run time."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: its decorator "
        f"{_q(decorator)} may name it at run time, but it is not @tool_name",
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Stack @tool_name("...") under @{decorator} on the class (or have the decorator '
            "return tool_name(...)(cls) where the class is defined), " + _RUNTIME_ONLY,
        ),
        definition=True,
        key=key,
    )


def aliased_name_verdict(label: str, alias: str) -> Verdict:
    """A palette naming ``label`` (which has no ``@tool_name`` of its own) through the variable
    ``alias``, whose value a type checker cannot read there: a call such as
    ``alias = tool_name("...")(label)`` in another module may have named the class."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: the palette names it "
        f"through the variable {_q(alias)}, which a call such as "
        f'tool_name("...")({label}) may have named',
        (
            "Its name's validity and uniqueness in a palette are then only checked when a "
            "thinker is built",
            f'Write {alias} = tool_name("...")({label}) with a literal in the module that builds '
            f'the palette, or decorate the class with @tool_name("..."), ' + _RUNTIME_ONLY,
        ),
        key="",
    )


def container_entry_verdict(role: str, shown: str, how: str) -> Verdict:
    """A palette entry or key tool (``role``) read from a container or a call (``how``, e.g.
    'a dict' or 'a call'): a type checker sees the join of everything it could hold (``shown``),
    never which class it is."""
    return Verdict(
        "harness-undecidable",
        shown,
        f"{role} read from {how} cannot be proved at type-check time: the type checker only "
        f"sees {shown}",
        (
            "Its class may break any rule; reachability and dead tools are not judged while an "
            "entry is unknown",
            "Name the tool classes themselves, in a tuple literal or a Final tuple constant, "
            + _RUNTIME_ONLY,
        ),
    )


def overridable_entry_verdict(role: str, attribute: str) -> Verdict:
    """A palette entry, palette or key tool read from a class attribute a subclass may
    override (``self.SPLITTER``): the class it holds in a subclass is not known here."""
    return Verdict(
        "harness-undecidable",
        attribute,
        f"{role} read from the class attribute {_q(attribute)} cannot be proved at type-check "
        "time: a subclass may override it with another class",
        (
            "Reachability and dead tools are not judged while an entry is unknown",
            f'Declare it "{attribute}: Final = ..." (subclasses then cannot override it), or '
            "name the tool classes in the call, " + _RUNTIME_ONLY,
        ),
    )


def generic_input_verdict(shown: str) -> Verdict:
    """A palette checked where the thinker's input is still a type variable (a generic base
    thinker): reachability depends on what each subclass binds it to."""
    return Verdict(
        "harness-undecidable",
        shown,
        f"The thinker's input type {_q(shown)} is a type variable here: whether the key tool is "
        "reachable depends on what each subclass binds it to",
        (
            "Reachability and dead tools are judged for each subclass only when it is built",
            "Pass the palette from the class that binds the input (its own super().__init__), "
            + _RUNTIME_ONLY,
        ),
    )


def too_many_branches_verdict(limit: int) -> Verdict:
    """Conditional arguments with more than ``limit`` combinations of branches: not enumerated."""
    return Verdict(
        "harness-undecidable",
        "palette",
        f"The conditional key tool and palette have more than {limit} combinations of branches: "
        "the palette cannot be proved legal at type-check time",
        (
            "Choose among a few whole palettes (Final tuple constants) rather than entry by "
            "entry, " + _RUNTIME_ONLY,
        ),
    )


def undecidable_name_verdict(label: str, key: str = "") -> Verdict:
    """``@tool_name(...)`` on ``label`` with a name a type checker cannot read: neither a string
    literal nor a ``Final`` constant (an f-string, a call, a plain module variable)."""
    return Verdict(
        "harness-undecidable",
        label,
        f"The tool name of {_q(label)} cannot be read at type-check time: it is not a string "
        "literal or a Final constant",
        (
            "Its validity and uniqueness in a palette are then only checked when a thinker is "
            "built",
            'Write @tool_name("...") with a literal, or declare the constant NAME: Final = "...", '
            + _RUNTIME_ONLY,
        ),
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
    reachable: list[N] = _with_iterands(thinker_input)
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
) -> list[Verdict]:
    """Every verdict on a thinker's palette, in a stable order: per class (palette order, then
    the key tool once), duplicates, the key tool's output, reachability, dead tools, objective.

    ``input_members`` are the artifact classes of a union input (``Note | Orphan``, with
    ``thinker_input`` ``None``): a run starts from any one of them, so the key tool must be
    reachable from each, and a tool is dead when no member reaches it.

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
            out += tool_verdicts(facts)
    out += duplicate_verdicts(tools)
    if output_type is not None and key_tool.not_a_tool is None:
        verdict = key_output_verdict(key_tool, output_type)
        if verdict is not None:
            out.append(verdict)
    if thinker_input is not None and complete:
        reachable = reachable_types(thinker_input, tools)
        verdict = graph_verdict(key_tool, thinker_input, reachable)
        if verdict is not None:
            out.append(verdict)
        out += dead_tool_verdicts(tools, key_tool.key, thinker_input, reachable)
    elif input_members and complete:
        combined: list[N] = []
        for member in input_members:
            reachable = reachable_types(member, tools)
            verdict = graph_verdict(key_tool, member, reachable)
            if verdict is not None:
                out.append(verdict)
            for node in reachable:
                if not any(node.is_subtype_of(r) and r.is_subtype_of(node) for r in combined):
                    combined.append(node)
        shown = " | ".join(member.render() for member in input_members)
        out += dead_tool_verdicts(tools, key_tool.key, input_members[0], combined, shown)
    if objective is not None:
        verdict = objective_verdict(objective)
        if verdict is not None:
            out.append(verdict)
    return out

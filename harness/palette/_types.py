"""What the palette rules read and say: a type node, a tool's facts, a verdict.

The two front ends (the runtime validator over live classes, the mypy plugin over mypy's types)
build :class:`ToolFacts` over their own :class:`TypeNode` and read :class:`Verdict` back; an
open side of a tool is an :class:`Open`, worded alike from the same parts by both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Generic, Protocol, Self, TypeVar

__all__ = [
    "PLACEHOLDER",
    "N",
    "Open",
    "ToolFacts",
    "ToolSides",
    "TypeNode",
    "Verdict",
    "object_entry",
    "quoted",
    "subscripted_entry",
    "tool_instance_entry",
]

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
N_co = TypeVar("N_co", bound=TypeNode, covariant=True)


class ToolSides(Protocol[N_co]):
    """What reachability reads of a tool: its identity and its concrete sides (``None``: open
    or unknown). :class:`ToolFacts` is one; the mypy plugin's plain tools are another."""

    @property
    def key(self) -> str:
        """The class's identity (its full name)."""
        ...

    @property
    def input_node(self) -> N_co | None:
        """The concrete input type, when there is one."""
        ...

    @property
    def output_node(self) -> N_co | None:
        """The concrete output type, when there is one."""
        ...


def quoted(text: str) -> str:
    """``text`` in double quotes, as every message quotes names and types."""
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
        return cls("Any" if whole is None else f"Any in {quoted(whole)}")

    @classmethod
    def type_variable(cls, name: str, whole: str | None = None) -> Open:
        """A type variable ``name`` (as written, ``T``), itself or inside ``whole``."""
        shown = f"type variable {quoted(name)}"
        return cls(shown if whole is None else f"{shown} in {quoted(whole)}")

    @classmethod
    def not_an_artifact(cls, part: str, whole: str | None = None) -> Open:
        """A type that is not one artifact class, such as a union ``Part | Verdict``, itself or
        as the items of a list ``whole`` (``ListArtifact[Part | Verdict]``)."""
        inside = "" if whole is None else f" in {quoted(whole)}"
        return cls(f"{quoted(part)}{inside}, not one artifact class")

    @classmethod
    def new_type(cls, name: str, supertype: str) -> Open:
        """A ``NewType`` over an artifact class: a type checker's alias, no class at run time
        (nothing is ever an instance of it)."""
        return cls(f"{quoted(name)} is a NewType of {quoted(supertype)}, not a class at run time")

    @classmethod
    def type_checking_only(cls, name: str) -> Open:
        """A forward reference to a name imported only under ``if TYPE_CHECKING:``."""
        return cls(
            f"{quoted(name)} is imported only under TYPE_CHECKING, so it does not exist at run "
            "time",
            f'Import {quoted(name)} at module level (outside "if TYPE_CHECKING:"), so the tool\'s '
            "types exist when a thinker builds it",
        )


@dataclass(frozen=True)
class ToolFacts(Generic[N]):
    """What a front end knows about one tool class."""

    key: str  # identity of the class (its full name): the key tool counts once
    label: str  # how the class reads in a message
    not_a_tool: str | None = None  # why it is not a concrete tool class at all, if so
    not_a_tool_fix: str | None = None  # the fix then, when not the general one
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


def tool_instance_entry(class_name: str) -> tuple[str, str, str]:
    """(label, why, fix) of a tool *instance* passed where a tool class is wanted
    (``palette=(SplitNote(parent),)``): the thinker builds its tools itself."""
    return (
        f"{class_name}(...)",
        f"it is an instance of {quoted(class_name)}, not a class",
        f"A palette holds tool classes, which the thinker builds itself: pass {quoted(class_name)}",
    )


def object_entry(class_name: str) -> tuple[str, str]:
    """(label, why) of an object that is no class at all where a tool class is wanted
    (``palette=(functools.partial(SplitNote),)``); the general fix applies."""
    return f"{class_name}(...)", f"it is an instance of {quoted(class_name)}, not a class"


def subscripted_entry(shown: str) -> tuple[str, str, str]:
    """(label, why, fix) of a subscripted generic tool class (``JudgeText[Note]``): at run time
    it is a typing alias, not a class, and a thinker cannot build or name it."""
    subclass = re.sub(r"\W", "", shown)
    return (
        shown,
        "a subscripted generic class is not a class at run time",
        f'Bind its types in a subclass and pass that: @tool_name("...") on '
        f'"class {subclass}({shown})"',
    )

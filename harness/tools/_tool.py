"""Typed tools: ``DecisionTool[I, O]``, ``@tool_name`` and ``@tool_description``."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from harness.artifacts import Artifact
from harness.scope import Identifiable, Identity
from harness.tools._names import RESERVED_TOOL_NAMES, validate_tool_name

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = [
    "RESERVED_TOOL_NAMES",
    "DecisionTool",
    "tool_description",
    "tool_name",
    "validate_tool_name",
]

I_contra = TypeVar("I_contra", bound=Artifact, contravariant=True)
O_co = TypeVar("O_co", bound=Artifact, covariant=True)

NAME_ATTR = "__harness_tool_name__"
DESCRIPTION_ATTR = "__harness_tool_description__"


class DecisionTool(Generic[I_contra, O_co], abc.ABC):
    """A tool a decision thinker can apply: one artifact in, one artifact out.

    The input is contravariant and the output covariant. A tool a thinker instantiates by class
    keeps the single-argument ``(parent)`` constructor and carries ``@tool_name``.
    """

    read_only: ClassVar[bool] = True

    def __init__(self, parent: Identifiable) -> None:
        self._parent = parent

    @property
    def parent(self) -> Identifiable:
        return self._parent

    @property
    def identity(self) -> Identity:
        """A tool acts for its parent."""
        return self._parent.identity

    @abc.abstractmethod
    async def execute(self, input: I_contra, context: JobContext) -> O_co:
        """Run the tool on ``input``. Raise an ``LLMReadableError`` for a failure the model
        should read; anything else fails the run."""


_C = TypeVar("_C", bound=type[Any])  # any class: a non-tool is refused at run time, by name


class tool_name:
    """Names a tool: ``@tool_name("split_note")``. The name is what the model chooses by.

    A callable object (not a function) so the mypy plugin can check the decorated class.
    """

    def __init__(self, name: str) -> None:
        problem = validate_tool_name(name)
        if problem is not None:
            raise ValueError(
                f"{problem}: a tool name is an ASCII identifier (letters, digits and '_', not "
                "starting with a digit), not a Python keyword and not 'finish'"
            )
        self.name = name

    def __call__(self, cls: _C) -> _C:
        if not (isinstance(cls, type) and issubclass(cls, DecisionTool)):
            raise TypeError(
                f"@tool_name({self.name!r}) decorates {cls!r}, which is not a DecisionTool subclass"
            )
        setattr(cls, NAME_ATTR, self.name)
        return cls


class tool_description:
    """Describes a tool to the model; without it, the docstring's first line is used."""

    def __init__(self, description: str) -> None:
        if not description.strip():
            raise ValueError("a tool description must not be blank")
        self.description = " ".join(description.split())

    def __call__(self, cls: _C) -> _C:
        setattr(cls, DESCRIPTION_ATTR, self.description)
        return cls

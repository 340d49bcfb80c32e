"""A tool run as a job, so scope, admission and the record apply to it unchanged."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from harness.artifacts import Artifact, conforms
from harness.jobs import DEFAULT_UPSTREAM_RETRIES, Job, JobContext
from harness.thinker._durable import IdempotencyKey, TurnHooks
from harness.tools import NAME_ATTR, DecisionTool, Identifiable, tool_types

__all__ = ["DeclaresOutput", "ThinkerRun", "ToolRun"]

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the seed's name for a tool's input type
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed's name for a tool's output type


@runtime_checkable
class DeclaresOutput(Protocol):
    """A tool that says its product's type at run time, where its class's type arguments may be
    erased: a thinker built directly (``DecisionThinker[Note, Verdict](...)``) knows its answer's
    item type from its constructor. Declared here so the tool run needs nothing of the thinker
    module, which imports this one."""

    def declared_output(self) -> type[Artifact]:
        """The type the tool's product must conform to."""
        ...


class ToolRun(Job[O]):
    """Runs one tool on one artifact; the product must be of the tool's output type.

    ``name`` defaults to the name the tool's ``@tool_name`` gives, else its class name;
    ``turn_hooks`` are a durable run's hooks for a thinker's loop (the run API gives them to its
    top job, a :class:`ThinkerRun`; a tool run as a turn's move has none)."""

    kind: ClassVar[str] = "tool"

    def __init__(
        self,
        parent: Identifiable,
        tool: DecisionTool[I, O],
        input: I,
        *,
        name: str | None = None,
        upstream_retries: int = DEFAULT_UPSTREAM_RETRIES,
        timeout: float | None = None,
        idempotency_key: IdempotencyKey | None = None,
        turn_hooks: TurnHooks | None = None,
    ) -> None:
        super().__init__(parent, timeout=timeout, upstream_retries=upstream_retries)
        if name is None:
            name = str(type(tool).__dict__.get(NAME_ATTR, type(tool).__qualname__))
        _check_input(name, tool, input)
        self.tool: DecisionTool[Any, O] = tool  # the input type is checked just above
        self.input: Artifact = input
        self._name = name
        self.idempotency_key = idempotency_key
        """The same each time this turn's tool runs (see ``harness.idempotency_key``)."""
        self.turn_hooks = turn_hooks
        """A durable run's hooks for the thinker's loop (journal, replay, branch, approval)."""

    @property
    def tool_name(self) -> str | None:
        """The tool's name."""
        return self._name

    async def run(self, context: JobContext) -> O:
        """Execute the tool and check its product's type."""
        product = await self.tool.execute(self.input, context)
        output = self._declared_output()
        if not isinstance(product, Artifact) or not conforms(product, output):
            raise TypeError(
                f"tool {self._name!r} returned a {type(product).__qualname__}, not the "
                f"{getattr(output, '__name__', output)!s} its type declares"
            )
        return product

    def _declared_output(self) -> type[Artifact]:
        if isinstance(self.tool, DeclaresOutput):
            return self.tool.declared_output()
        return tool_types(type(self.tool))[1]


def _check_input(name: str, tool: DecisionTool[Any, Artifact], input: Artifact) -> None:
    try:
        takes, _ = tool_types(type(tool))
    except TypeError:
        return  # a thinker built directly has erased type arguments: its palette checks inputs
    if not isinstance(input, Artifact) or not conforms(input, takes):
        wanted = getattr(takes, "__name__", str(takes))
        raise TypeError(
            f"tool {name!r} takes a {wanted}, not a {type(input).__qualname__}: pass an input "
            "of the tool's input type"
        )


class ThinkerRun(ToolRun[O]):
    """A thinker (or any tool) run as the top job of a piece of work: no timeout by default,
    the name its ``@tool_name`` gives, else its class name; the run API gives it a durable run's
    ``turn_hooks``."""

    kind: ClassVar[str] = "thinker"

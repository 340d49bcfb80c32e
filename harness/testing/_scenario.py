"""Scenarios: artifact kinds, a palette over them and an input, as plain data built into classes.

A :class:`ScenarioSpec` is frozen, JSON-able data (so a scenario can be printed, stored and
rebuilt in another interpreter); :func:`build_scenario` turns it into real classes: each kind an
``attrs`` frozen :class:`~harness.artifacts.Artifact` subclass with its own alias, each tool a
``DecisionTool[I, O]`` subclass with ``@tool_name`` whose ``__orig_bases__`` carry its types, so
:func:`harness.tools.tool_types` and the palette rules read them as they read any user's tool.

Every tool is a pure function of its input's words: it rewrites them (``shift``), makes one
artifact or a list of up to :data:`MAX_ITEMS`, refuses an input mentioning ``refuses`` with
:class:`~harness.errors.InvalidInputError` (readable: a fact of the run) and crashes on one
mentioning ``crashes`` with :class:`PlantedCrash` (unreadable: it fails the run).
"""

from __future__ import annotations

import json  # the stdlib: ASCII escapes (ensure_ascii), which orjson cannot write
import types
from collections.abc import Callable, Sequence
from typing import Any, Final, Never, cast

import attrs
import cattrs

from harness.artifacts import Artifact, ListArtifact
from harness.decision._internal import load_json
from harness.errors import InvalidInputError
from harness.tools import DecisionTool, tool_name

__all__ = [
    "MAX_ITEMS",
    "SCENARIO_OBJECTIVE",
    "VOCABULARY",
    "KindSpec",
    "PlantedCrash",
    "ScenarioSpec",
    "ToolSpec",
    "TypeSpec",
    "build_kinds",
    "build_tool",
]

VOCABULARY: Final = ("alpha", "beta", "gamma", "delta", "omega")
"""The words artifacts' texts are made of (the tools' triggers are among them)."""

MAX_ITEMS: Final = 3
"""The most items a list-making tool makes."""

SCENARIO_OBJECTIVE: Final = "Keep the artifacts that answer the question"
"""The objective of every generated scenario's thinker."""

_converter = cattrs.Converter()


class PlantedCrash(RuntimeError):
    """The unreadable failure a generated tool raises on purpose: it fails the run."""


@attrs.frozen
class KindSpec:
    """An artifact kind: its alias (also its class name, in CamelCase) and its parent kind."""

    alias: str
    parent: int | None = None  # index of an earlier kind, None for a direct Artifact subclass


@attrs.frozen
class TypeSpec:
    """A tool's input or output type: kind ``kind``, or ``ListArtifact`` of it."""

    kind: int
    is_list: bool = False


@attrs.frozen
class ToolSpec:
    """A generated tool: ``name`` taking ``takes``, making ``makes``.

    ``product_kind`` is the class of what it makes (``makes.kind`` or a subclass of it);
    ``shift`` how it rewrites words; ``refuses``/``crashes`` the word on which it fails readably
    or unreadably (``None``: never).
    """

    name: str
    takes: TypeSpec
    makes: TypeSpec
    product_kind: int
    shift: int = 0
    refuses: str | None = None
    crashes: str | None = None


@attrs.frozen
class ScenarioSpec:
    """A whole scenario as data: kinds, palette (the key tool may be in it), key tool, output
    kind, the input's type and texts, the thinker's budget and threshold, the policy's seed.

    ``input_texts`` holds one text for a plain input, one per item for a list input.
    """

    kinds: tuple[KindSpec, ...]
    palette: tuple[ToolSpec, ...]
    key_tool: ToolSpec
    output_kind: int
    input_type: TypeSpec
    input_texts: tuple[str, ...]
    max_turns: int = 6
    threshold: float = 0.5
    policy_seed: int = 0

    def to_json(self) -> str:
        """The spec as compact JSON (:meth:`from_json` reads it back)."""
        return json.dumps(_converter.unstructure(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> ScenarioSpec:
        """Read a spec written by :meth:`to_json`."""
        return _converter.structure(load_json(text), cls)

    def describe(self) -> str:
        """The scenario in a few lines, as a failing example shows it."""

        def kind(index: int) -> str:
            return _class_name(self.kinds[index].alias)

        def shown(tp: TypeSpec) -> str:
            return f"ListArtifact[{kind(tp.kind)}]" if tp.is_list else kind(tp.kind)

        lines = [
            "kinds: "
            + ", ".join(
                f"{kind(i)}({kind(k.parent) if k.parent is not None else 'Artifact'})"
                for i, k in enumerate(self.kinds)
            )
        ]
        for index, tool in enumerate((*self.palette, self.key_tool)):
            role = "key tool" if index == len(self.palette) else "tool"
            if role == "tool" and tool == self.key_tool:
                lines.append(f"tool {tool.name}: the key tool, listed in the palette")
                continue
            fails = "".join(
                f", {what} on {word!r}"
                for what, word in (("refuses", tool.refuses), ("crashes", tool.crashes))
                if word is not None
            )
            lines.append(
                f"{role} {tool.name}: {shown(tool.takes)} -> {shown(tool.makes)} "
                f"(makes {kind(tool.product_kind)}, shift {tool.shift}{fails})"
            )
        lines.append(f"input: {shown(self.input_type)} {list(self.input_texts)!r}")
        lines.append(
            f"output: {kind(self.output_kind)}; max_turns {self.max_turns}, threshold "
            f"{self.threshold}, policy seed {self.policy_seed}"
        )
        return "\n".join(lines)


def _filled_with(body: dict[str, object]) -> Callable[[dict[str, Any]], None]:
    """A ``types.new_class`` body callback putting ``body`` in the class namespace."""

    def fill(namespace: dict[str, Any]) -> None:  # a class namespace holds anything
        namespace.update(body)

    return fill


def _class_name(alias: str) -> str:
    return "".join(part.capitalize() for part in alias.split("_"))


def build_kinds(kinds: Sequence[KindSpec]) -> tuple[type[Artifact], ...]:
    """Real ``attrs`` frozen artifact classes for ``kinds``, in order.

    A root kind has one field ``text: str``; a subclass adds ``depth: int`` (defaulting to its
    depth in the hierarchy), so its JSON digest differs from its parent's.
    """
    classes: list[type[Artifact]] = []
    depths: list[int] = []
    for spec in kinds:
        if spec.parent is None:
            base: type[Artifact] = Artifact
            depth = 0
            body: dict[str, object] = {"__annotations__": {"text": str}}
        else:
            base = classes[spec.parent]
            depth = depths[spec.parent] + 1
            body = {"__annotations__": {"depth": int}, "depth": attrs.field(default=depth)}
        name = _class_name(spec.alias)
        body.update(__module__=__name__, __qualname__=name, __doc__=f"A generated {spec.alias}.")
        cls = types.new_class(name, (base,), {"alias": spec.alias}, _filled_with(body))
        classes.append(attrs.frozen(cls))
        depths.append(depth)
    return tuple(classes)


def runtime_type(tp: TypeSpec, kinds: Sequence[type[Artifact]]) -> type[Artifact]:
    """The live type a :class:`TypeSpec` names: a kind class or ``ListArtifact[kind]``."""
    cls = kinds[tp.kind]
    return cast("type[Artifact]", ListArtifact[cls]) if tp.is_list else cls  # type: ignore[valid-type]


def words_of(artifact: Artifact) -> list[str]:
    """The words of a generated artifact: its text's, or its items' one after the other."""
    if isinstance(artifact, ListArtifact):
        return [word for item in artifact.iterands for word in words_of(item)]
    text = getattr(artifact, "text", "")
    return str(text).split()


def _rewrite(words: Sequence[str], shift: int) -> str:
    out = []
    for word in words[:3]:
        index = VOCABULARY.index(word) if word in VOCABULARY else 0
        out.append(VOCABULARY[(index + shift) % len(VOCABULARY)])
    return " ".join(out)


def apply_tool(spec: ToolSpec, product: type[Artifact], input: Artifact) -> Artifact:
    """What the tool ``spec`` makes of ``input`` (or the failure it raises), deterministically."""
    words = words_of(input)
    if spec.crashes is not None and spec.crashes in words:
        raise PlantedCrash(f"{spec.name} crashed on an input mentioning {spec.crashes!r}")
    if spec.refuses is not None and spec.refuses in words:
        raise InvalidInputError(
            "input", " ".join(words), f"{spec.name} refuses anything mentioning {spec.refuses!r}"
        )
    make = cast(Any, product)  # a generated kind: text=..., built at run time
    if not spec.makes.is_list:
        return cast(Artifact, make(text=_rewrite(words, spec.shift)))
    count = (len(words) + spec.shift) % (MAX_ITEMS + 1)
    items = [make(text=_rewrite(words[i:] + words[:i], spec.shift + i)) for i in range(count)]
    return ListArtifact.of(product, items)


def build_tool(
    spec: ToolSpec, kinds: Sequence[type[Artifact]]
) -> type[DecisionTool[Never, Artifact]]:
    """A real ``DecisionTool[I, O]`` subclass for ``spec``, named with ``@tool_name``."""
    takes = runtime_type(spec.takes, kinds)
    makes = runtime_type(spec.makes, kinds)
    product = kinds[spec.product_kind]

    async def execute(self: object, input: Artifact, context: object) -> Artifact:
        return apply_tool(spec, product, input)

    name = _class_name(spec.name)
    body: dict[str, object] = {
        "execute": execute,
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"Generated tool {spec.name}: rewrites its input's words (shift {spec.shift}).",
    }
    base = cast(Any, DecisionTool)[takes, makes]  # parameterised at run time
    cls = types.new_class(name, (base,), {}, _filled_with(body))
    return cast("type[DecisionTool[Never, Artifact]]", tool_name(spec.name)(cls))

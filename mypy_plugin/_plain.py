"""The common case of both checks, proved fine without building facts or verdicts.

Most tools are plain: a concrete class whose one base is ``DecisionTool[I, O]`` with concrete
artifact types, a literal ``@tool_name`` of its own, the inherited constructor. Most palettes
are plain too: the key tool and every entry plain tools named as written (or a tuple constant of
them), a thinker input of one artifact class. For those the rules reduce to a few questions (a
valid name, unique names, the key tool's output, every tool fed); when each answer is "no rule
broken" there is nothing to report, and the checks return without building ``ToolFacts``,
``Verdict`` objects or messages. Anything else, or any answer that could be a verdict, falls
back to the general check, which finds and words it (so the verdicts are the general path's
by construction). Where fine-grained dependencies are wanted, the caller records what the
general check would (the same classes and members); the daemon, which updates classes in place,
reads each class afresh (nothing is remembered).
"""

from __future__ import annotations

from mypy.nodes import (
    CallExpr,
    ClassDef,
    IndexExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.options import Options
from mypy.types import Instance, TupleType, get_proper_type

from harness.tools import validate_tool_name
from mypy_plugin._arguments import Site, class_of, instance_of_class_type, literal_text
from mypy_plugin._facts import MypyType, artifact_side
from mypy_plugin._memo import FACTS_LIMIT
from mypy_plugin._memo import PLAIN as _PLAIN
from mypy_plugin._names import DATACLASS_INIT_KEY, DECISION_TOOL, METADATA_KEY, TOOL_NAME

__all__ = ["PlainTool", "plain_definition_fine", "plain_palette_fine", "plain_tool"]


class PlainTool:
    """A tool that breaks none of its own rules, with what a palette asks of it."""

    __slots__ = ("feeds", "info", "input_node", "key", "name", "output_node", "wants")

    info: TypeInfo
    key: str
    name: str
    input_node: MypyType
    output_node: MypyType
    #: The full name a reachable type must have among its bases to feed the tool, ``None`` when
    #: the general reachability must decide (an input that is not nominal, or a list).
    wants: str | None
    #: What running the tool makes reachable (see :func:`_reachable_bases`), ``None`` when the
    #: general reachability must decide.
    feeds: frozenset[str] | None

    def __init__(
        self, info: TypeInfo, name: str, input_node: MypyType, output_node: MypyType
    ) -> None:
        self.info = info
        self.key = info.fullname
        self.name = name
        self.input_node = input_node
        self.output_node = output_node
        nominal = input_node.nominal
        self.wants = nominal if nominal is not None and input_node.iterand() is None else None
        self.feeds = _reachable_bases(output_node)


def plain_tool(info: TypeInfo, options: Options) -> PlainTool | None:
    """The class as a plain tool, or ``None`` when any of its facts asks for the general check
    (found once per class and options within a build; the daemon reads it afresh each time)."""
    known = _PLAIN.get(info)  # never filled in the daemon
    if known is not None and known[0] is options:
        found: PlainTool | None = known[1]  # what this function stored for the class
        return found
    return _read_and_keep(info, options)


def _read_and_keep(info: TypeInfo, options: Options) -> PlainTool | None:
    """:func:`_read_plain`, kept for the rest of the build (not in the daemon)."""
    tool = _read_plain(info, options)
    if not options.fine_grained_incremental:
        if len(_PLAIN) >= FACTS_LIMIT:
            _PLAIN.clear()
        _PLAIN[info] = (options, tool)
    return tool


def _read_plain(info: TypeInfo, options: Options) -> PlainTool | None:
    """What ``_facts._read_facts`` reads, where each fact is the one that breaks no rule: its
    own literal name (valid), its one base ``DecisionTool[I, O]`` (no type variables of its
    own, so the base is the mapping) with both sides concrete, not abstract, the inherited
    constructor (``DecisionTool``'s own: not its own ``__init__``, no fieldless ``@dataclass``
    writing one)."""
    metadata = info.metadata
    record = metadata.get(METADATA_KEY)
    if record is None or DATACLASS_INIT_KEY in metadata:
        return None
    name = record.get("name")  # the record is a dict
    if not isinstance(name, str):
        return None
    bases = info.bases
    if len(bases) != 1 or info.type_vars or info.is_abstract or "__init__" in info.names:
        return None
    base = bases[0]
    args = base.args
    if len(args) != 2 or base.type.fullname != DECISION_TOOL:
        return None
    input_side = artifact_side(args[0], options)
    output_side = artifact_side(args[1], options)
    if not isinstance(input_side, MypyType) or not isinstance(output_side, MypyType):
        return None
    if validate_tool_name(name) is not None:
        return None
    return PlainTool(info, name, input_side, output_side)


def plain_definition_fine(defn: ClassDef, options: Options) -> bool:
    """Whether the definition check has nothing to report on ``defn``: one decorator, a
    ``@tool_name(...)`` call, no quoted type in its one base, and a plain tool."""
    decorators = defn.decorators
    exprs = defn.base_type_exprs
    if len(decorators) != 1 or len(exprs) != 1:
        return False
    call = decorators[0]
    base = exprs[0]
    if not isinstance(call, CallExpr) or not isinstance(base, IndexExpr):
        return False
    callee = call.callee
    if not isinstance(callee, RefExpr) or callee.fullname != TOOL_NAME:
        return False
    index = base.index
    if not isinstance(index, TupleExpr):
        return False
    for item in index.items:
        if isinstance(item, StrExpr):
            return False  # a quoted type: the general check reads its imports
    return _read_and_keep(defn.info, options) is not None  # read here first, in most builds


def _class_named(expr: object) -> TypeInfo | None:
    """The class a name written as is refers to (a palette entry, the key tool)."""
    node = expr.node if isinstance(expr, NameExpr) else None
    return node if isinstance(node, TypeInfo) else None


def plain_palette_fine(site: Site) -> list[PlainTool] | None:
    """The palette's tools (the key tool last) when the palette check has nothing to report at
    ``site``: a plain palette (see the module) whose tools have unique names, whose key tool
    produces a list of the thinker's output type and is fed like every other tool, and whose
    objective is not blank; else ``None``."""
    ctx = site.ctx
    options = ctx.api.options
    args = site.thinker_args
    if args is None or len(args) != 2:
        return None
    declared = get_proper_type(args[0])
    if not isinstance(declared, Instance):
        return None
    thinker_input = artifact_side(declared, options)
    if not isinstance(thinker_input, MypyType):
        return None
    key_type, key_expr = site.argument("key_tool")
    palette_type, palette_expr = site.argument("palette")
    if key_type is None or palette_type is None:
        return None
    key_info = _class_named(key_expr)
    if key_info is None or class_of(key_type) is not key_info:
        return None
    key = plain_tool(key_info, options)
    if key is None:
        return None
    palette = get_proper_type(palette_type)
    if not isinstance(palette, TupleType):
        return None
    items = palette.items
    if isinstance(palette_expr, TupleExpr):
        written = palette_expr.items
        if len(written) != len(items):
            return None
    elif isinstance(palette_expr, NameExpr):
        written = None
    else:
        return None
    if written is not None:  # a class named as written is that class (its type is the class's)
        infos = [_class_named(entry) for entry in written]
    else:
        infos = [class_of(item) for item in items]
    key_name = key.key
    names = {key.name: key_name}  # name -> key of the tool holding it
    tools: list[PlainTool] = []
    for info in infos:
        if info is None:
            return None
        tool = plain_tool(info, options)
        if tool is None:
            return None
        held = tool.key
        if held != key_name:
            if names.setdefault(tool.name, held) != held:
                return None  # a duplicate name
            tools.append(tool)
    tools.append(key)  # after the others, as the rules fold it in
    output_type, _ = site.argument("output_type")
    asked = instance_of_class_type(output_type) if output_type is not None else None
    if asked is not None:
        wanted = artifact_side(asked, options)
        if isinstance(wanted, MypyType):
            produced = key.output_node.iterand()
            if produced is None or not produced.is_subtype_of(wanted):
                return None
    objective_type, objective_expr = site.argument("objective")
    objective = literal_text(objective_type, objective_expr)
    if objective is not None and not objective.strip():
        return None
    return tools if _every_tool_fed(thinker_input, tools) else None


def _reachable_bases(node: MypyType) -> frozenset[str] | None:
    """What a type makes reachable when it is produced: the full names a reachable plain
    artifact is an instance of, those of the type at the bottom of its list iterands (a list
    feeds only a tool taking a list, and a plain palette has none); ``None`` when that type is
    not nominal (see :attr:`MypyType.nominal`), whose subtypes the general reachability asks
    mypy about."""
    current = node
    inner = current.iterand()
    while inner is not None:
        current = inner
        inner = current.iterand()
    return current.bases if current.nominal is not None else None


def _every_tool_fed(start: MypyType, tools: list[PlainTool]) -> bool:
    """Whether reachability (``harness.palette._graph.reach``) feeds every tool, for tools each
    taking one nominal plain artifact class: a tool is fed when its input's name is among the
    bases of a reachable type (the answer of the nominal subtype check), and what it produces
    becomes reachable, until nothing changes. ``False`` also when the general reachability
    must decide (a type that is not nominal, a tool taking a list)."""
    fed = _reachable_bases(start)
    if fed is None:
        return False
    bases = set(fed)
    waiting = tools
    while waiting:
        still: list[PlainTool] = []
        for tool in waiting:
            wants, feeds = tool.wants, tool.feeds
            if wants is None or feeds is None:
                return False  # the general reachability decides
            if wants in bases:
                bases |= feeds
            else:
                still.append(tool)
        if len(still) == len(waiting):
            return False  # no tool fed in a whole pass: the rest never will be
        waiting = still
    return True

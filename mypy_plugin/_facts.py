"""Tool facts read from mypy's types, for the shared palette rules.

Why the plugin needs this: mypy does not compare constructors for ``type[...]`` arguments, does
not see decorators, and accepts ``Any`` or an open type variable in a tool's base. The facts the
rules need (own name, constructor, bound ``I`` and ``O``) are read here from a class's
``TypeInfo`` the same way the runtime reads them from the live class.

One concern, past 400 lines: a tool's facts and the type node the rules ask about, read from
mypy's types as the runtime reads them from live classes (each fact beside how it is read).
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy.checkexpr import has_any_type
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type_bare
from mypy.nodes import (
    ARG_NAMED,
    ARG_OPT,
    ARG_POS,
    ARG_STAR,
    ClassDef,
    Decorator,
    FuncDef,
    OverloadedFuncDef,
    Statement,
    TypeInfo,
)
from mypy.options import Options
from mypy.subtypes import is_subtype
from mypy.typeops import get_all_type_vars
from mypy.types import (
    TYPED_NAMEDTUPLE_NAMES,
    AnyType,
    CallableType,
    Instance,
    Type,
    TypeVarType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

from harness.palette._rules import Open, ToolFacts, Verdict, tool_verdicts
from mypy_plugin._memo import FACTS as _FACTS
from mypy_plugin._memo import FACTS_LIMIT
from mypy_plugin._memo import NODES as _NODES
from mypy_plugin._memo import VERDICTS as _VERDICTS
from mypy_plugin._names import (
    DATACLASS_INIT_KEY,
    DECISION_TOOL,
    LIST_ARTIFACT,
    METADATA_KEY,
    OTHER_DECORATORS_KEY,
    WRITTEN_INIT_KEY,
)

__all__ = [
    "MypyType",
    "artifact_side",
    "ctor_problem",
    "facts_of",
    "own_name_record",
    "own_verdicts",
    "tool_base",
    "written_init",
]


class MypyType:
    """A type node over a mypy ``Instance`` (a plain class with slots: reachability builds and
    compares many, and a frozen dataclass's constructor is several times dearer)."""

    __slots__ = ("_iterand", "_iterand_found", "bases", "nominal", "options", "typ")

    typ: Instance
    options: Options
    #: The class's full name when subtyping it is nominal and nothing else (set on creation):
    #: a class without type arguments, not a protocol or a ``NamedTuple``, no ``Any`` among its
    #: bases, no promotion (``int`` to ``float``) in its MRO. Between two such classes, mypy's
    #: ``is_subtype`` is whether the right one is in the left one's MRO (its ``visit_instance``
    #: with no arguments to compare), which most artifact classes are: reachability asks it for
    #: every pair of types a palette can hold.
    nominal: str | None
    #: The full names of the class's MRO and ``builtins.object``, when :attr:`nominal`.
    bases: frozenset[str]
    _iterand: MypyType | None  # the iterand, once ``_iterand_found``
    _iterand_found: bool

    def __init__(self, typ: Instance, options: Options) -> None:
        self.typ = typ
        self.options = options
        self.nominal = nominal = _nominal(typ)
        self.bases = (
            frozenset([*(base.fullname for base in typ.type.mro), "builtins.object"])
            if nominal is not None
            else frozenset()
        )
        self._iterand = None
        self._iterand_found = False

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MypyType) and self.typ == other.typ and self.options is other.options
        )

    def __hash__(self) -> int:
        return hash((self.typ, id(self.options)))

    def __repr__(self) -> str:
        return f"MypyType({self.typ!r})"

    def is_subtype_of(self, other: MypyType) -> bool:
        """mypy's own subtype check (``ListArtifact`` is covariant); between two plain classes
        (see :attr:`nominal`), the answer mypy's check comes to, without building it. A node is
        a subtype of itself (the nodes of plain classes are shared within a build)."""
        if other is self:
            return True
        theirs = other.nominal
        if theirs is not None and self.nominal is not None:
            return theirs in self.bases  # ``has_base``, or ``object``
        return is_subtype(self.typ, other.typ)

    def iterand(self) -> MypyType | None:
        """``X`` of ``ListArtifact[X]``, also through a subclass of a parameterised list (found
        once per node: reachability asks every node about it for every tool)."""
        if not self._iterand_found:
            self._iterand = self._find_iterand()
            self._iterand_found = True
        return self._iterand

    def _find_iterand(self) -> MypyType | None:
        for base in self.typ.type.mro:
            if base.fullname == LIST_ARTIFACT:
                mapped = map_instance_to_supertype(self.typ, base)
                arg = get_proper_type(mapped.args[0]) if mapped.args else None
                return MypyType(arg, self.options) if isinstance(arg, Instance) else None
        return None

    def render(self) -> str:
        """The type as mypy prints it."""
        return format_type_bare(self.typ, self.options)


def _nominal(typ: Instance) -> str | None:
    """See :attr:`MypyType.nominal`."""
    info = typ.type
    if (
        typ.args
        or info.type_vars
        or info.is_protocol
        or info.fallback_to_any
        or info.alt_promote is not None
        or info.fullname in TYPED_NAMEDTUPLE_NAMES
    ):
        return None
    for base in info.mro:
        if base._promote:
            return None
    return info.fullname


def artifact_side(typ: Type, options: Options) -> MypyType | Open:
    """A concrete artifact type, or why it is open."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and not proper.args and not proper.type.is_newtype:
        return _plain_node(proper, options)  # most artifact types: nothing to be open about
    if isinstance(proper, AnyType):
        return Open.any()
    if isinstance(proper, TypeVarType):
        if proper.has_default():  # PEP 696: an unbound type variable is its default
            return artifact_side(proper.default, options)
        return Open.type_variable(proper.name)
    if not isinstance(proper, Instance):
        return Open.not_an_artifact(format_type_bare(proper, options))
    if proper.type.is_newtype and proper.type.bases:
        supertype = format_type_bare(proper.type.bases[0], options)
        return Open.new_type(proper.type.name, supertype)
    if not proper.args:  # most artifact types: no argument can hold Any or a type variable
        return MypyType(proper, options)
    if has_any_type(proper):
        return Open.any(format_type_bare(proper, options))
    variables = get_all_type_vars(proper)
    if variables:
        return Open.type_variable(variables[0].name, format_type_bare(proper, options))
    union = _union_item(proper)
    if union is not None:
        return Open.not_an_artifact(
            format_type_bare(union, options), format_type_bare(proper, options)
        )
    return MypyType(proper, options)


def _plain_node(typ: Instance, options: Options) -> MypyType:
    """The node of a class without type arguments, one per class within a build (a tool's
    output is the next tool's input: one node, its iterand and subtype answers found once);
    the daemon, which updates classes in place, builds one per use."""
    if (
        options.fine_grained_incremental
        or typ.last_known_value is not None
        or typ.extra_attrs is not None
    ):
        return MypyType(typ, options)
    known: MypyType | None = _NODES.get(typ.type)
    if known is not None and known.options is options:
        return known
    node = MypyType(typ, options)
    if len(_NODES) >= FACTS_LIMIT:
        _NODES.clear()
    _NODES[typ.type] = node
    return node


def _union_item(typ: Instance) -> UnionType | None:
    """The union a list holds as its items (``Note | Part`` of ``ListArtifact[Note | Part]``,
    also in a list of lists): no one artifact class, as the runtime reads it too."""
    current: Instance | None = typ
    while current is not None:
        base = next((b for b in current.type.mro if b.fullname == LIST_ARTIFACT), None)
        if base is None:
            return None
        mapped = map_instance_to_supertype(current, base)
        item = get_proper_type(mapped.args[0]) if mapped.args else None
        if isinstance(item, UnionType):
            return item
        current = item if isinstance(item, Instance) else None
    return None


def tool_base(info: TypeInfo) -> TypeInfo | None:
    """``DecisionTool``'s ``TypeInfo`` when ``info`` is a tool class."""
    for base in info.mro:
        if base.fullname == DECISION_TOOL:
            return base
    return None


def _self_instance(info: TypeInfo) -> Instance:
    filled = fill_typevars(info)
    if isinstance(filled, Instance):
        return filled
    return Instance(info, list(info.defn.type_vars))  # a tuple-based class: its own instance


def tool_sides(
    info: TypeInfo, options: Options, base: TypeInfo | None = None
) -> tuple[MypyType | Open, MypyType | Open]:
    """The tool's ``I`` and ``O`` as seen from its own class (type variables left open);
    ``base``: ``DecisionTool``'s ``TypeInfo`` when the caller found it already."""
    base = base if base is not None else tool_base(info)
    if base is None:
        return Open("not a tool"), Open("not a tool")
    bases = info.bases
    if len(bases) == 1 and bases[0].type is base and not info.type_vars:
        mapped = bases[0]  # ``class T(DecisionTool[I, O])``: its one base is the mapping
    else:
        mapped = map_instance_to_supertype(_self_instance(info), base)
    if len(mapped.args) != 2:
        return Open("Any"), Open("Any")
    return artifact_side(mapped.args[0], options), artifact_side(mapped.args[1], options)


def _init_of(info: TypeInfo) -> FuncDef | list[FuncDef] | None:
    """The constructor the runtime calls (see :func:`_runnable`)."""
    return _runnable(info.get_method("__init__"))


def written_init(defn: ClassDef) -> FuncDef | list[FuncDef] | None:
    """The ``__init__`` the class body writes (the last one written wins, as at run time), as
    :func:`_runnable` reads it, or ``None``."""
    found: Statement | None = None
    for statement in defn.defs.body:
        if (
            isinstance(statement, FuncDef | OverloadedFuncDef | Decorator)
            and statement.name == "__init__"
        ):
            found = statement
    return _runnable(found)


def _runnable(node: object) -> FuncDef | list[FuncDef] | None:
    """Of a constructor: a plain ``__init__``; of an overloaded one, its implementation (what
    runs), else its overloads (a stub: any one will do)."""
    if isinstance(node, Decorator):
        node = node.func
    if isinstance(node, OverloadedFuncDef):
        impl = node.impl.func if isinstance(node.impl, Decorator) else node.impl
        if isinstance(impl, FuncDef):
            return impl
        items = [i.func if isinstance(i, Decorator) else i for i in node.items]
        return [i for i in items if isinstance(i, FuncDef)] or None
    return node if isinstance(node, FuncDef) else None


def _ctor_of(node: FuncDef) -> str | None:
    kinds = node.arg_kinds[1:]
    names = [name or "_" for name in node.arg_names[1:]]
    positional_slots = sum(kind in (ARG_POS, ARG_OPT, ARG_STAR) for kind in kinds)
    required = sum(kind == ARG_POS for kind in kinds)
    if positional_slots >= 1 and required <= 1 and ARG_NAMED not in kinds:
        return None
    return f"its constructor takes ({', '.join(names)})"


def _fieldless_dataclass_init(info: TypeInfo) -> str | None:
    """``@dataclass`` on a class with no fields and no ``__init__`` of its own: at run time it
    writes ``__init__(self)``, which takes no parent; mypy adds no ``__init__`` then (it keeps
    the inherited one), so the runtime's constructor is read here."""
    if DATACLASS_INIT_KEY not in info.metadata:
        return None
    own = info.names.get("__init__")
    if own is not None and not own.plugin_generated:
        return None
    fields = info.metadata.get("dataclass", {}).get("attributes")
    return "its constructor takes ()" if fields == [] else None


def ctor_problem(node: FuncDef | list[FuncDef] | None) -> str | None:
    """Why ``Tool(parent)`` does not build the class whose constructor is ``node`` (see
    :func:`_init_of`), or ``None``."""
    if node is None:
        return None  # unknown: trust it
    if isinstance(node, list):
        problems = [_ctor_of(item) for item in node]
        return None if any(p is None for p in problems) else problems[0]
    return _ctor_of(node)


def narrow_parent(
    node: FuncDef | list[FuncDef] | None, root: object, options: Options
) -> str | None:
    """The type of the constructor's ``parent`` when ``Identifiable`` is not a subtype of it
    (the tool cannot be built for every parent); read from the constructor the runtime calls
    (``node``), against ``DecisionTool``'s own (``root``)."""
    if node is None or isinstance(node, list):
        return None
    own = node.type
    root_type = root.type if isinstance(root, FuncDef) else None
    if not isinstance(own, CallableType) or not isinstance(root_type, CallableType):
        return None
    if len(own.arg_types) < 2 or len(root_type.arg_types) < 2:
        return None
    wanted, identifiable = own.arg_types[1], root_type.arg_types[1]
    if is_subtype(identifiable, wanted):
        return None
    return format_type_bare(wanted, options)


def execute_hints(info: TypeInfo, options: Options) -> tuple[str | None, str | None]:
    """``execute``'s input and return annotations, rendered, when each is a concrete artifact
    type (the fix for an open type parameter is built from them); ``None`` otherwise."""
    node = info.get_method("execute")
    if isinstance(node, Decorator):
        node = node.func
    if not isinstance(node, FuncDef) or not isinstance(node.type, CallableType):
        return None, None
    typ = node.type
    returned = get_proper_type(typ.ret_type)
    if (
        node.is_coroutine
        and isinstance(returned, Instance)
        and returned.type.fullname == "typing.Coroutine"
        and len(returned.args) == 3
    ):
        returned = get_proper_type(returned.args[2])  # async def: mypy wraps what it returns
    taken = typ.arg_types[1] if len(typ.arg_types) > 1 else None
    shown: list[str | None] = []
    for side_type in (taken, returned):
        side = artifact_side(side_type, options) if side_type is not None else None
        shown.append(side.render() if isinstance(side, MypyType) else None)
    return shown[0], shown[1]


def own_name_record(info: TypeInfo) -> dict[str, object] | None:
    """What the ``@tool_name`` hook recorded on this very class (never a parent's)."""
    record = info.metadata.get(METADATA_KEY)
    return record if isinstance(record, dict) and "name" in record else None


def facts_of(info: TypeInfo, options: Options) -> ToolFacts[MypyType]:
    """The facts of one tool class, for the shared rules (read once per build and options,
    outside the daemon)."""
    if options.fine_grained_incremental:
        return _read_facts(info, options)
    key = (id(info), id(options))
    known = _FACTS.get(key)
    if known is not None and known[0] is info and known[1] is options:
        remembered: ToolFacts[MypyType] = known[2]  # what this function stored under the key
        return remembered
    facts = _read_facts(info, options)
    if len(_FACTS) >= FACTS_LIMIT:
        _FACTS.clear()
    _FACTS[key] = (info, options, facts)
    return facts


def _read_facts(info: TypeInfo, options: Options) -> ToolFacts[MypyType]:
    """The facts of one tool class, read from its ``TypeInfo``."""
    label = info.name
    base = tool_base(info)
    if base is None:
        return ToolFacts(info.fullname, label, not_a_tool="it is not a DecisionTool subclass")
    record = own_name_record(info)
    name = record.get("name") if record is not None else None
    unseen: str | None = None
    inherited: tuple[str, str] | None = None
    if record is None:  # most tools have their own @tool_name
        others = info.metadata.get(OTHER_DECORATORS_KEY, {}).get("decorators")
        unseen = str(others[0]) if isinstance(others, list) and others else None
        for parent in info.mro[1:]:
            parent_record = own_name_record(parent)
            if parent_record is not None and isinstance(parent_record.get("name"), str):
                inherited = (str(parent_record["name"]), parent.name)
                break
    input_side, output_side = tool_sides(info, options, base)
    init = _init_of(info)
    root = base.get_method("__init__")
    inherited_root = init is root  # most tools: DecisionTool's own constructor, which is legal
    written = info.metadata.get(WRITTEN_INIT_KEY)
    if written is not None:  # attrs keeps the class's own __init__, mypy's plugin replaced it
        ctor, narrow = written.get("ctor"), None  # its shape, recorded; its types are not kept
    else:
        ctor = _fieldless_dataclass_init(info) or (None if inherited_root else ctor_problem(init))
        narrow = None if inherited_root else narrow_parent(init, root, options)
    abstract = (
        tuple(sorted(name for name, _ in info.abstract_attributes)) if info.is_abstract else ()
    )
    return ToolFacts(
        key=info.fullname,
        label=label,
        abstract=abstract,
        name=name if isinstance(name, str) else None,
        inherited_from=inherited,
        ctor=ctor,
        narrow_parent=narrow,
        unseen_decorator=unseen,
        input=input_side,
        output=output_side,
        execute_hints=execute_hints(info, options)
        if isinstance(input_side, Open) or isinstance(output_side, Open)
        else (None, None),
    )


def own_verdicts(facts: ToolFacts[MypyType]) -> Sequence[Verdict]:
    """:func:`~harness.palette._rules.tool_verdicts` of remembered facts, found once per build
    (the definition check and every palette holding the class ask for the same); a tuple, so
    the one remembered answer is handed out as it is."""
    known = _VERDICTS.get(id(facts))
    if known is not None and known[0] is facts:
        remembered: tuple[Verdict, ...] = known[1]  # what this function stored under the key
        return remembered
    found = tuple(tool_verdicts(facts))
    if len(_VERDICTS) >= FACTS_LIMIT:
        _VERDICTS.clear()
    _VERDICTS[id(facts)] = (facts, found)
    return found

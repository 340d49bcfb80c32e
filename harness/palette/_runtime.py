"""The runtime front end of the palette rules: facts read from live classes.

Python erases generics, so nothing but this validator proves a palette legal for users of a type
checker without the plugin (pyright, basedpyright) or of no checker at all. The thinker calls
:func:`validate_palette` from its constructor; the verdicts are the mypy plugin's, code for code.

One concern, past 400 lines: the facts of live classes in the rules' terms (a tool's input and
output read through its generic bases, its name, its constructor), every one the validator needs.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType, UnionType
from typing import (
    Any,
    Final,
    NewType,
    ParamSpec,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from harness.artifacts import Artifact, ListArtifact
from harness.errors import HarnessError
from harness.palette._rules import (
    Open,
    ToolFacts,
    Verdict,
    object_entry,
    palette_shape_verdict,
    palette_verdicts,
    reachable_types,
    subscripted_entry,
    tool_instance_entry,
)
from harness.palette._undecidable import unknown_input_verdict
from harness.scope import Identifiable
from harness.tools import NAME_ATTR, DecisionTool, declared_tool_types, list_iterand, open_type_part

__all__ = [
    "PaletteError",
    "PaletteReport",
    "RuntimeType",
    "palette_report",
    "runtime_facts",
    "thinker_input_of",
    "type_text",
    "validate_palette",
]


@dataclass(frozen=True)
class RuntimeType:
    """A type node over a live type: an artifact class or a parameterised ``ListArtifact``."""

    tp: type

    @property
    def cls(self) -> type:
        """The class behind the type (the origin of ``ListArtifact[X]``)."""
        origin = getattr(self.tp, "__origin__", None)
        return origin if isinstance(origin, type) else self.tp

    def iterand(self) -> RuntimeType | None:
        """``X`` of ``ListArtifact[X]``."""
        inner = list_iterand(self.tp)
        return RuntimeType(inner) if inner is not None else None

    def is_subtype_of(self, other: RuntimeType) -> bool:
        """Subclassing, with ``ListArtifact`` covariant in its iterand and any other generic
        artifact (``Box[Note]``) compared argument by argument as its type variables declare
        (covariant, contravariant, else invariant), as mypy compares them."""
        mine, theirs = self.iterand(), other.iterand()
        if theirs is not None:
            return (
                mine is not None and issubclass(self.cls, other.cls) and mine.is_subtype_of(theirs)
            )
        if not issubclass(self.cls, other.cls):
            return False
        wanted = get_args(other.tp)
        if not wanted:
            return True
        have = _arguments_as(self.cls, get_args(self.tp), other.cls)
        parameters: tuple[object, ...] = getattr(other.cls, "__parameters__", ())
        if have is None or len(have) != len(wanted) or len(parameters) != len(wanted):
            return True  # nothing to compare by: the classes decide, as above
        return all(
            _argument_fits(parameter, got, asked)
            for parameter, got, asked in zip(parameters, have, wanted, strict=True)
        )

    def render(self) -> str:
        """``Note``, ``ListArtifact[Note]``, ``Verdicts``: as mypy prints it."""
        return type_text(self.tp)


def _arguments_as(
    origin: type, args: tuple[object, ...], target: type
) -> tuple[object, ...] | None:
    """The type arguments of ``target`` as the class ``origin[args]`` binds them, through its
    bases' ``__orig_bases__`` (``class NoteBox(Box[Note])`` binds ``Box``'s to ``(Note,)``)."""
    if origin is target:
        return args
    mapping = dict(zip(getattr(origin, "__parameters__", ()), args, strict=False))
    for base in origin.__dict__.get("__orig_bases__", origin.__bases__):
        base_origin = get_origin(base) or base
        if isinstance(base_origin, type) and issubclass(base_origin, target):
            bound = tuple(mapping.get(a, a) for a in get_args(base))
            return _arguments_as(base_origin, bound, target)
    return None


def _argument_fits(parameter: object, got: object, asked: object) -> bool:
    """Whether the type argument ``got`` fits where ``asked`` is wanted, by the variance of the
    type variable ``parameter``."""

    def sub(a: object, b: object) -> bool:
        if isinstance(get_origin(a) or a, type) and isinstance(get_origin(b) or b, type):
            return RuntimeType(cast(type, a)).is_subtype_of(RuntimeType(cast(type, b)))
        return a == b

    if getattr(parameter, "__covariant__", False):
        return sub(got, asked)
    if getattr(parameter, "__contravariant__", False):
        return sub(asked, got)
    return sub(got, asked) and sub(asked, got)


def type_text(tp: object) -> str:
    """A live type as mypy prints it: unqualified class names, ``ListArtifact[Note]``, ``Any``,
    ``T`` for a type variable, ``Part | None``; a bare generic class shows ``Any`` arguments."""
    if tp is Any:
        return "Any"
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, TypeVar):
        return tp.__name__
    origin, args = get_origin(tp), get_args(tp)
    if origin is Union or origin is UnionType:
        return " | ".join(type_text(arg) for arg in args)
    if isinstance(origin, type) and args:
        return f"{origin.__name__}[{', '.join(type_text(arg) for arg in args)}]"
    if isinstance(tp, type):
        parameters: tuple[object, ...] = getattr(tp, "__parameters__", ())
        if parameters:  # a bare generic class: mypy fills its parameters with Any
            return f"{tp.__name__}[{', '.join('Any' for _ in parameters)}]"
        return tp.__name__
    return repr(tp)


#: Where the objects that stand for types live (``list[int]``, ``Union[...]``): such an entry is
#: named by its own text, an instance of anything else by its class.
_TYPING_MODULES: Final = frozenset({"typing", "types", "typing_extensions"})


def _label(cls: object) -> str:
    return cls.__name__ if isinstance(cls, type) else repr(cls)  # as mypy names it


def _key(cls: object) -> str:
    """A class's identity: its qualified name and the object itself (two classes one factory
    made share a qualified name, but never an identity)."""
    if isinstance(cls, type):
        return f"{cls.__module__}.{cls.__qualname__}@{id(cls):x}"
    return f"<object {id(cls)}>"


def _side(tp: object) -> RuntimeType | Open:
    """A concrete artifact type, or why it is open (worded as the plugin words it)."""
    if isinstance(tp, NewType):
        return Open.new_type(tp.__name__, type_text(tp.__supertype__))
    open_part = open_type_part(tp)
    whole = None if open_part is tp else type_text(tp)
    if isinstance(open_part, TypeVar):
        return Open.type_variable(open_part.__name__, whole)
    if open_part is not None:
        return Open.any(whole)
    origin = get_origin(tp) or tp
    if not (isinstance(origin, type) and issubclass(origin, Artifact)):
        return Open.not_an_artifact(type_text(tp))
    if issubclass(origin, ListArtifact) and list_iterand(tp) is None:
        return Open.any(type_text(tp))  # a bare generic list subclass: mypy reads Bag[Any]
    parameters: tuple[object, ...] = getattr(origin, "__parameters__", ())
    if tp is origin and parameters:
        return Open.any(type_text(tp))  # a bare generic artifact: mypy reads Box[Any]
    inner = list_iterand(tp)
    if inner is not None and isinstance(_side(inner), Open):
        part = _union_item(tp)
        if part is not None:
            return Open.not_an_artifact(type_text(part), type_text(tp))
        return Open.any(type_text(tp))
    return RuntimeType(cast(type, tp))


def _union_item(tp: object) -> object | None:
    """The union a list holds as its items (``Note | Part`` of ``ListArtifact[Note | Part]``,
    also in a list of lists), else ``None``."""
    inner = list_iterand(tp)
    while inner is not None:
        if get_origin(inner) in (Union, UnionType):
            return inner
        inner = list_iterand(inner)
    return None


def _hints(function: object) -> tuple[object | None, object | None] | None:
    """(first parameter's, return) annotations of ``function`` (``self`` aside), resolved as
    ``typing.get_type_hints`` resolves them in its module; ``None`` when they do not resolve
    here (an annotation that does not exist at run time: trusted, never a crash)."""
    if not callable(function) or function is object.__init__:
        return None
    module = sys.modules.get(getattr(function, "__module__", ""), None)
    try:
        hints = get_type_hints(function, vars(module) if module is not None else None)
        names = [name for name in inspect.signature(function).parameters if name != "self"]
    except Exception:
        return None
    return (hints.get(names[0]) if names else None), hints.get("return")


def _narrow_parent(cls: type) -> str | None:
    """The type of the constructor's ``parent`` when it is narrower than ``Identifiable``."""
    found = _hints(getattr(cls, "__init__", None))
    if found is None:
        return None
    wanted = found[0]
    if not isinstance(wanted, type) or wanted is object:
        return None
    if wanted is Identifiable or issubclass(Identifiable, wanted):
        return None
    return wanted.__name__


def _unresolved_forward(cls: type) -> tuple[str, str, RuntimeType | Open] | None:
    """(role, text, other side) of a quoted type in a ``DecisionTool[...]`` base of ``cls``
    that does not exist in its module at run time (imported only under ``TYPE_CHECKING``)."""
    for owner in cls.__mro__:
        module = sys.modules.get(owner.__module__)
        namespace = dict(vars(module)) if module is not None else {}
        for base in owner.__dict__.get("__orig_bases__", ()):
            if get_origin(base) is not DecisionTool:
                continue
            resolved: list[object] = []
            missing: tuple[str, str] | None = None
            for role, arg in zip(("input", "output"), get_args(base), strict=False):
                text = arg if isinstance(arg, str) else getattr(arg, "__forward_arg__", None)
                if isinstance(text, str):
                    try:
                        arg = eval(text, namespace)  # as typing.get_type_hints evaluates it
                    except NameError:
                        missing = (role, text)
                resolved.append(arg)
            if missing is not None:
                role, text = missing
                other = resolved[1] if role == "input" else resolved[0]
                other_side = (
                    Open.type_checking_only(other) if isinstance(other, str) else _side(other)
                )
                return role, text, other_side
    return None


def _ctor_problem(cls: type) -> str | None:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read (a C-level class): trust it
        return None
    try:
        signature.bind(None)
    except TypeError:
        params = ", ".join(signature.parameters)
        return f"its constructor takes ({params})"
    return None


def _execute_hints(cls: type) -> tuple[str | None, str | None]:
    """``execute``'s input and return annotations, rendered, when each is a concrete artifact
    type (the fix for an open type parameter is built from them); ``None`` otherwise."""
    found = _hints(getattr(cls, "execute", None))
    shown: list[str | None] = []
    for tp in found if found is not None else (None, None):
        side = _side(tp) if tp is not None else None
        shown.append(side.render() if isinstance(side, RuntimeType) else None)
    return shown[0], shown[1]


def _execute_input(cls: type) -> RuntimeType | None:
    """The concrete artifact type an ``execute`` override (the class's own or a base's below
    ``DecisionTool``) annotates its input with, else ``None``."""
    method = getattr(cls, "execute", None)
    found = _hints(method) if method is not DecisionTool.execute else None
    side = _side(found[0]) if found is not None and found[0] is not None else None
    return side if isinstance(side, RuntimeType) else None


def runtime_facts(cls: object) -> ToolFacts[RuntimeType]:
    """What the rules need to know about one palette entry, read from the live class."""
    origin = get_origin(cls)
    if isinstance(origin, type) and issubclass(origin, DecisionTool):
        label, why, fix = subscripted_entry(type_text(cls))
        return ToolFacts(_key(cls), label, not_a_tool=why, not_a_tool_fix=fix)
    if isinstance(cls, DecisionTool):
        label, why, fix = tool_instance_entry(type(cls).__name__)
        return ToolFacts(_key(cls), label, not_a_tool=why, not_a_tool_fix=fix)
    if not isinstance(cls, type):
        if type(cls).__module__ in _TYPING_MODULES:  # a typing form: named as mypy writes it
            return ToolFacts(_key(cls), _label(cls), not_a_tool="it is not a class")
        label, why = object_entry(type(cls).__name__)
        return ToolFacts(_key(cls), label, not_a_tool=why)
    if not issubclass(cls, DecisionTool):
        return ToolFacts(_key(cls), _label(cls), not_a_tool="it is not a DecisionTool subclass")
    own = cls.__dict__.get(NAME_ATTR)
    inherited: tuple[str, str] | None = None
    if own is None:
        for parent in cls.__mro__[1:]:
            if NAME_ATTR in parent.__dict__:
                inherited = (str(parent.__dict__[NAME_ATTR]), parent.__qualname__)
                break
    missing = _unresolved_forward(cls)
    sides: list[RuntimeType | Open]
    if missing is not None:
        role, text, other = missing
        unresolved = Open.type_checking_only(text)
        sides = [unresolved, other] if role == "input" else [other, unresolved]
    else:
        sides = [_side(tp) for tp in declared_tool_types(cls)]
    return ToolFacts(
        key=_key(cls),
        label=_label(cls),
        abstract=tuple(sorted(getattr(cls, "__abstractmethods__", ()))),
        name=own if isinstance(own, str) else None,
        inherited_from=inherited,
        ctor=_ctor_problem(cls),
        narrow_parent=_narrow_parent(cls),
        input=sides[0],
        output=sides[1],
        execute_hints=_execute_hints(cls)
        if any(isinstance(side, Open) for side in sides)
        else (None, None),
        execute_input=_execute_input(cls) if isinstance(sides[0], RuntimeType) else None,
    )


def thinker_input_of(thinker: type) -> object | None:
    """The input type ``I`` a thinker class binds (an artifact type, or a union of artifact
    classes), or ``None`` when it leaves it open.

    Python erases the type arguments of a direct construction (``DecisionThinker[Note,
    Verdict](...)``, or ``Base[Note](...)`` of a generic thinker): the instance gets its
    ``__orig_class__`` only after its constructor returns. Called while such a construction
    runs (from the thinker's constructor), the input is read from the subscripted class being
    called, found on the call stack."""
    if not (isinstance(thinker, type) and issubclass(thinker, DecisionTool)):
        return None
    declared = declared_tool_types(thinker)[0]
    if isinstance(_input_side(declared), Open):
        alias = _building_alias(thinker)
        if alias is not None:
            found = _arguments_as(thinker, get_args(alias), DecisionTool)
            declared = found[0] if found else declared
    side = _input_side(declared)
    if isinstance(side, Open):
        return None
    return declared if _members(declared) else side.tp


def _input_side(tp: object) -> RuntimeType | Open:
    return RuntimeType(cast(type, tp)) if _members(tp) else _side(tp)


#: How far up the call stack a thinker's constructor looks for the subscripted class calling
#: it (``__init__`` of the class and its bases, the argument checks, the validator).
_ALIAS_DEPTH = 32


def _building_alias(thinker: type) -> object | None:
    """The subscripted class (``DecisionThinker[Note, Verdict]``) whose call is building an
    instance of ``thinker`` right now: the innermost such call on the stack, else ``None``."""
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_ALIAS_DEPTH):
        if frame is None:
            return None
        code = frame.f_code
        if code.co_name == "__call__" and code.co_filename == typing.__file__:
            alias = frame.f_locals.get("self")
            if get_origin(alias) is thinker:
                return alias
        frame = frame.f_back
    return None


def _members(tp: object) -> list[RuntimeType]:
    """The artifact classes of a union input type (each concrete), else none."""
    if get_origin(tp) not in (Union, UnionType):
        return []
    sides = [_side(arg) for arg in get_args(tp)]
    if not sides or any(isinstance(side, Open) for side in sides):
        return []
    return [side for side in sides if isinstance(side, RuntimeType)]


@dataclass(frozen=True)
class PaletteReport:
    """The verdicts on a palette, the artifact types a run can reach (``None``: unknown), and
    what could not be judged (``harness-undecidable``: the thinker's input unknown)."""

    verdicts: tuple[Verdict, ...]
    reachable: tuple[type, ...] | None
    unproved: tuple[Verdict, ...] = ()

    @property
    def legal(self) -> bool:
        """Whether the palette is proved legal: no rule broken and every rule judged."""
        return not self.verdicts and not self.unproved


class PaletteError(HarnessError, TypeError):
    """A palette breaks the rules: every verdict, each with its code, class, message and fix."""

    def __init__(self, verdicts: Sequence[Verdict]) -> None:
        self.verdicts = tuple(verdicts)
        lines = [f"the palette is not legal ({len(self.verdicts)} problem(s)):"]
        for verdict in self.verdicts:
            lines.append(f"- {verdict.code}: {verdict.message}")
            lines += [f"    {note}" for note in verdict.notes]
        lines.append("(the mypy plugin reports the same verdicts at type-check time)")
        super().__init__("\n".join(lines))


def palette_report(
    *,
    thinker_input: object | None,
    output_type: type,
    key_tool: object,
    palette: tuple[object, ...],
    objective: str | None = None,
) -> PaletteReport:
    """Every verdict on a palette, without raising (see :func:`validate_palette`).

    A palette that is not a tuple (a list, say) is refused as the type checker refuses it, with
    that one verdict: as with mypy, its entries are judged once it is a tuple.
    """
    shape: object = palette  # a caller without a type checker may pass anything
    if not isinstance(shape, tuple):
        names: list[str] = []
        if isinstance(shape, list | set | frozenset) and all(isinstance(e, type) for e in shape):
            names = [e.__name__ for e in shape]
        return PaletteReport((palette_shape_verdict(type_text(type(shape)), names),), None)
    key = runtime_facts(key_tool)
    entries = [runtime_facts(cls) for cls in shape]
    members = _members(thinker_input)
    start = _side(thinker_input) if thinker_input is not None and not members else None
    start_node = start if isinstance(start, RuntimeType) else None
    out = _side(output_type)
    out_node = out if isinstance(out, RuntimeType) else None
    verdicts = palette_verdicts(
        thinker_input=start_node,
        output_type=out_node,
        key_tool=key,
        palette=entries,
        objective=objective,
        input_members=members,
    )
    reachable: tuple[type, ...] | None = None
    if start_node is not None:
        tools = [facts for facts in entries if facts.key != key.key] + [key]
        reachable = tuple(node.tp for node in reachable_types(start_node, tools))
    unproved = (unknown_input_verdict(),) if start_node is None and not members else ()
    return PaletteReport(tuple(verdicts), reachable, unproved)


P = ParamSpec("P")


def _raising(report: Callable[P, PaletteReport]) -> Callable[P, PaletteReport]:
    """:func:`validate_palette`: ``report`` raising on a broken rule, with ``report``'s keywords
    (a type checker reads them through ``P``; ``inspect.signature`` and ``help`` through
    ``__wrapped__``)."""

    def validate_palette(*args: P.args, **kwargs: P.kwargs) -> PaletteReport:
        """Check a thinker's palette; raise :class:`PaletteError` with every verdict if illegal.

        ``thinker_input`` is the thinker's ``I`` (:func:`thinker_input_of` on the thinker's
        class); ``None`` leaves the reachability rules (``harness-graph``,
        ``harness-dead-tool``) unjudged: nothing is raised for them, and the report lists them
        in ``unproved`` (not ``legal``). The keywords are :func:`palette_report`'s.
        """
        found = report(*args, **kwargs)
        if found.verdicts:
            raise PaletteError(found.verdicts)
        return found

    validate_palette.__qualname__ = validate_palette.__name__  # a module-level name to readers
    return functools.update_wrapper(validate_palette, report, assigned=(), updated=())


validate_palette = _raising(palette_report)

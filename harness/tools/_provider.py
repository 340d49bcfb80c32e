"""What a tool class is at run time: its ``I`` and ``O``, its name and description, a way to run it.

Python erases generics, so a tool's types are read from the class's own ``__orig_bases__``
(``cls.__dict__["__orig_bases__"]``, never the inherited attribute), walking its bases toward
``DecisionTool`` and substituting type variables on the way::

    class Base(DecisionTool[I, O]): ...
    class Concrete(Base[Note, Verdict]): ...        # (Note, Verdict)

    class DecisionThinker(DecisionTool[I, ListArtifact[O]], Generic[I, O]): ...
    class Triage(DecisionThinker[Note, Verdict]): ...  # (Note, ListArtifact[Verdict])

One concern, past 400 lines: reading a tool class's types, name and description at run time;
the walk through generic bases (substitution, forward references, aliases, defaults) is most of
it and has no use apart.
"""

from __future__ import annotations

import inspect
import sys
import weakref
from collections.abc import Mapping
from typing import Annotated, Any, ForwardRef, Generic, TypeVar, cast, get_args, get_origin

from harness.artifacts import Artifact, ListArtifact
from harness.scope import Identifiable
from harness.tools._tool import (
    DESCRIPTION_ATTR,
    NAME_ATTR,
    DecisionTool,
    I_contra,
    O_co,
    validate_tool_name,
)

__all__ = [
    "ClassToolProvider",
    "declared_tool_types",
    "list_iterand",
    "open_type_part",
    "runtime_class",
    "tool_types",
]

_ROLES = ("I", "O")
_OPEN: tuple[object, ...] = (I_contra, O_co)  # DecisionTool's own parameters
_ROLE_WORDS = {"I": "input type I", "O": "output type O"}
_FIX = "class {name}(DecisionTool[Note, Verdict])"

_cache: weakref.WeakKeyDictionary[type, tuple[type[Artifact], type[Artifact]]] = (
    weakref.WeakKeyDictionary()
)


def runtime_class(tp: object) -> type:
    """The class behind a type: the origin of a parameterised alias (``ListArtifact[Note]`` ->
    ``ListArtifact``), else the class itself."""
    origin = get_origin(tp) or tp
    if not isinstance(origin, type):
        raise TypeError(f"{tp!r} is not a class nor a parameterised class")
    return origin


def list_iterand(tp: object) -> type[Artifact] | None:
    """The iterand type of ``ListArtifact[X]`` (``X``, itself maybe a parameterised list), or
    ``None`` when ``tp`` is not a list type or leaves its iterand unsaid.

    A subclass of a parameterised list counts too: ``class Verdicts(ListArtifact[Verdict])``
    gives ``Verdict``, read from ``__orig_bases__`` along the bases (as mypy maps it).
    """
    origin = get_origin(tp) or tp
    if not (isinstance(origin, type) and issubclass(origin, ListArtifact)):
        return None
    args = get_args(tp)
    if origin is ListArtifact:
        return cast("type[Artifact]", args[0]) if args else None
    found = _list_argument(origin, _parameter_map(origin, args))
    if found is None or isinstance(found, TypeVar):
        return None
    return cast("type[Artifact]", found)


def _parameter_map(cls: type, args: tuple[object, ...]) -> dict[object, object]:
    parameters: tuple[object, ...] = getattr(cls, "__parameters__", ())
    return dict(zip(parameters, args, strict=False)) if args else {}


def _arguments_of(
    target: type, cls: type, mapping: Mapping[object, object], tool: type
) -> tuple[object, ...] | None:
    """``target``'s type arguments as seen from its subclass ``cls`` under ``mapping`` (empty
    when ``target`` is named bare), or ``None`` when no base of ``cls`` leads to it. ``tool``
    is the class asked about, named when a forward reference cannot be resolved."""
    for base in _own_bases(cls):
        origin = get_origin(base) or base
        if not (isinstance(origin, type) and issubclass(origin, target)):
            continue
        args = tuple(_substitute(a, mapping, cls, tool) for a in get_args(base))
        if origin is target:
            return args
        found = _arguments_of(target, origin, _parameter_map(origin, args), tool)
        if found is not None:
            return found
    return None


def _list_argument(cls: type, mapping: Mapping[object, object]) -> object | None:
    """ListArtifact's argument as seen from the list subclass ``cls`` under ``mapping``."""
    found = _arguments_of(ListArtifact, cls, mapping, cls)
    return found[0] if found else None


def _own_bases(cls: type) -> tuple[object, ...]:
    # Only the class's own __orig_bases__: the attribute is inherited when a class has plain bases.
    bases = cls.__dict__.get("__orig_bases__")
    return tuple(bases) if bases is not None else cls.__bases__


def _resolve_forward(ref: ForwardRef, owner: type, tool: type) -> object:
    module = sys.modules.get(owner.__module__)
    namespace: dict[str, object] = dict(vars(module)) if module is not None else {}
    try:
        # The class's own annotation text, evaluated in its module as typing.get_type_hints does.
        return eval(ref.__forward_arg__, namespace, {owner.__name__: owner})
    except NameError as error:
        raise TypeError(
            f"{tool.__qualname__}: the type {ref.__forward_arg__!r} in the bases of "
            f"{owner.__qualname__} is not defined in {owner.__module__} ({error}): define or "
            "import it at module level before the tool is first used"
        ) from None


def _substitute(tp: object, mapping: Mapping[object, object], owner: type, tool: type) -> object:
    """``tp`` with its type variables replaced from ``mapping`` and forward refs resolved, as
    typing resolves them: ``Annotated[X, ...]`` is ``X``, an unbound type variable with a
    default (PEP 696) is its default."""
    if isinstance(tp, ForwardRef):
        tp = _resolve_forward(tp, owner, tool)
    aliased = _alias_value(tp)
    if aliased is not None:
        return _substitute(aliased, mapping, owner, tool)
    if get_origin(tp) is Annotated:
        return _substitute(get_args(tp)[0], mapping, owner, tool)
    if isinstance(tp, TypeVar):
        if tp in mapping:
            return mapping[tp]
        default = _default_of(tp)
        return tp if default is None else _substitute(default, mapping, owner, tool)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is None or not args:
        return tp
    new_args = tuple(_substitute(a, mapping, owner, tool) for a in args)
    if all(new is old for new, old in zip(new_args, args, strict=True)):
        return tp
    return cast(Any, origin)[new_args if len(new_args) > 1 else new_args[0]]  # re-subscript


def _alias_value(tp: object) -> object | None:
    """The type a ``TypeAliasType`` names (``Notes = TypeAliasType("Notes", ListArtifact[Note])``,
    or ``type Notes = ...``), its type parameters bound where it is subscripted; ``None`` for
    anything else. mypy reads such an alias as the type it names, so the runtime does too."""
    origin = get_origin(tp)
    alias = origin if origin is not None and _is_alias_type(origin) else tp
    if not _is_alias_type(alias):
        return None
    value: object = cast(Any, alias).__value__  # checked by _is_alias_type
    if alias is tp:
        return value
    parameters: tuple[object, ...] = getattr(alias, "__type_params__", ())
    mapping = dict(zip(parameters, get_args(tp), strict=False))
    return _substitute_variables(value, mapping)


def _is_alias_type(tp: object) -> bool:
    return type(tp).__name__ == "TypeAliasType" and hasattr(tp, "__value__")


def _substitute_variables(tp: object, mapping: Mapping[object, object]) -> object:
    if isinstance(tp, TypeVar):
        return mapping.get(tp, tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin is None or not args:
        return tp
    new_args = tuple(_substitute_variables(a, mapping) for a in args)
    return cast(Any, origin)[new_args if len(new_args) > 1 else new_args[0]]


def _default_of(variable: TypeVar) -> object | None:
    """A type variable's PEP 696 default (``typing_extensions.TypeVar(..., default=X)``)."""
    has_default = getattr(variable, "has_default", None)
    if callable(has_default) and has_default():
        return cast(object, variable.__default__)  # type: ignore[attr-defined]  # PEP 696
    return None


def open_type_part(tp: object) -> object | None:
    """The type variable or ``Any`` left open in ``tp`` (also inside its arguments), or ``None``
    when ``tp`` is fully bound. A bare ``ListArtifact`` (no iterand type) counts as ``Any``."""
    if isinstance(tp, TypeVar) or tp is Any:
        return tp
    origin = get_origin(tp)
    if (isinstance(origin, type) and issubclass(origin, ListArtifact)) or tp is ListArtifact:
        args = get_args(tp)
        if not args:
            return Any  # a bare ListArtifact is a list of anything
    for arg in get_args(tp):
        found = open_type_part(arg)
        if found is not None:
            return found
    return None


def _type_text(tp: object) -> str:
    """``ListArtifact[T]``, ``Note``, ``Any``: a type as a user would write it."""
    if tp is Any:
        return "Any"
    if isinstance(tp, TypeVar):
        return tp.__name__
    origin, args = get_origin(tp), get_args(tp)
    if origin is not None and args:
        return f"{_type_text(origin)}[{', '.join(_type_text(a) for a in args)}]"
    return str(getattr(tp, "__qualname__", tp))


def _check(tool: type, role: str, tp: object) -> type[Artifact]:
    open_part = open_type_part(tp)
    what = _ROLE_WORDS[role]
    fix = _FIX.format(name=tool.__name__)
    if open_part is not None:
        if isinstance(open_part, TypeVar):
            shown = f"type variable {open_part.__name__}"
        elif runtime_class(tp) is ListArtifact and open_part is Any and not get_args(tp):
            shown = "a ListArtifact with no iterand type"
        else:
            shown = "Any"
        if open_part is not tp and get_args(tp):
            shown += f" in {_type_text(tp)}"
        raise TypeError(
            f"{tool.__qualname__} leaves its {what} open ({shown}): bind {role} to a concrete "
            f"Artifact subclass: {fix}"
        )
    origin = get_origin(tp) or tp
    if not (isinstance(origin, type) and issubclass(origin, Artifact)):
        raise TypeError(
            f"the {what} of {tool.__qualname__} is {_type_text(tp)}, not an Artifact class: "
            f"bind {role} to a concrete Artifact subclass: {fix}"
        )
    return cast("type[Artifact]", tp)


def declared_tool_types(cls: type) -> tuple[object, object]:
    """The ``(I, O)`` a ``DecisionTool`` subclass declares, after substitution, unchecked.

    Unlike :func:`tool_types`, an open type variable or ``Any`` is returned as it is (for a
    validator that reports rather than raises); a class with no parameters on its way to
    ``DecisionTool`` gives DecisionTool's own type variables.
    """
    if not (isinstance(cls, type) and issubclass(cls, DecisionTool)):
        raise TypeError(f"{cls!r} is not a DecisionTool subclass: it has no input and output")
    found = _arguments_of(DecisionTool, cls, {}, cls)
    if found is None or len(found) != len(_ROLES):  # DecisionTool named bare: its own variables
        found = _OPEN
    return found[0], found[1]


def tool_types(cls: type) -> tuple[type[Artifact], type[Artifact]]:
    """The concrete ``(I, O)`` of a ``DecisionTool`` subclass, cached per class.

    Each is an Artifact class or a parameterised alias such as ``ListArtifact[Verdict]`` (read its
    iterand with :func:`list_iterand`, its class with :func:`runtime_class`). A parameter left
    open (a type variable) or ``Any`` is refused with ``TypeError`` naming the class and the fix.
    """
    try:
        return _cache[cls]
    except (KeyError, TypeError):
        pass
    found = declared_tool_types(cls)
    input_type, output_type = (
        _check(cls, role, tp) for role, tp in zip(_ROLES, found, strict=True)
    )
    types = _cache[cls] = (input_type, output_type)
    return types  # the cached pair itself, from the first call on


def _type_words(tp: object) -> str:
    iterand = list_iterand(tp)
    if iterand is not None:
        return f"list of {_type_words(iterand)}"
    return cast("type[Artifact]", runtime_class(tp)).alias


def _first_line(doc: object) -> str | None:
    if not isinstance(doc, str):
        return None
    for line in inspect.cleandoc(doc).splitlines():
        if line.strip():
            return line.strip()
    return None


def _own_name(cls: type) -> str:
    name = cls.__dict__.get(NAME_ATTR)
    if name is None:
        inherited = getattr(cls, NAME_ATTR, None)
        if inherited is not None:
            parent = next(b for b in cls.__mro__[1:] if NAME_ATTR in b.__dict__)
            raise TypeError(
                f"tool {cls.__qualname__} only inherits the name {inherited!r} from "
                f"{parent.__qualname__}: give it its own with @tool_name(...) on "
                f"{cls.__qualname__}"
            )
        raise TypeError(f'tool {cls.__qualname__} has no name: decorate it with @tool_name("...")')
    problem = validate_tool_name(name)
    if problem is not None:
        raise TypeError(f"tool {cls.__qualname__}: {problem}: rename it with @tool_name")
    return cast(str, name)


def _own_description(cls: type, input_type: object, output_type: object) -> str:
    described = cls.__dict__.get(DESCRIPTION_ATTR)
    if isinstance(described, str) and described.strip():
        return described
    line = _first_line(cls.__dict__.get("__doc__"))
    if line is not None:
        return line
    return f"takes a {_type_words(input_type)} and produces a {_type_words(output_type)}"


class ClassToolProvider(Generic[I_contra, O_co]):
    """A tool class as the thinker uses it at run time: name, description, types, ``create``.

    The class must be a concrete ``DecisionTool`` subclass with its own ``@tool_name`` (a name
    inherited from a parent is refused: two tools would answer to it), a ``(parent)``
    constructor, and concrete ``I`` and ``O``. Everything is checked here, at construction.
    """

    __slots__ = ("_cls", "_description", "_input_type", "_name", "_output_type")

    def __init__(self, cls: type[DecisionTool[I_contra, O_co]]) -> None:
        if not (isinstance(cls, type) and issubclass(cls, DecisionTool)):
            raise TypeError(f"{cls!r} is not a DecisionTool subclass: only tools are provided")
        self._cls = cls
        self._name = _own_name(cls)
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
            raise TypeError(
                f"tool {cls.__qualname__} is abstract (missing {missing}): implement them"
            )
        try:
            inspect.signature(cls).bind(None)
        except TypeError:
            raise TypeError(
                f"tool {cls.__qualname__} cannot be built from its parent alone: keep the "
                "single-argument constructor __init__(self, parent: Identifiable)"
            ) from None
        except ValueError:  # no signature to read (a C-level class): trust it
            pass
        self._input_type, self._output_type = tool_types(cls)
        self._description = _own_description(cls, self._input_type, self._output_type)

    @property
    def tool_class(self) -> type[DecisionTool[I_contra, O_co]]:
        """The tool class provided."""
        return self._cls

    @property
    def name(self) -> str:
        """The tool's own ``@tool_name``: what the model chooses it by."""
        return self._name

    @property
    def description(self) -> str:
        """``@tool_description``, else the class docstring's first line, else its types."""
        return self._description

    @property
    def input_type(self) -> type[Artifact]:
        """``I``: an Artifact class or a parameterised ``ListArtifact``."""
        return self._input_type

    @property
    def output_type(self) -> type[Artifact]:
        """``O``: an Artifact class or a parameterised ``ListArtifact``."""
        return self._output_type

    @property
    def read_only(self) -> bool:
        """Whether the tool only reads (its class's ``read_only``)."""
        return bool(self._cls.read_only)

    def create(self, parent: Identifiable) -> DecisionTool[I_contra, O_co]:
        """A new instance of the tool acting for ``parent``."""
        tool = self._cls(parent)
        if not isinstance(tool, DecisionTool):
            raise TypeError(f"{self._cls.__qualname__}(parent) did not build a DecisionTool")
        return tool

    def __repr__(self) -> str:
        return f"ClassToolProvider({self._cls.__qualname__}, name={self._name!r})"


# Kept for harness.palette._runtime, which imported them before the public names existed.
_open_part = open_type_part

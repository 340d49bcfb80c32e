"""The plugin's type node answers every subtype question as mypy's ``is_subtype`` does, its
shortcut between plain classes (read from the MRO, see ``MypyType.nominal``) included: each
pair of a module's classes, from plain artifact classes to what the shortcut must leave to mypy
(a protocol, a class with an ``Any`` base, a generic class, a named tuple, ``int`` and ``float``
with their promotions); a class with a generic base and no arguments of its own takes it."""

from __future__ import annotations

from mypy.build import BuildSource, build
from mypy.nodes import TypeInfo
from mypy.options import Options
from mypy.subtypes import is_subtype
from mypy.types import Instance
from mypy.typevars import fill_typevars

from mypy_plugin._facts import MypyType

SOURCE = """\
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

T = TypeVar("T")
Dynamic: Any

class Base: ...
class Note(Base): ...
class Part(Note): ...
class Other: ...
class Mixed(Part, Other): ...
class HasValue(Protocol):
    value: int
class Valued:
    value: int
class Loose(Dynamic): ...
class Box(Generic[T]): ...
class NoteBox(Box[Note]): ...
class Pair(NamedTuple):
    left: int
"""


def _classes() -> tuple[list[Instance], Options]:
    options = Options()
    options.incremental = False
    options.show_traceback = True
    result = build([BuildSource("m.py", "m", SOURCE)], options)
    assert not result.errors, result.errors
    module = result.files["m"]
    infos = [sym.node for sym in module.names.values() if isinstance(sym.node, TypeInfo)]
    builtins = result.files["builtins"]
    for name in ("int", "float", "object", "str"):
        node = builtins.names[name].node
        assert isinstance(node, TypeInfo)
        infos.append(node)
    instances = [fill_typevars(info) for info in infos]
    return [i for i in instances if isinstance(i, Instance)], options


def test_every_pair_answers_as_mypy_does() -> None:
    instances, options = _classes()
    nodes = [MypyType(instance, options) for instance in instances]
    assert len(nodes) >= 16
    shortcut = {node.typ.type.name for node in nodes if node.nominal is not None}
    assert {"Base", "Note", "Part", "Mixed", "Valued", "NoteBox", "object", "str"} <= shortcut
    assert not {"HasValue", "Loose", "Box", "Pair", "int", "float"} & shortcut
    for left in nodes:
        for right in nodes:
            assert left.is_subtype_of(right) == is_subtype(left.typ, right.typ), (
                left.render(),
                right.render(),
            )

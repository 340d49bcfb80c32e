"""Tool classes at run time: their (I, O), name, description, creation."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, get_args

import attrs
import pytest

from harness.artifacts import Artifact, ListArtifact
from harness.tools import (
    ClassToolProvider,
    DecisionTool,
    Identifiable,
    Workflow,
    declared_tool_types,
    list_iterand,
    open_type_part,
    runtime_class,
    tool_description,
    tool_name,
    tool_types,
)

I = TypeVar("I", bound=Artifact)  # noqa: E741 - the input type's conventional name
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the output type's conventional name
T = TypeVar("T", bound=Artifact)


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class Verdict(Artifact):
    keep: bool


class _Runs(Generic[I, O]):
    """A mixin that says nothing about tools (skipped on the way to DecisionTool)."""


@tool_name("split_note")
class SplitNote(DecisionTool[Note, ListArtifact[Note]]):
    """Splits a note into its parts.

    The parts are separated by semicolons.
    """

    async def execute(self, input: Note, context: object) -> ListArtifact[Note]:
        return ListArtifact.of(Note, [Note(p.strip()) for p in input.text.split(";")])


class Base(DecisionTool[I, O]):
    """A generic intermediate."""

    async def execute(self, input: I, context: object) -> O:
        raise NotImplementedError


@tool_name("concrete")
class Concrete(Base[Note, Verdict]):
    pass


class Swapped(Base[O, I], Generic[I, O]):
    """Reorders the intermediate's parameters."""


@tool_name("swapped")
class SwappedConcrete(Swapped[Verdict, Note]):
    pass


class Thinkerish(DecisionTool[I, ListArtifact[O]], Generic[I, O]):
    """Shaped like DecisionThinker: the output is a list of the answer type."""

    async def execute(self, input: I, context: object) -> ListArtifact[O]:
        raise NotImplementedError


@tool_name("triage")
class Triage(Thinkerish[Note, Verdict]):
    pass


@tool_name("mixed")
class Mixed(_Runs[Verdict, Verdict], Base[Note, Verdict]):
    pass


@tool_name("below")
class Below(Triage):
    """A plain subclass of a concrete tool."""


@tool_name("forward")
class Forward(DecisionTool["Note", "ListArtifact[Verdict]"]):
    async def execute(self, input: Note, context: object) -> ListArtifact[Verdict]:
        raise NotImplementedError


class Bare(DecisionTool):  # type: ignore[type-arg]  # deliberately unparameterised
    async def execute(self, input: Any, context: object) -> Any:
        raise NotImplementedError


class OpenOutput(Thinkerish[Note, T], Generic[T]):
    pass


class AnyInput(Base[Any, Verdict]):
    pass


class BareList(Base[Note, ListArtifact]):  # type: ignore[type-arg]  # deliberately bare
    pass


class NotAnArtifact(Base[Note, int]):  # type: ignore[type-var]  # deliberately wrong
    pass


def test_types_of_a_direct_tool() -> None:
    input_type, output_type = tool_types(SplitNote)
    assert input_type is Note
    assert output_type == ListArtifact[Note]
    assert get_args(output_type) == (Note,)
    assert runtime_class(output_type) is ListArtifact
    assert list_iterand(output_type) is Note


def test_types_through_generic_intermediates() -> None:
    assert tool_types(Concrete) == (Note, Verdict)
    assert tool_types(SwappedConcrete) == (Note, Verdict)
    assert tool_types(Mixed) == (Note, Verdict)


def test_types_of_the_thinker_shaped_base() -> None:
    input_type, output_type = tool_types(Triage)
    assert input_type is Note
    assert output_type == ListArtifact[Verdict]
    assert list_iterand(output_type) is Verdict
    assert tool_types(Below) == (Note, ListArtifact[Verdict])


def test_forward_references_resolve_in_the_class_module() -> None:
    assert tool_types(Forward) == (Note, ListArtifact[Verdict])


def test_types_never_come_from_the_inherited_orig_bases() -> None:
    class Labelled(_Runs[Note, Note]):
        """Not a tool, but generic: it has __orig_bases__ of its own."""

    @tool_name("combo")
    class Combo(Labelled, Concrete):
        pass

    # Combo's bases are plain, so Combo.__orig_bases__ is Labelled's, which never reaches
    # DecisionTool; only Combo's own bases lead to Concrete's (Note, Verdict).
    assert "__orig_bases__" not in Combo.__dict__
    inherited = Combo.__orig_bases__  # type: ignore[attr-defined]  # typing set it on Labelled
    assert inherited == (_Runs[Note, Note],)
    assert tool_types(Combo) == (Note, Verdict)
    assert ClassToolProvider(Combo).input_type is Note


def test_types_are_cached_per_class() -> None:
    assert tool_types(Triage) is tool_types(Triage)

    class Fresh(Thinkerish[Note, Verdict]):  # never looked up before: the first call misses
        pass

    assert tool_types(Fresh) is tool_types(Fresh)


@pytest.mark.parametrize(
    ("cls", "pattern"),
    [
        (Bare, r"Bare leaves its input type I open \(type variable I_contra\): bind I "),
        (Base, r"Base leaves its input type I open \(type variable I\): bind I "),
        (
            OpenOutput,
            r"OpenOutput leaves its output type O open \(type variable T in "
            r"ListArtifact\[T\]\): bind O ",
        ),
        (AnyInput, r"AnyInput leaves its input type I open \(Any\): bind I "),
        (BareList, r"BareList leaves its output type O open \(a ListArtifact with no iterand"),
        (NotAnArtifact, r"output type O of NotAnArtifact is int, not an Artifact class"),
    ],
)
def test_open_or_any_parameters_are_refused_with_the_fix(cls: type, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern) as caught:
        tool_types(cls)
    assert "to a concrete Artifact subclass: class " in str(caught.value)
    assert f"class {cls.__name__}(DecisionTool[Note, Verdict])" in str(caught.value)


def test_declared_types_report_what_is_open_without_raising() -> None:
    assert declared_tool_types(Triage) == (Note, ListArtifact[Verdict])
    input_type, output_type = declared_tool_types(OpenOutput)
    assert input_type is Note
    assert output_type == ListArtifact[T]  # type: ignore[valid-type]  # the runtime alias
    assert open_type_part(output_type) is T
    assert open_type_part(declared_tool_types(AnyInput)[0]) is Any
    assert open_type_part(ListArtifact) is Any
    assert open_type_part(ListArtifact[ListArtifact[Note]]) is None
    assert all(isinstance(tp, TypeVar) for tp in declared_tool_types(Bare))


def test_runtime_class_and_list_iterand() -> None:
    assert runtime_class(Note) is Note
    assert runtime_class(ListArtifact[ListArtifact[Note]]) is ListArtifact
    assert list_iterand(ListArtifact[ListArtifact[Note]]) == ListArtifact[Note]
    assert list_iterand(Note) is None
    assert list_iterand(ListArtifact) is None
    with pytest.raises(TypeError, match="not a class"):
        runtime_class(I)


def test_provider_reads_name_types_and_creates_for_a_parent() -> None:
    provider = ClassToolProvider(SplitNote)
    assert provider.name == "split_note"
    assert provider.input_type is Note
    assert provider.output_type == ListArtifact[Note]
    assert provider.read_only is True
    assert provider.tool_class is SplitNote
    workflow = Workflow()
    tool = provider.create(workflow)
    assert isinstance(tool, SplitNote)
    assert tool.parent is workflow
    assert tool.identity == workflow.identity
    assert provider.create(workflow) is not tool
    assert repr(provider) == "ClassToolProvider(SplitNote, name='split_note')"


def test_an_inherited_name_is_refused_naming_the_class_and_the_fix() -> None:
    class Inheritor(SplitNote):
        pass

    with pytest.raises(
        TypeError,
        match=r"tool .*Inheritor only inherits the name 'split_note' from SplitNote: give it "
        r"its own with @tool_name\(\.\.\.\)",
    ):
        ClassToolProvider(Inheritor)


def test_a_tool_without_a_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Base has no name: decorate it with @tool_name"):
        ClassToolProvider(Base)


def test_description_prefers_the_decorator_then_the_docstring_first_line() -> None:
    assert ClassToolProvider(SplitNote).description == "Splits a note into its parts."

    @tool_description("Judges a note:\n   keep it or not.")
    @tool_name("judge")
    class Judge(Base[Note, Verdict]):
        """Not this."""

    assert ClassToolProvider(Judge).description == "Judges a note: keep it or not."


def test_description_falls_back_to_the_types_never_to_a_parent_docstring() -> None:
    assert Concrete.__doc__ is None
    assert ClassToolProvider(Concrete).description == "takes a note and produces a verdict"
    assert ClassToolProvider(Triage).description == "takes a note and produces a list of verdict"


def test_a_parent_description_is_not_inherited() -> None:
    @tool_description("Parent's words.")
    @tool_name("parent")
    class Parent(Base[Note, Verdict]):
        pass

    @tool_name("child")
    class Child(Parent):
        pass

    assert ClassToolProvider(Parent).description == "Parent's words."
    assert ClassToolProvider(Child).description == "takes a note and produces a verdict"


def test_abstract_tools_and_other_constructors_are_refused() -> None:
    @tool_name("abstract")
    class Abstract(DecisionTool[Note, Verdict]):
        pass

    with pytest.raises(TypeError, match=r"Abstract is abstract \(missing execute\)"):
        ClassToolProvider(Abstract)  # type: ignore[type-abstract]  # refused at run time too

    @tool_name("two_args")
    class TwoArgs(Concrete):
        def __init__(self, parent: Identifiable, extra: int) -> None:  # type: ignore[harness-ctor]  # refused at run time too
            super().__init__(parent)

    with pytest.raises(TypeError, match=r"TwoArgs cannot be built from its parent alone"):
        ClassToolProvider(TwoArgs)


def test_only_tool_classes_are_provided() -> None:
    with pytest.raises(TypeError, match="is not a DecisionTool subclass"):
        ClassToolProvider(Note)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="is not a DecisionTool subclass"):
        tool_types(Note)


def test_read_only_follows_the_class() -> None:
    @tool_name("writer")
    class Writer(Concrete):
        read_only = False

    assert ClassToolProvider(Writer).read_only is False

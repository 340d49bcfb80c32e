"""The runtime palette validator: one test per rule, legal and illegal, asserting the message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Never, TypeVar, cast

import attrs
import pytest
import typing_extensions

from harness.artifacts import Artifact, ListArtifact
from harness.artifacts._registry import conforms
from harness.palette import (
    PaletteError,
    palette_report,
    thinker_input_of,
    validate_palette,
)
from harness.tools import (
    DecisionTool,
    Identifiable,
    Workflow,
    list_iterand,
    tool_name,
    tool_types,
)

if TYPE_CHECKING:
    from harness.jobs import JobContext


@attrs.frozen
class Note(Artifact, alias="v_note"):
    text: str


@attrs.frozen
class SubNote(Note, alias="v_sub_note"):
    pass


@attrs.frozen
class Part(Artifact, alias="v_part"):
    text: str


@attrs.frozen
class Verdict(Artifact, alias="v_verdict"):
    ok: bool


@attrs.frozen
class Orphan(Artifact, alias="v_orphan"):
    n: int


@tool_name("split_note")
class SplitNote(DecisionTool[Note, ListArtifact[Part]]):
    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Part]:
        raise NotImplementedError


@tool_name("refine_note")
class RefineNote(DecisionTool[Note, SubNote]):
    async def execute(self, input: Note, context: JobContext) -> SubNote:
        raise NotImplementedError


@tool_name("judge_note")
class JudgeNote(DecisionTool[Note, ListArtifact[Verdict]]):
    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_part")
class JudgePart(DecisionTool[Part, ListArtifact[Verdict]]):
    async def execute(self, input: Part, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_parts")
class JudgeParts(DecisionTool[ListArtifact[Part], ListArtifact[Verdict]]):
    async def execute(
        self, input: ListArtifact[Part], context: JobContext
    ) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("judge_orphan")
class JudgeOrphan(DecisionTool[Orphan, ListArtifact[Verdict]]):
    async def execute(self, input: Orphan, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


@tool_name("read_orphan")
class ReadOrphan(DecisionTool[Orphan, Note]):
    async def execute(self, input: Orphan, context: JobContext) -> Note:
        raise NotImplementedError


@tool_name("half_done")
class HalfDone(DecisionTool[Note, Note]):
    pass


class Nameless(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError


class SplitNoteAgain(SplitNote):
    pass


@tool_name("twice")
class Twice(DecisionTool[Note, Note]):
    def __init__(self, parent: Identifiable, times: int) -> None:  # type: ignore[harness-ctor]  # the case under test
        super().__init__(parent)

    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError


@tool_name("optional_twice")
class OptionalTwice(DecisionTool[Note, Note]):
    def __init__(self, parent: Identifiable, times: int = 2) -> None:
        super().__init__(parent)

    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError


@tool_name("loose")
class Loose(DecisionTool[Note, Any]):  # type: ignore[harness-open-type]  # the case under test
    async def execute(self, input: Note, context: JobContext) -> Any:
        raise NotImplementedError


T = TypeVar("T", bound=Artifact)


@tool_name("echo")
class Echo(DecisionTool[T, Note]):  # type: ignore[harness-open-type]  # the case under test
    async def execute(self, input: T, context: JobContext) -> Note:
        raise NotImplementedError


@tool_name("split_note")
class SplitNoteToo(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError


def _error(**kwargs: Any) -> PaletteError:
    arguments: dict[str, Any] = {"thinker_input": Note, "output_type": Verdict, **kwargs}
    with pytest.raises(PaletteError) as caught:
        validate_palette(**arguments)
    return caught.value


def _legal(**kwargs: Any) -> None:
    arguments: dict[str, Any] = {"thinker_input": Note, "output_type": Verdict, **kwargs}
    report = validate_palette(**arguments)
    assert report.legal
    assert report.verdicts == ()


def _only(error: PaletteError, code: str) -> str:
    assert [v.code for v in error.verdicts] == [code], error
    return error.verdicts[0].message


# harness-tool


def test_concrete_tools_pass() -> None:
    _legal(key_tool=JudgePart, palette=(SplitNote, RefineNote))


def test_abstract_entry_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(HalfDone,))
    assert _only(error, "harness-tool") == 'Tool "HalfDone" is abstract (missing "execute")'
    assert error.verdicts[0].notes == (
        'A thinker instantiates its tools: implement "execute" in "HalfDone"',
    )
    assert error.verdicts[0].subject == "HalfDone"
    assert "harness-tool" in str(error)
    assert "HalfDone" in str(error)
    assert isinstance(error, TypeError)


def test_non_tool_entry_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(Note,))
    assert _only(error, "harness-tool") == (
        '"Note" is not a tool class: it is not a DecisionTool subclass'
    )


# harness-name


def test_own_name_passes() -> None:
    _legal(key_tool=JudgeNote, palette=(RefineNote,))


def test_missing_name_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(Nameless,))
    assert _only(error, "harness-name") == 'Tool "Nameless" has no @tool_name of its own'
    assert error.verdicts[0].fix == 'Decorate the class: @tool_name("...") on "Nameless"'


def test_inherited_name_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(SplitNoteAgain,))
    assert _only(error, "harness-name") == (
        'Tool "SplitNoteAgain" only inherits the name "split_note" from "SplitNote"'
    )


def test_invalid_name_set_by_hand_is_refused() -> None:
    class Finisher(DecisionTool[Note, Note]):
        async def execute(self, input: Note, context: JobContext) -> Note:
            raise NotImplementedError

    Finisher.__harness_tool_name__ = "finish"  # type: ignore[attr-defined]  # bypassing @tool_name on purpose
    error = _error(key_tool=JudgeNote, palette=(Finisher,))
    assert _only(error, "harness-name") == (
        'Invalid tool name "finish" for "Finisher": tool name \'finish\' is reserved for the '
        "thinker's own move"
    )


# harness-ctor


def test_optional_constructor_argument_passes() -> None:
    _legal(key_tool=JudgeNote, palette=(OptionalTwice,))


def test_changed_constructor_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(Twice,))
    assert _only(error, "harness-ctor") == (
        'Tool "Twice" cannot be built from its parent alone: its constructor takes (parent, times)'
    )


# harness-open-type


def test_bound_types_pass() -> None:
    _legal(key_tool=JudgeParts, palette=(SplitNote,))


def test_any_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(Loose,))
    assert _only(error, "harness-open-type") == 'Tool "Loose" leaves its output type open (Any)'


def test_open_type_variable_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(Echo,))
    assert _only(error, "harness-open-type") == (
        'Tool "Echo" leaves its input type open (type variable "T")'
    )


# harness-duplicate


def test_key_tool_listed_twice_counts_once() -> None:
    _legal(key_tool=JudgeNote, palette=(JudgeNote, RefineNote))


def test_duplicate_names_are_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(SplitNote, SplitNoteToo))
    assert _only(error, "harness-duplicate") == (
        'Tool name "split_note" of "SplitNoteToo" is already used by "SplitNote" in this palette'
    )


# harness-key-tool


def test_key_tool_producing_list_of_subtype_passes() -> None:
    _legal(key_tool=JudgeNote, palette=(), output_type=Artifact)


def test_key_tool_producing_other_list_is_refused() -> None:
    error = _error(key_tool=SplitNote, palette=())
    assert _only(error, "harness-key-tool") == (
        'Key tool "SplitNote" produces "ListArtifact[Part]", not "ListArtifact[Verdict]"'
    )


def test_key_tool_producing_no_list_is_refused() -> None:
    error = _error(key_tool=RefineNote, palette=())
    assert _only(error, "harness-key-tool") == (
        'Key tool "RefineNote" produces "SubNote", not "ListArtifact[Verdict]"'
    )


# harness-graph


def test_key_tool_reachable_through_list_iterands_passes() -> None:
    report = validate_palette(
        thinker_input=Note, output_type=Verdict, key_tool=JudgePart, palette=(SplitNote,)
    )
    assert report.reachable == (Note, ListArtifact[Part], Part, ListArtifact[Verdict], Verdict)


def test_key_tool_reachable_through_subclass_passes() -> None:
    _legal(thinker_input=SubNote, key_tool=JudgeNote, palette=())


def test_unreachable_key_tool_is_refused() -> None:
    error = _error(key_tool=JudgeOrphan, palette=(SplitNote,))
    assert _only(error, "harness-graph") == (
        'Key tool "JudgeOrphan" takes "Orphan", which no run starting from "Note" can produce'
    )
    assert error.verdicts[0].notes[0] == (
        'Reachable from "Note": "Note", "ListArtifact[Part]", "Part"'
    )


def test_unknown_thinker_input_is_not_called_legal() -> None:
    """Without the thinker's input, reachability cannot be judged: the report says so (and is
    not legal), but nothing judged is broken, so the validator does not raise."""
    report = validate_palette(
        thinker_input=None, output_type=Verdict, key_tool=JudgeOrphan, palette=(ReadOrphan,)
    )
    assert report.verdicts == ()
    assert not report.legal
    (unproved,) = report.unproved
    assert unproved.code == "harness-undecidable"
    assert unproved.message == (
        "The thinker's input type is not known at run time: whether the key tool is reachable "
        "and every palette tool can run is not judged"
    )
    assert unproved.fix.startswith("Bind the input where the thinker is built")


def test_a_generic_alias_built_in_a_function_is_judged_by_its_type_arguments() -> None:
    """``DecisionThinker[Note, Verdict]`` kept in a variable and called elsewhere: the class is
    ``DecisionThinker`` itself, its input erased; the validator reads it from the alias."""
    from harness.thinker._thinker import DecisionThinker

    NoteTriage = DecisionThinker[Note, Verdict]

    def make(palette: tuple[type[DecisionTool[Never, Artifact]], ...]) -> object:
        return NoteTriage(
            Workflow(),
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=palette,  # type: ignore[harness-undecidable]  # the case under test
            objective="Judge the note",
        )

    with pytest.raises(PaletteError) as caught:
        make((ReadOrphan,))
    assert [v.code for v in caught.value.verdicts] == ["harness-dead-tool"]
    assert make((SplitNote,)) is not None
    with pytest.raises(PaletteError):  # judged again, not taken as proved by the first build
        make((ReadOrphan,))
    direct = DecisionThinker[SubNote, Verdict](
        Workflow(), output_type=Verdict, key_tool=JudgeNote, palette=(), objective="Judge"
    )
    assert direct.key_tool is JudgeNote
    with pytest.raises(PaletteError) as caught:
        DecisionThinker[Part, Verdict](
            Workflow(),
            output_type=Verdict,
            key_tool=JudgeNote,  # type: ignore[harness-graph]  # the case under test
            palette=(),
            objective="Judge",
        )
    assert [v.code for v in caught.value.verdicts] == ["harness-graph"]


def test_a_generic_thinker_subclass_alias_is_judged_by_its_type_arguments() -> None:
    from harness.thinker._thinker import DecisionThinker

    In = TypeVar("In", bound=Artifact)

    class Base(DecisionThinker[In, Verdict], Generic[In]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(  # type: ignore[harness-undecidable]  # the case under test
                parent,
                output_type=Verdict,
                key_tool=JudgeNote,
                palette=(ReadOrphan,),
                objective="Judge the note",
            )

    with pytest.raises(PaletteError) as caught:
        Base[Note](Workflow())
    assert [v.code for v in caught.value.verdicts] == ["harness-dead-tool"]


# harness-dead-tool


def test_every_tool_fed_passes() -> None:
    _legal(key_tool=JudgePart, palette=(RefineNote, SplitNote))


def test_dead_tool_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(ReadOrphan,))
    assert _only(error, "harness-dead-tool") == (
        'Tool "ReadOrphan" can never run: nothing reachable from "Note" is an instance of "Orphan"'
    )


# harness-objective


def test_objective_given_passes() -> None:
    _legal(key_tool=JudgeNote, palette=(), objective="Judge the note")


def test_blank_objective_is_refused() -> None:
    error = _error(key_tool=JudgeNote, palette=(), objective="  ")
    assert _only(error, "harness-objective") == (
        "The objective must be a non-blank string: say what the run is for"
    )


def test_blank_objective_reads_as_the_thinkers_own_refusal() -> None:
    from harness.thinker._thinker import DecisionThinker

    class Triage(DecisionThinker[Note, Verdict]):
        pass

    with pytest.raises(ValueError, match="non-blank") as refused:
        Triage(Workflow(), output_type=Verdict, key_tool=JudgeNote, palette=(), objective=" ")
    error = _error(key_tool=JudgeNote, palette=(), objective=" ")
    verdict = _only(error, "harness-objective")
    # the same rule, the same words: "objective must be a non-blank string: say what ..."
    assert verdict.lower().removeprefix("the ") == str(refused.value)


# every verdict at once, and the thinker's own input


def test_all_verdicts_are_reported_together() -> None:
    report = palette_report(
        thinker_input=Note,
        output_type=Verdict,
        key_tool=JudgeOrphan,
        palette=(Nameless, Twice, ReadOrphan),
    )
    assert [v.code for v in report.verdicts] == [
        "harness-name",
        "harness-ctor",
        "harness-graph",
        "harness-dead-tool",
    ]


def test_thinker_input_of_reads_the_subclass_bases() -> None:
    from harness.thinker._thinker import DecisionThinker

    class Triage(DecisionThinker[Note, Verdict]):
        pass

    assert thinker_input_of(Triage) is Note
    assert thinker_input_of(DecisionThinker) is None


# a subclass of a parameterised list: the thinker's constructor, the rules and the registry


class Parts(ListArtifact[Part], alias="v_parts"):
    pass


class Verdicts(ListArtifact[Verdict], alias="v_verdicts"):
    pass


class Bag(ListArtifact[T], Generic[T], alias="v_bag"):
    pass


class VerdictBag(Bag[Verdict], alias="v_verdict_bag"):
    pass


@tool_name("split_into_parts")
class SplitIntoParts(DecisionTool[Note, Parts]):
    async def execute(self, input: Note, context: JobContext) -> Parts:
        raise NotImplementedError


@tool_name("judge_into_verdicts")
class JudgeIntoVerdicts(DecisionTool[Part, Verdicts]):
    async def execute(self, input: Part, context: JobContext) -> Verdicts:
        raise NotImplementedError


@tool_name("bag_anything")
class BagAnything(DecisionTool[Note, Bag]):  # type: ignore[type-arg, harness-open-type]  # the case
    async def execute(self, input: Note, context: JobContext) -> Bag:  # type: ignore[type-arg]
        raise NotImplementedError


def test_list_iterand_reads_list_subclasses() -> None:
    assert list_iterand(Verdicts) is Verdict
    assert list_iterand(Bag[Part]) is Part
    assert list_iterand(VerdictBag) is Verdict
    assert list_iterand(Bag) is None  # its iterand is left unsaid
    assert list_iterand(Note) is None


def test_key_tool_producing_a_list_subclass_passes() -> None:
    report = validate_palette(
        thinker_input=Note,
        output_type=Verdict,
        key_tool=JudgeIntoVerdicts,
        palette=(SplitIntoParts,),
    )
    assert report.reachable == (Note, Parts, Part, Verdicts, Verdict)


def test_thinker_accepts_a_key_tool_producing_a_list_subclass() -> None:
    from harness.thinker._thinker import DecisionThinker

    class Triage(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent,
                output_type=Verdict,
                key_tool=JudgeIntoVerdicts,
                palette=(SplitIntoParts,),
                objective="Judge every part",
            )

    assert Triage(Workflow()).key_tool is JudgeIntoVerdicts


def test_bare_generic_list_subclass_is_open() -> None:
    error = _error(key_tool=JudgeNote, palette=(BagAnything,))
    assert _only(error, "harness-open-type") == (
        'Tool "BagAnything" leaves its output type open (Any in "Bag[Any]")'
    )


def test_a_list_subclass_instance_conforms_to_its_parameterised_list() -> None:
    verdicts = Verdicts(Verdict, (Verdict(True),))
    assert conforms(verdicts, cast(type[Artifact], ListArtifact[Verdict]))
    assert conforms(verdicts, Verdicts)
    assert not conforms(verdicts, cast(type[Artifact], ListArtifact[Part]))


VerdictList = typing_extensions.TypeAliasType("VerdictList", ListArtifact[Verdict])
PartAlias = typing_extensions.TypeAliasType("PartAlias", Part)
Listed_T = TypeVar("Listed_T", bound=Artifact)
Listed = typing_extensions.TypeAliasType("Listed", ListArtifact[Listed_T], type_params=(Listed_T,))


@tool_name("judge_into_listed")
class JudgeIntoListed(DecisionTool[Note, Listed[Verdict]]):
    async def execute(self, input: Note, context: JobContext) -> Listed[Verdict]:
        raise NotImplementedError


@tool_name("judge_into_alias")
class JudgeIntoAlias(DecisionTool[Note, VerdictList]):
    async def execute(self, input: Note, context: JobContext) -> VerdictList:
        raise NotImplementedError


@tool_name("judge_part_alias")
class JudgePartAlias(DecisionTool[PartAlias, ListArtifact[Verdict]]):
    async def execute(self, input: PartAlias, context: JobContext) -> ListArtifact[Verdict]:
        raise NotImplementedError


def test_a_type_alias_type_is_read_as_the_type_it_names() -> None:
    """``TypeAliasType("VerdictList", ListArtifact[Verdict])`` is that list type, as mypy reads
    it, on either side of a tool and in a key tool's output."""
    report = validate_palette(
        thinker_input=Note, output_type=Verdict, key_tool=JudgeIntoAlias, palette=()
    )
    assert report.legal
    assert report.reachable == (Note, ListArtifact[Verdict], Verdict)
    error = _error(key_tool=JudgePartAlias, palette=())
    assert _only(error, "harness-graph") == (
        'Key tool "JudgePartAlias" takes "Part", which no run starting from "Note" can produce'
    )
    _legal(key_tool=JudgePartAlias, palette=(SplitNote,))
    _legal(key_tool=JudgeIntoListed, palette=())
    assert tool_types(JudgeIntoListed) == (Note, ListArtifact[Verdict])
    assert tool_types(JudgeIntoAlias) == (Note, ListArtifact[Verdict])

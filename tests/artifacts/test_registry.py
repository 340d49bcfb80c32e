"""The run's world: refs, order, identity, lookups."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.artifacts import Artifact, ArtifactRegistry, LinkArtifact, ListArtifact, conforms
from harness.errors import LLMReadableError, NotFoundError


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class SubNote(Note, alias="sub_note"):
    pass


@attrs.frozen
class Verdict(Artifact):
    keep: bool


def _adopt_sequence(world: ArtifactRegistry) -> list[str]:
    parts = ListArtifact.of(Note, [Note("alpha is due"), Note("beta can wait")])
    return [
        world.adopt(Note("alpha is due; beta can wait")),
        world.adopt(parts),
        world.adopt(ListArtifact.of(Verdict, [Verdict(True)])),
        world.adopt(Note("alpha is due")),
    ]


def test_refs_count_per_alias_and_repeat_across_runs() -> None:
    first, second = ArtifactRegistry(), ArtifactRegistry()
    refs = _adopt_sequence(first)
    assert refs == ["note#1", "list#1", "list#2", "note#4"]
    assert _adopt_sequence(second) == refs
    assert [ref for ref, _ in first.world()] == [ref for ref, _ in second.world()]
    assert [ref for ref, _ in first.world()] == [
        "note#1",
        "list#1",
        "note#2",
        "note#3",
        "list#2",
        "verdict#1",
        "note#4",
    ]


def test_world_order_with_nested_lists_is_depth_first_in_list_order() -> None:
    a, b, c, d = Note("a"), Note("b"), Note("c"), Note("d")
    inner = ListArtifact.of(Note, [b, c])
    outer = ListArtifact(ListArtifact, (ListArtifact.of(Note, [a]), inner))
    world = ArtifactRegistry()
    assert world.adopt(d) == "note#1"
    assert world.adopt(outer) == "list#1"
    assert [(ref, obj) for ref, obj in world.world()] == [
        ("note#1", d),
        ("list#1", outer),
        ("list#2", outer.iterands[0]),
        ("note#2", a),
        ("list#3", inner),
        ("note#3", b),
        ("note#4", c),
    ]
    assert len(world) == 7
    assert world.get("list#3") is inner
    assert world.ref(c) == "note#4"


def test_same_object_twice_keeps_its_ref_and_equal_objects_get_two() -> None:
    world = ArtifactRegistry()
    note = Note("same")
    twin = Note("same")
    assert note == twin
    assert world.adopt(note) == "note#1"
    assert world.adopt(note) == "note#1"
    assert len(world) == 1
    assert twin not in world
    assert world.adopt(twin) == "note#2"
    assert note in world
    assert twin in world
    assert world.get("note#1") is note
    assert world.get("note#2") is twin


def test_a_list_skips_iterands_already_in_the_world() -> None:
    world = ArtifactRegistry()
    part = Note("part")
    world.adopt(part)
    parts = ListArtifact.of(Note, [part, Note("other")])
    assert world.adopt(parts) == "list#1"
    assert [ref for ref, _ in world.world()] == ["note#1", "list#1", "note#2"]
    assert world.ref(part) == "note#1"
    assert world.adopt(parts) == "list#1"
    assert len(world) == 3


def test_get_of_an_unknown_ref_is_a_readable_not_found_naming_it() -> None:
    world = ArtifactRegistry()
    world.adopt(Note("x"))
    with pytest.raises(NotFoundError, match=r"'note#7'") as caught:
        world.get("note#7")
    assert isinstance(caught.value, LLMReadableError)
    assert caught.value.correctable
    assert "1 artifacts" in caught.value.message


def test_ref_of_an_artifact_never_adopted_names_its_type() -> None:
    world = ArtifactRegistry()
    world.adopt(Note("x"))
    with pytest.raises(KeyError, match=r"Verdict \(alias 'verdict'\) was never adopted"):
        world.ref(Verdict(False))
    with pytest.raises(KeyError, match="Note"):
        world.ref(Note("x"))  # equal to the adopted one, but another object


def test_only_artifacts_are_adopted() -> None:
    with pytest.raises(TypeError, match="only artifacts join a run's world, not a str"):
        ArtifactRegistry().adopt("text")  # type: ignore[arg-type]


def test_instances_in_world_order_by_class_and_by_list_type() -> None:
    world = ArtifactRegistry()
    sub = SubNote("sub")
    notes = ListArtifact.of(Note, [Note("n")])
    subs = ListArtifact.of(SubNote, [])
    verdicts = ListArtifact.of(Verdict, [Verdict(True)])
    link = LinkArtifact("docs", "https://example.org")
    for artifact in (sub, notes, link, subs, verdicts):
        world.adopt(artifact)
    assert world.instances(Note) == [("sub_note#1", sub), ("note#1", notes.iterands[0])]
    assert world.instances(SubNote) == [("sub_note#1", sub)]
    assert world.instances(LinkArtifact) == [("link#1", link)]
    assert world.instances(ListArtifact) == [
        ("list#1", notes),
        ("list#2", subs),
        ("list#3", verdicts),
    ]
    # A list of sub-notes is a list of notes (covariance); a list of verdicts is not.
    assert world.instances(ListArtifact[Note]) == [("list#1", notes), ("list#2", subs)]
    assert world.instances(ListArtifact[SubNote]) == [("list#2", subs)]
    assert world.instances(ListArtifact[Verdict]) == [("list#3", verdicts)]
    assert len(world.instances(Artifact)) == len(world) == 7


def test_conforms_reads_nested_list_types_by_their_iterands() -> None:
    nested = ListArtifact(ListArtifact, (ListArtifact.of(Note, [Note("a")]),))
    assert conforms(nested, ListArtifact[ListArtifact[Note]])
    assert not conforms(nested, ListArtifact[ListArtifact[Verdict]])
    assert not conforms(nested, ListArtifact[Note])
    assert not conforms(Note("a"), ListArtifact[Note])


def test_ten_thousand_artifacts_adopt_and_look_up_in_linear_time() -> None:
    world = ArtifactRegistry()
    notes = [Note(str(i)) for i in range(10_000)]
    refs = [world.adopt(note) for note in notes]
    for note in notes:
        assert note in world
    assert [world.ref(note) for note in notes] == refs
    assert world.adopt(ListArtifact.of(Note, notes)) == "list#1"
    assert refs[-1] == "note#10000"
    assert len(world) == 10_001


_trees = st.recursive(
    st.text(max_size=3).map(Note),
    lambda children: st.lists(children, max_size=3).map(
        lambda items: ListArtifact(Artifact, tuple(items))
    ),
    max_leaves=12,
)


def _preorder(artifact: Artifact) -> list[Artifact]:
    out = [artifact]
    if isinstance(artifact, ListArtifact):
        for item in artifact.iterands:
            out.extend(_preorder(item))
    return out


@given(_trees)
def test_world_is_the_preorder_of_what_was_adopted(tree: Artifact) -> None:
    world = ArtifactRegistry()
    world.adopt(tree)
    expected = _preorder(tree)
    assert [obj for _, obj in world.world()] == expected
    notes = [ref for ref, obj in world.world() if isinstance(obj, Note)]
    lists = [ref for ref, obj in world.world() if isinstance(obj, ListArtifact)]
    assert notes == [f"note#{n}" for n in range(1, len(notes) + 1)]
    assert lists == [f"list#{n}" for n in range(1, len(lists) + 1)]


def test_a_list_of_lists_is_adopted_depth_first_and_bad_iterand_types_are_refused() -> None:
    inner = ListArtifact.of(Note, [Note("a"), Note("b")])
    outer = ListArtifact.of(ListArtifact[Note], [inner])
    world = ArtifactRegistry()
    world.adopt(outer)
    assert [ref for ref, _ in world.world()] == ["list#1", "list#2", "note#1", "note#2"]
    with pytest.raises(TypeError, match="must be an Artifact class"):
        ListArtifact(int, (1,))  # type: ignore[type-var]
    with pytest.raises(TypeError, match="item 0 of a list of ListArtifact is a Note"):
        ListArtifact.of(ListArtifact[Note], [Note("x")])

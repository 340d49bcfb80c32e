"""Artifacts to and from JSON through the cattrs converter."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from pathlib import PurePosixPath

import attrs
import pytest

from harness.artifacts import (
    Artifact,
    LinkArtifact,
    ListArtifact,
    UnknownFieldError,
    artifact_converter,
    from_json,
    refuse_unknown_fields,
    to_json,
)
from harness.artifacts._convert import with_article


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class SubNote(Note):
    tag: str = "sub"


@attrs.frozen
class Statement(Artifact):
    payee: str
    amount: int
    memo: str | None = None


@attrs.frozen
class Envelope(Artifact):
    """Fields declared with a base type keep their runtime class's fields."""

    content: Artifact
    note: Note
    tags: frozenset[str] = frozenset()


@attrs.frozen
class Receipt(Artifact):
    when: datetime.datetime
    day: datetime.date
    id: uuid.UUID
    total: decimal.Decimal
    scan: bytes
    path: PurePosixPath


@attrs.frozen
class Opaque(Artifact):
    thing: object


def test_compact_json_keeps_field_order() -> None:
    assert to_json(Statement("ACME", 12)) == '{"payee":"ACME","amount":12,"memo":null}'
    assert artifact_converter.unstructure(Note("x")) == {"text": "x"}


def test_a_list_unstructures_with_its_iterand_alias() -> None:
    notes = ListArtifact.of(Note, [Note("a"), SubNote("b")], instruction="keep")
    assert artifact_converter.unstructure(notes) == {
        "iterand_type": "note",
        "iterands": [{"text": "a"}, {"text": "b", "tag": "sub"}],
        "instruction": "keep",
    }
    nested = ListArtifact(ListArtifact, (ListArtifact.of(Statement, []),))
    assert to_json(nested) == (
        '{"iterand_type":"list","iterands":[{"iterand_type":"statement","iterands":[],'
        '"instruction":null}],"instruction":null}'
    )


def test_fields_unstructure_by_runtime_class_and_sets_sort() -> None:
    envelope = Envelope(
        LinkArtifact("t", "https://example.org"), SubNote("n", "x"), frozenset({"b", "a", "c"})
    )
    assert json.loads(to_json(envelope)) == {
        "content": {"title": "t", "url": "https://example.org"},
        "note": {"text": "n", "tag": "x"},
        "tags": ["a", "b", "c"],
    }


def test_text_stays_readable_and_on_one_line() -> None:
    text = to_json(Note("café\nline\u2028sep\x85end"))
    assert text == '{"text":"café\\nline\\u2028sep\\u0085end"}'
    assert text.splitlines() == [text]
    assert from_json(Note, text) == Note("café\nline\u2028sep\x85end")


def test_common_value_types_round_trip() -> None:
    receipt = Receipt(
        datetime.datetime(2025, 3, 1, 12, 30, tzinfo=datetime.UTC),
        datetime.date(2025, 3, 2),
        uuid.UUID(int=5),
        decimal.Decimal("12.50"),
        b"\x00\xff",
        PurePosixPath("/tmp/scan.png"),
    )
    text = to_json(receipt)
    assert json.loads(text) == {
        "when": "2025-03-01T12:30:00+00:00",
        "day": "2025-03-02",
        "id": "00000000-0000-0000-0000-000000000005",
        "total": "12.50",
        "scan": "AP8=",
        "path": "/tmp/scan.png",
    }
    assert from_json(Receipt, text) == receipt


def test_a_value_with_no_json_form_is_refused_naming_the_class_and_fix() -> None:
    with pytest.raises(TypeError, match=r"an Opaque artifact has no JSON form .*unstructure hook"):
        to_json(Opaque(object()))


def test_from_json_builds_an_artifact_by_class() -> None:
    assert from_json(Statement, '{"payee": "ACME", "amount": 3}') == Statement("ACME", 3)
    assert from_json(SubNote, b'{"text": "t", "tag": "q"}') == SubNote("t", "q")
    assert from_json(LinkArtifact, '{"title": "t", "url": "u"}') == LinkArtifact("t", "u")


def test_from_json_names_every_wrong_field_without_quoting_the_text() -> None:
    with pytest.raises(ValueError, match=r"not a valid Statement") as caught:
        from_json(Statement, '{"amount": "secret-value"}')
    message = str(caught.value)
    assert "$.payee" in message
    assert "$.amount" in message
    assert "secret-value" not in message


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("not json", r"for a Note is not JSON \(line 1, column 1\)"),
        ("[1, 2]", r"is a JSON array, not an object"),
        (b"\xff\xfe{", r"not UTF-8 text"),
    ],
)
def test_from_json_refuses_what_is_not_an_object(text: str | bytes, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        from_json(Note, text)


def test_from_json_refuses_lists_and_non_artifacts() -> None:
    with pytest.raises(TypeError, match=r"ListArtifact.of\(ItemType, items\)"):
        from_json(ListArtifact, '{"iterand_type": "note", "iterands": []}')
    with pytest.raises(TypeError, match="not an Artifact class"):
        from_json(dict, "{}")  # type: ignore[type-var]
    with pytest.raises(TypeError, match="to_json takes an Artifact, not a dict"):
        to_json({})  # type: ignore[arg-type]


@attrs.frozen
class Flags(Artifact, alias="flags"):
    keep: bool
    count: int
    name: str
    share: float


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"keep":"false","count":3,"name":"a","share":1}', "keep"),
        ('{"keep":false,"count":3.9,"name":"a","share":1}', "count"),
        ('{"keep":false,"count":true,"name":"a","share":1}', "count"),
        ('{"keep":false,"count":3,"name":[1,2],"share":1}', "name"),
        ('{"keep":false,"count":3,"name":"a","share":"1"}', "share"),
    ],
)
def test_from_json_never_coerces_a_value(text: str, field: str) -> None:
    with pytest.raises(ValueError, match=rf"\$\.{field}"):
        from_json(Flags, text)


def test_from_json_takes_an_integer_for_a_float() -> None:
    assert from_json(Flags, '{"keep":true,"count":3,"name":"a","share":2}').share == 2.0


@attrs.frozen
class Application(Artifact, alias="application"):
    candidate: str
    text: str
    note: str | None = None


def test_from_json_refuses_an_unknown_field_by_name() -> None:
    text = '{"candidate": "A", "text": "t", "age": 3}'
    with pytest.raises(UnknownFieldError) as caught:
        from_json(Application, text)
    assert str(caught.value) == (
        "unknown field 'age' for Application: expected one of candidate, text, note; remove it "
        "(or pass allow_extra=True)"
    )
    assert caught.value.unknown == ("age",)
    assert isinstance(caught.value, ValueError)
    # A command words the opt-out as its own option.
    assert caught.value.line("pass --allow-extra").endswith("remove it (or pass --allow-extra)")


def test_a_typo_in_an_optional_field_is_refused_and_two_are_named_together() -> None:
    with pytest.raises(UnknownFieldError, match=r"^unknown field 'nots' for Application"):
        from_json(Application, '{"candidate": "A", "text": "t", "nots": "x"}')
    with pytest.raises(UnknownFieldError, match=r"^unknown fields 'age', 'zip' .*remove them"):
        from_json(Application, '{"candidate": "A", "text": "t", "zip": 1, "age": 3}')


def test_allow_extra_drops_the_unknown_fields() -> None:
    text = '{"candidate": "A", "text": "t", "age": 3}'
    assert from_json(Application, text, allow_extra=True) == Application("A", "t")


def test_refuse_unknown_fields_checks_a_mapping_as_from_json_does() -> None:
    refuse_unknown_fields(Application, {"candidate": "A", "text": "t"})
    with pytest.raises(UnknownFieldError, match=r"\(or pass --allow-extra\)$"):
        refuse_unknown_fields(Application, {"age": 3}, opt_out="pass --allow-extra")


@pytest.mark.parametrize("text", ["not json", "[1]", '{"candidate": 3, "text": "t"}'])
def test_a_class_named_with_a_vowel_takes_an(text: str) -> None:
    with pytest.raises(ValueError, match="Application") as caught:
        from_json(Application, text)
    assert "a Application" not in str(caught.value)
    assert "an Application" in str(caught.value) or "valid Application" in str(caught.value)


def test_the_article_follows_the_sound_of_the_first_letter() -> None:
    assert [with_article(w) for w in ("Application", "Note", "item", "Opaque")] == [
        "an Application",
        "a Note",
        "an item",
        "an Opaque",
    ]

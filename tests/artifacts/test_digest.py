"""Digest lines: what a decision model reads about an artifact."""

from __future__ import annotations

import copy

import attrs
import pytest

from harness.artifacts import (
    DIGEST_CHARS,
    Artifact,
    LinkArtifact,
    ListArtifact,
    TextFormatterRegistry,
    digest_line,
    digest_words,
)


@attrs.frozen
class Note(Artifact, alias="note"):
    text: str


@attrs.frozen
class SubNote(Note):
    pass


@attrs.frozen
class Statement(Artifact):
    payee: str
    amount: int


@attrs.frozen
class Headline(LinkArtifact):
    section: str = "news"


def test_digest_chars_is_160() -> None:
    assert DIGEST_CHARS == 160


@pytest.mark.parametrize(
    ("length", "expected_length", "cut"),
    [(159, 159, False), (160, 160, False), (161, 163, True), (500, 163, True)],
)
def test_words_are_cut_at_160_characters_with_an_ellipsis(
    length: int, expected_length: int, cut: bool
) -> None:
    formatters = TextFormatterRegistry()
    formatters.register(Note, lambda note: note.text)
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    words = digest_words(Note(text), formatters)
    assert len(words) == expected_length
    assert words.endswith("...") is cut
    assert words == (text[:160] + "..." if cut else text)


def test_a_cut_line_keeps_ref_and_alias() -> None:
    link = LinkArtifact("é" * 200, "https://example.org")
    line = digest_line("link#3", link, TextFormatterRegistry())
    assert line == "link#3 (link): " + "é" * 160 + "..."


def test_a_link_reads_as_its_title() -> None:
    link = LinkArtifact("Quarterly report\n  2025", "https://example.org/q")
    formatters = TextFormatterRegistry()
    assert digest_words(link, formatters) == "Quarterly report 2025"
    assert digest_line("link#1", link, formatters) == "link#1 (link): Quarterly report 2025"
    # A subclass of a link is a link too.
    headline = Headline("Rates rise", "https://example.org/r")
    assert digest_line("headline#1", headline, formatters) == "headline#1 (headline): Rates rise"


def test_a_list_reads_as_its_count_and_iterand_alias() -> None:
    formatters = TextFormatterRegistry()
    formatters.register(Note, lambda note: "never used for the list itself")
    notes = ListArtifact.of(Note, [Note("a"), Note("b")])
    assert digest_words(notes, formatters) == "a list of 2 note"
    assert digest_line("list#1", notes, formatters) == "list#1 (list): a list of 2 note"


def test_an_empty_list_still_says_what_it_is_a_list_of() -> None:
    empty = ListArtifact.of(Statement, [])
    assert digest_words(empty, TextFormatterRegistry()) == "a list of 0 statement"
    nested = ListArtifact(ListArtifact, (empty,))
    assert digest_words(nested, TextFormatterRegistry()) == "a list of 1 list"


def test_a_registered_multi_line_formatter_becomes_one_line() -> None:
    formatters = TextFormatterRegistry()
    formatters.register(
        Statement, lambda s: f"  Payee: {s.payee}\n\tAmount:\r\n {s.amount}\u2028EUR \n"
    )
    line = digest_line("statement#1", Statement("ACME", 120), formatters)
    assert line == "statement#1 (statement): Payee: ACME Amount: 120 EUR"
    assert line.splitlines() == [line]


def test_a_subclass_uses_its_base_formatter_unless_it_has_its_own() -> None:
    formatters = TextFormatterRegistry()
    formatters.register(Note, lambda note: f"note: {note.text}")
    assert digest_words(SubNote("child"), formatters) == "note: child"
    formatters.register(SubNote, lambda note: f"sub: {note.text}")
    assert digest_words(SubNote("child"), formatters) == "sub: child"
    assert digest_words(Note("parent"), formatters) == "note: parent"
    assert formatters.formatter_for(Statement) is None


def test_a_formatter_wins_over_a_link_title() -> None:
    formatters = TextFormatterRegistry()
    formatters.register(Headline, lambda h: f"[{h.section}] {h.title}")
    assert digest_words(Headline("Rates rise", "u"), formatters) == "[news] Rates rise"


def test_without_formatter_the_words_are_the_compact_json() -> None:
    formatters = TextFormatterRegistry()
    line = digest_line("statement#2", Statement("ACME\nLtd", 7), formatters)
    assert line == 'statement#2 (statement): {"payee":"ACME\\nLtd","amount":7}'
    assert line.splitlines() == [line]
    long = Statement("x" * 300, 1)
    words = digest_words(long, formatters)
    assert words == ('{"payee":"' + "x" * 300)[:160] + "..."


def test_a_formatter_must_return_text() -> None:
    formatters = TextFormatterRegistry()
    formatters.register(Note, lambda note: 42)  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="formatter for Note returned a int"):
        digest_words(Note("x"), formatters)


def test_registration_is_for_artifact_classes_and_never_for_lists() -> None:
    formatters = TextFormatterRegistry()
    with pytest.raises(TypeError, match="Artifact class"):
        formatters.register(str, str)  # type: ignore[type-var]
    with pytest.raises(ValueError, match="always its count"):
        formatters.register(ListArtifact, lambda items: "nope")


def test_a_copy_is_independent() -> None:
    base = TextFormatterRegistry()
    base.register(Note, lambda note: "base")
    twin = base.copy()
    twin.register(Statement, lambda s: "twin")
    twin.register(Note, lambda note: "replaced")
    assert base.format(Note("x")) == "base"
    assert base.format(Statement("a", 1)) is None
    assert twin.format(Note("x")) == "replaced"
    assert copy.copy(base).format(Note("x")) == "base"
    assert Note in base
    assert SubNote not in base
    assert len(twin) == 2

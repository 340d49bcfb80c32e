"""The demo's corpus and tools: list_folder, read_document, split_statements, read_statements,
the formatters."""

from __future__ import annotations

import json
import pathlib
import zipfile
from typing import TYPE_CHECKING, cast

import pytest

from harness.artifacts import ListArtifact, TextFormatterRegistry, digest_words
from harness.demo import (
    MAX_DOCUMENT_BYTES,
    Document,
    Folder,
    ListFolder,
    ReadDocument,
    ReadStatements,
    SplitStatements,
    Statement,
    TextFile,
    UnreadableDocumentError,
    corpus_path,
    register_formatters,
    shown_path,
    split_into_statements,
    survey_folder,
)
from harness.errors import InvalidInputError, LLMReadableError, NotFoundError
from harness.tools import ClassToolProvider, Workflow

if TYPE_CHECKING:
    from harness.jobs import JobContext

NO_CONTEXT = cast("JobContext", None)  # the demo's tools never read their context
ANSWER_KEY = pathlib.Path(__file__).parents[2] / "harness" / "demo" / "answer_key.json"
REFUSED = {
    "empty": "is empty",
    "pdf": "is a PDF",
    "image": "is an image",
    "office": "is an office file",
    "binary": "is a binary file",
}


async def list_corpus() -> ListArtifact[TextFile]:
    return await ListFolder(Workflow()).execute(Folder(str(corpus_path())), NO_CONTEXT)


async def read(ref: TextFile) -> Document:
    return await ReadDocument(Workflow()).execute(ref, NO_CONTEXT)


def ref_of(path: pathlib.Path) -> TextFile:
    """A text file entry for ``path``, as list_folder makes one: relative to its folder."""
    return TextFile(path.name, "text", path.stat().st_size, folder=str(path.parent))


def size_on_disk(ref: TextFile) -> int:
    return pathlib.Path(ref.location).stat().st_size


# -- the corpus ---------------------------------------------------------------------------------


def test_corpus_has_about_thirty_files_of_every_listed_kind_in_under_200_kb() -> None:
    files = [p for p in corpus_path().rglob("*") if p.is_file()]
    assert 28 <= len(files) <= 36
    assert sum(p.stat().st_size for p in files) < 200_000
    suffixes = {p.suffix for p in files}
    assert {".md", ".txt", ".py", ".csv", ".json", ".pdf", ".png", ".jpg", ".docx", ".xlsx"} <= (
        suffixes
    )
    assert [p.name for p in files if p.stat().st_size == 0] == ["todo.md"]


def test_the_survey_finds_every_kind_of_file() -> None:
    kinds = [file.kind for file in survey_folder(str(corpus_path()))]
    assert set(kinds) == {"text", "code", "data", "office", "pdf", "image", "binary", "empty"}
    assert kinds.count("empty") == 1
    assert kinds.count("text") >= 15


def test_the_binary_files_are_real_ones() -> None:
    root = corpus_path()
    for office in ("finance/board-resolution-2027-01.docx", "finance/price-list-2027.xlsx"):
        with zipfile.ZipFile(root / office) as archive:
            assert archive.testzip() is None
            assert "[Content_Types].xml" in archive.namelist()
    pdf = (root / "finance/annual-report-2026.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.4")
    assert pdf.rstrip().endswith(b"%%EOF")
    assert b"startxref" in pdf
    png = (root / "assets/logo.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png[12:16] == b"IHDR"
    assert png.endswith(b"IEND\xaeB`\x82")
    jpeg = (root / "assets/team-photo.jpg").read_bytes()
    assert jpeg.startswith(b"\xff\xd8\xff")
    assert jpeg.endswith(b"\xff\xd9")
    assert (root / "archive/billing-2026.db").read_bytes().startswith(b"SQLite format 3\x00")


def test_the_answer_key_names_real_files_and_sentences() -> None:
    key = json.loads(ANSWER_KEY.read_text(encoding="utf-8"))
    assert len(key["decisions"]) >= 5
    for decision in key["decisions"]:
        text = (corpus_path() / decision["file"]).read_text(encoding="utf-8")
        assert decision["sentence"] in text


# -- list_folder --------------------------------------------------------------------------------


async def test_list_folder_lists_exactly_the_text_files_sorted_and_deterministic() -> None:
    first = await list_corpus()
    second = await list_corpus()
    assert first == second
    assert first.iterand_type is TextFile
    assert all(type(ref) is TextFile for ref in first)
    names = [ref.path for ref in first]
    assert names == sorted(names)
    survey = survey_folder(str(corpus_path()))
    on_disk = sorted(
        p.relative_to(corpus_path()).as_posix() for p in corpus_path().rglob("*") if p.is_file()
    )
    assert [file.path for file in survey] == on_disk
    assert names == [file.path for file in survey if file.kind in {"text", "code", "data"}]
    left_out = {file.path for file in survey} - set(names)
    # Every file left out is one a reader would refuse: the types rule it out, not a turn.
    for path in sorted(left_out):
        with pytest.raises(UnreadableDocumentError):
            await read(ref_of(corpus_path() / path))
    assert len(left_out) == 10
    for ref in first:
        assert ref.folder == str(corpus_path())
        assert ref.size == size_on_disk(ref)


async def test_list_folder_leaves_out_blank_and_oversized_text(tmp_path: pathlib.Path) -> None:
    (tmp_path / "blank.md").write_text("  \n\n\t\n", encoding="utf-8")
    (tmp_path / "huge.txt").write_text("word " * (MAX_DOCUMENT_BYTES // 5 + 1), encoding="utf-8")
    (tmp_path / "note.txt").write_text("A real note.\n", encoding="utf-8")
    listing = await ListFolder(Workflow()).execute(Folder(str(tmp_path)), NO_CONTEXT)
    assert [ref.path for ref in listing] == ["note.txt"]
    assert [(f.path, f.kind) for f in survey_folder(str(tmp_path))] == [
        ("blank.md", "empty"),
        ("huge.txt", "large"),
        ("note.txt", "text"),
    ]


async def test_list_folder_walks_subfolders_of_any_folder(tmp_path: pathlib.Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deep.md").write_text("Deep notes here.\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("A note.\n", encoding="utf-8")
    listing = await ListFolder(Workflow()).execute(Folder(str(tmp_path)), NO_CONTEXT)
    assert [(r.path, r.kind, r.size) for r in listing] == [
        ("a.txt", "text", 8),
        ("b/deep.md", "text", 17),
    ]


async def test_list_folder_refuses_a_missing_folder_and_a_file(tmp_path: pathlib.Path) -> None:
    tool = ListFolder(Workflow())
    with pytest.raises(NotFoundError, match=r"^folder nowhere does not exist") as missing:
        await tool.execute(Folder(str(tmp_path / "nowhere")), NO_CONTEXT)
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="it is a file, not a folder") as a_file:
        await tool.execute(Folder(str(tmp_path / "file.txt")), NO_CONTEXT)
    # The model reads these messages: they name the folder, never where it is on disk.
    assert str(tmp_path) not in missing.value.message
    assert str(tmp_path) not in a_file.value.message


# -- read_document ------------------------------------------------------------------------------


async def test_read_document_refuses_each_unreadable_kind_with_its_reason() -> None:
    # Nothing listed is unreadable; a file that changed since the listing (here: an entry made
    # by hand for each file the survey left out) is refused with its reason.
    left_out = [f for f in survey_folder(str(corpus_path())) if f.kind in REFUSED]
    assert {f.kind for f in left_out} == set(REFUSED)
    for listed in left_out:
        ref = TextFile(listed.path, "text", listed.size, folder=str(corpus_path()))
        with pytest.raises(UnreadableDocumentError) as caught:
            await read(ref)
        error = caught.value
        assert isinstance(error, InvalidInputError)
        assert isinstance(error, LLMReadableError)
        assert error.correctable
        assert error.kind == listed.kind
        name = pathlib.Path(ref.path).name
        assert error.message.startswith(shown_path(ref.path))
        assert f"{name} {REFUSED[listed.kind]}" in error.message
        assert str(error) == error.message
    pdf = next(f for f in left_out if f.kind == "pdf")
    with pytest.raises(UnreadableDocumentError) as caught:
        await read(TextFile(pdf.path, "text", pdf.size, folder=str(corpus_path())))
    assert caught.value.message.endswith(
        "annual-report-2026.pdf is a PDF: only text files can be read"
    )


async def test_read_document_judges_by_content_not_by_extension_or_listed_kind(
    tmp_path: pathlib.Path,
) -> None:
    export = corpus_path() / "archive" / "legacy-export.txt"
    with pytest.raises(
        UnreadableDocumentError,
        match=r"legacy-export\.txt is a binary file \(it contains NUL bytes\)",
    ):
        await read(ref_of(export))  # listed as text here: the content decides
    latin = tmp_path / "old-notes.txt"
    latin.write_bytes("Le prix passe à 15 EUR le 1er mars.".encode("latin-1"))
    with pytest.raises(UnreadableDocumentError, match="it is not UTF-8 text"):
        await read(ref_of(latin))
    blank = tmp_path / "blank.md"
    blank.write_text("  \n\n\t\n", encoding="utf-8")
    with pytest.raises(UnreadableDocumentError, match="blank space"):
        await read(ref_of(blank))
    disguised = tmp_path / "notes.md"
    disguised.write_bytes((corpus_path() / "assets" / "logo.png").read_bytes())
    with pytest.raises(UnreadableDocumentError, match=r"notes\.md is an image"):
        await read(ref_of(disguised))


async def test_read_document_reads_text_and_names_a_missing_file(tmp_path: pathlib.Path) -> None:
    readme = corpus_path() / "README.md"
    document = await read(ref_of(readme))
    assert document == Document("README.md", readme.read_text(encoding="utf-8"))
    with pytest.raises(NotFoundError, match=r"^gone\.md does not exist") as gone:
        await read(TextFile("gone.md", "text", 10, folder=str(tmp_path)))
    assert str(tmp_path) not in gone.value.message


async def test_read_document_reads_every_file_of_the_listing() -> None:
    listed = await list_corpus()
    assert {ref.kind for ref in listed} == {"text", "code", "data"}
    for ref in listed:
        document = await read(ref)
        assert document.path == ref.path
        assert len(document.text.encode("utf-8")) == ref.size


async def test_read_statements_is_read_then_split_in_one_move() -> None:
    splitter = SplitStatements(Workflow())
    reader = ReadStatements(Workflow())
    for ref in await list_corpus():
        both = await reader.execute(ref, NO_CONTEXT)
        assert both == await splitter.execute(await read(ref), NO_CONTEXT)
        assert all(statement.source == ref.path for statement in both)


# -- split_statements ---------------------------------------------------------------------------


async def test_split_statements_finds_every_planted_decision_with_its_source() -> None:
    key = json.loads(ANSWER_KEY.read_text(encoding="utf-8"))
    splitter = SplitStatements(Workflow())
    for decision in key["decisions"]:
        path = corpus_path() / decision["file"]
        listed = TextFile(decision["file"], "text", path.stat().st_size, str(corpus_path()))
        statements = await splitter.execute(await read(listed), NO_CONTEXT)
        assert statements.iterand_type is Statement
        assert Statement(decision["file"], decision["sentence"]) in statements.iterands
        assert all(s.source == decision["file"] for s in statements)


async def test_split_statements_drops_code_data_and_short_lines() -> None:
    splitter = SplitStatements(Workflow())
    code = corpus_path() / "engineering" / "src" / "pricing.py"
    texts = [s.text for s in await splitter.execute(await read(ref_of(code)), NO_CONTEXT)]
    assert texts == [
        "Plan prices used by the billing service.",
        "Prices are in euro cents per seat per month.",
        "The billing service reads them at start-up.",
        "TODO: read the schedule from the price list instead of this table.",
        "The monthly price of extra storage, in cents, per started 100 GB.",
    ]
    data = corpus_path() / "data" / "price-list-2026.csv"
    assert len(await splitter.execute(await read(ref_of(data)), NO_CONTEXT)) == 0


def test_statements_join_wrapped_lines_split_sentences_and_keep_abbreviations() -> None:
    text = (
        "# Pricing\n\n"
        "The board approved the change. It applies, e.g. for Pro, from\n"
        "1 March 2027.\n"
        "- Item one is a list entry\n"
        "  that wraps onto a second line.\n"
        "Summary: the outage lasted\n"
        "two hours in total.\n"
        'PRICES = {"pro": 1200}\n'
        "def price(plan): return PRICES[plan]\n"
        "The board approved the change.\n"
    )
    assert split_into_statements(text) == [
        "The board approved the change.",
        "It applies, e.g. for Pro, from 1 March 2027.",
        "Item one is a list entry that wraps onto a second line.",
        "Summary: the outage lasted two hours in total.",
    ]


def test_a_leading_header_block_is_dropped_and_nothing_else() -> None:
    email = (
        "From: Lena Fischer <lena@example.com>\n"
        "To: all-staff@example.com,\n"
        "    board@example.com\n"
        "Subject: Prices rise for every plan\n"
        "\n"
        "The board decided that prices rise on 1 March.\n"
        "Subject: this line is prose in the body, not a header.\n"
    )
    assert split_into_statements(email) == [
        "The board decided that prices rise on 1 March.",
        "Subject: this line is prose in the body, not a header.",
    ]
    # Only a block of header fields at the very start: a single "Key: value" opening line, a
    # block mixing prose in, or fields after a heading all stay statements.
    single = "Decision: the Starter plan rises from 5 to 6 EUR.\n\nMore text follows here.\n"
    assert split_into_statements(single)[0] == "Decision: the Starter plan rises from 5 to 6 EUR."
    mixed = "Owner: the finance team.\nThe board reviews the price list twice a year.\n"
    assert len(split_into_statements(mixed)) == 2
    headed = "# Minutes\n\nAttendees: Ana, Ben and Kai.\nMinutes: Jonas Weber took them.\n"
    assert "Attendees: Ana, Ben and Kai." in split_into_statements(headed)


async def test_the_shipped_emails_yield_no_header_statements() -> None:
    splitter = SplitStatements(Workflow())
    emails = sorted((corpus_path() / "email").iterdir())
    assert emails
    for path in emails:
        texts = [s.text for s in await splitter.execute(await read(ref_of(path)), NO_CONTEXT)]
        assert texts
        assert not [t for t in texts if t.startswith(("From:", "To:", "Date:", "Subject:"))]


# -- formatters and palette readiness -----------------------------------------------------------


def test_formatters_say_what_each_artifact_reads_as() -> None:
    registry = TextFormatterRegistry()
    register_formatters(registry)
    ref = TextFile("notes/todo.md", "text", 12)
    assert digest_words(ref, registry) == "notes/todo.md (text, 12 bytes)"
    document = Document("minutes/board.md", "# Board meeting\n\nThe board approved raising prices.")
    assert (
        digest_words(document, registry)
        == "minutes/board.md: # Board meeting The board approved raising prices."
    )
    statement = Statement("minutes/board.md", "The board approved raising prices.")
    assert digest_words(statement, registry) == "The board approved raising prices."
    assert digest_words(Folder("corpus"), registry) == "corpus"
    assert digest_words(Folder("/opt/venv/site-packages/harness/demo/corpus/"), registry) == (
        "corpus"
    )
    deep = TextFile("/opt/site-packages/harness/demo/corpus/minutes/2027/board.md", "text", 9)
    assert digest_words(deep, registry) == ".../minutes/2027/board.md (text, 9 bytes)"


def test_the_tools_are_palette_ready() -> None:
    tools = (ListFolder, ReadDocument, SplitStatements, ReadStatements)
    providers = [ClassToolProvider(tool) for tool in tools]
    assert [p.name for p in providers] == [
        "list_folder",
        "read_document",
        "split_statements",
        "read_statements",
    ]
    assert [(p.input_type, p.output_type) for p in providers] == [
        (Folder, ListArtifact[TextFile]),
        (TextFile, Document),
        (Document, ListArtifact[Statement]),
        (TextFile, ListArtifact[Statement]),
    ]
    assert "left out" in providers[0].description


def test_bytecode_caches_are_no_documents(tmp_path: pathlib.Path) -> None:
    # pip compiles the shipped corpus's .py files into __pycache__ when harness is installed
    # as a wheel: the survey must read the same as in a checkout
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pricing.py").write_text("PRICE = 7\n", encoding="utf-8")
    (tmp_path / "src" / "__pycache__").mkdir()
    (tmp_path / "src" / "__pycache__" / "pricing.cpython-311.pyc").write_bytes(b"\x00\x01\x02")
    assert [(f.path, f.kind) for f in survey_folder(str(tmp_path))] == [("src/pricing.py", "code")]

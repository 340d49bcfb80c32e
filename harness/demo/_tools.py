"""The demo's tools: list a folder's text files, read one, split a document into statements, or
read a text file's statements in one move.

None of them calls a model. The rule "only text files can be read" lives in the types:
:class:`ListFolder` makes a :class:`~harness.demo.TextFile` only of a file whose content reads as
text (:func:`survey_folder` says what it left out and why), and the readers take a ``TextFile``,
so the thinker never offers them an image, a PDF, an office file, a binary or an empty file. A
file that changed since it was listed still fails with an LLM-readable error naming the file and
the reason (``"finance/report.txt is a binary file (it contains NUL bytes): ..."``), so the
thinker reads it and moves on.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import TYPE_CHECKING, Final

import attrs

from harness.artifacts import ListArtifact
from harness.demo._artifacts import (
    Document,
    Folder,
    Statement,
    TextFile,
    folder_name,
    shown_path,
)
from harness.demo._kinds import READABLE_KINDS, REFUSAL_REASONS, SNIFF_BYTES, binary_reason, kind_of
from harness.demo._statements import split_into_statements
from harness.errors import InvalidInputError, NotFoundError
from harness.tools import DecisionTool, tool_description, tool_name

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_LISTED_FILES",
    "ListFolder",
    "ListedFile",
    "ReadDocument",
    "ReadStatements",
    "SplitStatements",
    "UnreadableDocumentError",
    "survey_folder",
]

MAX_LISTED_FILES: Final = 1000
"""``list_folder`` refuses a folder holding more files than this (pick a smaller folder)."""

MAX_DOCUMENT_BYTES: Final = 1_000_000
"""The readers refuse a file larger than this."""


class UnreadableDocumentError(InvalidInputError):
    """A listed text file that is no longer text when read (empty, a PDF, an image, an office
    file, a binary) or too large. The message is ``"<path> <reason>"`` (the path as listed,
    relative to the folder); ``kind`` is the kind found in the content."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        super().__init__("document", path, reason)
        self.kind = kind
        self.message = f"{shown_path(path)} {reason}"
        self.args = (self.message,)


@attrs.frozen
class ListedFile:
    """A regular file of a folder as the listing judged it: path (relative to the folder, ``/``
    separators), kind and size in bytes.

    ``kind`` is ``text``, ``code`` or ``data`` (readable), else ``empty`` (no bytes or blank
    space only), ``pdf``, ``image``, ``office``, ``binary`` or ``large`` (text over
    :data:`MAX_DOCUMENT_BYTES`).
    """

    path: str
    kind: str
    size: int

    @property
    def readable(self) -> bool:
        """Whether the listing makes a :class:`~harness.demo.TextFile` of it."""
        return self.kind in READABLE_KINDS


def survey_folder(root: str) -> tuple[ListedFile, ...]:
    """Every regular file under ``root`` with its kind and size, sorted by path.

    A missing folder, a file given as a folder or more than :data:`MAX_LISTED_FILES` files
    raise an LLM-readable error naming the folder by its own name (never where it is on disk).
    """
    name = folder_name(root)  # what the model reads of the folder: never where it is
    if not os.path.exists(root):
        raise NotFoundError(f"folder {name} does not exist: give the path of an existing folder")
    if not os.path.isdir(root):
        raise InvalidInputError("folder", name, "it is a file, not a folder")
    found: list[tuple[str, str]] = []
    for directory, subdirectories, files in os.walk(root):
        # Python's bytecode caches are no documents: an installed corpus gets them for its .py
        # files when pip compiles the package, and the listing must read the same either way.
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for file_name in files:
            full = os.path.join(directory, file_name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            found.append((relative, full))
            if len(found) > MAX_LISTED_FILES:
                raise InvalidInputError(
                    "folder",
                    name,
                    f"it holds more than {MAX_LISTED_FILES} files: list a smaller folder",
                )
    listed: list[ListedFile] = []
    for relative, full in sorted(found):
        try:
            info = os.stat(full)
        except OSError:
            continue  # a dangling link or a file gone since the walk: no document
        if not stat.S_ISREG(info.st_mode):
            continue  # sockets, pipes and devices are no documents
        try:
            with open(full, "rb") as file:
                head = file.read(SNIFF_BYTES)
        except OSError:
            continue  # unreadable by this process (permissions): nothing to offer
        complete = info.st_size <= SNIFF_BYTES
        kind = kind_of(relative, head, info.st_size, complete=complete)
        if kind in READABLE_KINDS and complete and not head.strip():
            kind = "empty"  # blank space only: no text to read
        elif kind in READABLE_KINDS and info.st_size > MAX_DOCUMENT_BYTES:
            kind = "large"  # text, but more than the readers read
        listed.append(ListedFile(relative, kind, info.st_size))
    return tuple(listed)


def _text_files(root: str) -> list[TextFile]:
    return [
        TextFile(file.path, file.kind, file.size, folder=root)
        for file in survey_folder(root)
        if file.readable
    ]


def _read(ref: TextFile) -> Document:
    path = ref.path  # as listed: what messages name
    location = ref.location  # where it is on disk: what is read
    if not os.path.exists(location):
        raise NotFoundError(
            f"{shown_path(path)} does not exist (any more): list the folder again and pick a "
            "listed document"
        )
    if not os.path.isfile(location):
        raise InvalidInputError("document", shown_path(path), "it is not a file")
    size = os.path.getsize(location)
    if size > MAX_DOCUMENT_BYTES:
        raise UnreadableDocumentError(
            path,
            "large",
            f"is {size} bytes: files up to {MAX_DOCUMENT_BYTES} bytes can be read",
        )
    with open(location, "rb") as file:
        content = file.read()
    kind = kind_of(path, content, len(content), complete=True)
    if kind == "binary":
        why = binary_reason(content, complete=True) or "it is an archive"
        raise UnreadableDocumentError(
            path, kind, f"is a binary file ({why}): only text files can be read"
        )
    if kind not in READABLE_KINDS:
        raise UnreadableDocumentError(path, kind, REFUSAL_REASONS[kind])
    text = content.decode("utf-8-sig")
    if not text.strip():
        raise UnreadableDocumentError(path, "empty", "holds only blank space: no text to read")
    return Document(path, text)


@tool_name("list_folder")
@tool_description(
    "lists the text files of a folder and its subfolders (path, kind, size); files that are "
    "not text (images, PDFs, office files, binaries, empty files) are left out"
)
class ListFolder(DecisionTool[Folder, ListArtifact[TextFile]]):
    """Lists the text files of a folder and its subfolders, with their kind and size, sorted by
    path; files whose content is not text are left out (see :func:`survey_folder`)."""

    async def execute(self, input: Folder, context: JobContext) -> ListArtifact[TextFile]:
        """The folder's text files, sorted by their path inside it (the same every time)."""
        files = await asyncio.to_thread(_text_files, input.path)
        return ListArtifact.of(TextFile, files)


@tool_name("read_document")
@tool_description("reads the whole text of a listed text file")
class ReadDocument(DecisionTool[TextFile, Document]):
    """Reads a listed text file (a file changed since into something else is refused)."""

    async def execute(self, input: TextFile, context: JobContext) -> Document:
        """The document's text; the file's content now (not its listed kind) decides."""
        return await asyncio.to_thread(_read, input)


@tool_name("split_statements")
@tool_description("splits a document into its statements, one per sentence or line of prose")
class SplitStatements(DecisionTool[Document, ListArtifact[Statement]]):
    """Splits a document into its statements (sentences, prose lines); drops code and data."""

    async def execute(self, input: Document, context: JobContext) -> ListArtifact[Statement]:
        """One statement per sentence or prose line, in document order, each with its source."""
        return _statements(input)


@tool_name("read_statements")
@tool_description(
    "reads a listed text file and splits it into its statements, one per sentence or line of "
    "prose (code and data lines are dropped)"
)
class ReadStatements(DecisionTool[TextFile, ListArtifact[Statement]]):
    """Reads a listed text file and splits it into statements: ``read_document`` and
    ``split_statements`` in one move, since a document is only ever read to be split."""

    async def execute(self, input: TextFile, context: JobContext) -> ListArtifact[Statement]:
        """The file's statements in document order, each with its source (the listed path)."""
        document = await asyncio.to_thread(_read, input)
        return _statements(document)


def _statements(document: Document) -> ListArtifact[Statement]:
    texts = split_into_statements(document.text)
    return ListArtifact.of(Statement, (Statement(document.path, text) for text in texts))

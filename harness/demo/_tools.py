"""The demo's tools: list a folder, read a document, split a document into statements.

None of them calls a model. Each failure a model could act on is an LLM-readable error naming
the file and the reason (``".../finance/report.pdf is a PDF: read_document reads text files
only"``), so the thinker reads it and moves on to another document.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import TYPE_CHECKING, Final

from harness.artifacts import ListArtifact
from harness.demo._artifacts import (
    Document,
    DocumentRef,
    Folder,
    Statement,
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
    "ReadDocument",
    "SplitStatements",
    "UnreadableDocumentError",
]

MAX_LISTED_FILES: Final = 1000
"""``list_folder`` refuses a folder holding more files than this (pick a smaller folder)."""

MAX_DOCUMENT_BYTES: Final = 1_000_000
"""``read_document`` refuses a file larger than this."""


class UnreadableDocumentError(InvalidInputError):
    """A listed file ``read_document`` does not read: empty, a PDF, an image, an office file or a
    binary. The message is ``"<path> <reason>"`` (the path as listed, relative to the folder);
    ``kind`` is the kind found in the content."""

    def __init__(self, path: str, kind: str, reason: str) -> None:
        super().__init__("document", path, reason)
        self.kind = kind
        self.message = f"{shown_path(path)} {reason}"
        self.args = (self.message,)


def _list_files(root: str) -> list[DocumentRef]:
    name = folder_name(root)  # what the model reads of the folder: never where it is
    if not os.path.exists(root):
        raise NotFoundError(f"folder {name} does not exist: give the path of an existing folder")
    if not os.path.isdir(root):
        raise InvalidInputError("folder", name, "it is a file, not a folder")
    found: list[tuple[str, str]] = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for name in files:
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            found.append((relative, full))
            if len(found) > MAX_LISTED_FILES:
                raise InvalidInputError(
                    "folder",
                    name,
                    f"it holds more than {MAX_LISTED_FILES} files: list a smaller folder",
                )
    refs: list[DocumentRef] = []
    for relative, full in sorted(found):
        try:
            info = os.stat(full)
        except OSError:
            continue  # a dangling link or a file gone since the walk: no document
        if not stat.S_ISREG(info.st_mode):
            continue  # sockets, pipes and devices are no documents
        with open(full, "rb") as file:
            head = file.read(SNIFF_BYTES)
        complete = info.st_size <= SNIFF_BYTES
        kind = kind_of(relative, head, info.st_size, complete=complete)
        refs.append(DocumentRef(relative, kind, info.st_size, folder=root))
    return refs


def _read(ref: DocumentRef) -> Document:
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
            f"is {size} bytes: read_document reads files up to {MAX_DOCUMENT_BYTES} bytes",
        )
    with open(location, "rb") as file:
        content = file.read()
    kind = kind_of(path, content, len(content), complete=True)
    if kind == "binary":
        why = binary_reason(content, complete=True) or "it is an archive"
        raise UnreadableDocumentError(
            path, kind, f"is a binary file ({why}): read_document reads text files only"
        )
    if kind not in READABLE_KINDS:
        raise UnreadableDocumentError(path, kind, REFUSAL_REASONS[kind])
    text = content.decode("utf-8-sig")
    if not text.strip():
        raise UnreadableDocumentError(path, "empty", "holds only blank space: no text to read")
    return Document(path, text)


@tool_name("list_folder")
@tool_description("lists every file in a folder and its subfolders, with its kind and size")
class ListFolder(DecisionTool[Folder, ListArtifact[DocumentRef]]):
    """Lists every file of a folder and its subfolders, with its kind and size, sorted by path."""

    async def execute(self, input: Folder, context: JobContext) -> ListArtifact[DocumentRef]:
        """The folder's files, sorted by their path inside it (the same listing every time)."""
        refs = await asyncio.to_thread(_list_files, input.path)
        return ListArtifact.of(DocumentRef, refs)


@tool_name("read_document")
@tool_description(
    "reads the text of a listed text file (refuses PDFs, images, office files, binaries and "
    "empty files)"
)
class ReadDocument(DecisionTool[DocumentRef, Document]):
    """Reads a listed text file; refuses PDFs, images, office files, binaries and empty files."""

    async def execute(self, input: DocumentRef, context: JobContext) -> Document:
        """The document's text; the file's content (not its listed kind) decides what is read."""
        return await asyncio.to_thread(_read, input)


@tool_name("split_statements")
@tool_description("splits a document into its statements, one per sentence or line of prose")
class SplitStatements(DecisionTool[Document, ListArtifact[Statement]]):
    """Splits a document into its statements (sentences, prose lines); drops code and data."""

    async def execute(self, input: Document, context: JobContext) -> ListArtifact[Statement]:
        """One statement per sentence or prose line, in document order, each with its source."""
        texts = split_into_statements(input.text)
        return ListArtifact.of(Statement, (Statement(input.path, text) for text in texts))

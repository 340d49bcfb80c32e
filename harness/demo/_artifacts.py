"""The demo's artifacts: a folder, the text files listed in it, a document read from one, and a
statement in it.

The kinds of file are types: the listing makes a :class:`TextFile` only of a file whose content
reads as text, so a tool that takes a ``TextFile`` is never offered an image, a PDF, an office
file, a binary or an empty file: the palette's types rule those moves out before the model is
asked. What each artifact reads as before a decision model is set by
:func:`register_formatters`: the digest is all the model sees of an artifact, so a text file
shows its path, kind and size, a document its path and first words, and a statement its own
text.

Paths the model reads are relative to the listed folder (a folder reads as its own name): what
the model sees, and so what it decides, is the same wherever the folder (or harness, for the
shipped corpus) sits on disk. Only :attr:`TextFile.folder` holds where that is, for reading.
"""

from __future__ import annotations

import os
from typing import Final

import attrs

from harness.artifacts import Artifact, TextFormatterRegistry

__all__ = [
    "Document",
    "Folder",
    "Statement",
    "TextFile",
    "document_text",
    "folder_name",
    "register_formatters",
    "shown_path",
    "statement_text",
    "text_file_text",
]

SHOWN_PATH_PARTS: Final = 3
"""A long path reads as ``.../`` and its last this many parts (the file and its folders)."""

SHOWN_PATH_CHARS: Final = 48
"""Paths up to this many characters read whole."""

FIRST_WORDS: Final = 24
"""How many words of a document its digest shows after the path."""


@attrs.frozen
class Folder(Artifact, alias="folder"):
    """A folder of documents on the local disk, by path."""

    path: str


@attrs.frozen
class TextFile(Artifact, alias="text_file"):
    """A listed file whose content reads as text: its path, what kind of text and its size.

    ``path`` is relative to the listed ``folder`` (``/`` separators), ``folder`` where the
    listing was made (empty when ``path`` stands alone); :attr:`location` joins them. ``kind``
    is ``text`` (prose), ``code`` or ``data`` (by extension). Files that are not text (empty
    files, PDFs, images, office files, binaries) are never ``TextFile``: the listing leaves them
    out, so no tool taking a ``TextFile`` can be offered one.
    """

    path: str
    kind: str
    size: int
    folder: str = ""

    @property
    def location(self) -> str:
        """Where the file is on disk: ``path`` inside ``folder``."""
        return os.path.join(self.folder, self.path) if self.folder else self.path


@attrs.frozen
class Document(Artifact, alias="document"):
    """The text of a document read from disk, with its path (as its :class:`TextFile` has it:
    relative to the listed folder)."""

    path: str
    text: str


@attrs.frozen
class Statement(Artifact, alias="statement"):
    """One sentence or line of a document, with the path of the document it came from
    (relative to the listed folder)."""

    source: str
    text: str


def shown_path(path: str) -> str:
    """``path`` as a digest shows it: whole when short, else ``.../`` and its last parts.

    >>> shown_path("notes/todo.md")
    'notes/todo.md'
    >>> shown_path("/srv/share/very/long/path/to/the/company/drive/minutes/2027/board.md")
    '.../minutes/2027/board.md'
    """
    if len(path) <= SHOWN_PATH_CHARS:
        return path
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    if len(parts) <= SHOWN_PATH_PARTS:
        return path
    return ".../" + "/".join(parts[-SHOWN_PATH_PARTS:])


def folder_name(path: str) -> str:
    """A folder as the model reads it: its own name, never where it sits on disk.

    >>> folder_name("/opt/venv/lib/site-packages/harness/demo/corpus/")
    'corpus'
    """
    name = os.path.basename(os.path.normpath(path))
    return name or path


def text_file_text(file: TextFile) -> str:
    """``"<path> (<kind>, <size> bytes)"``."""
    return f"{shown_path(file.path)} ({file.kind}, {file.size} bytes)"


def document_text(document: Document) -> str:
    """The document's path and its first words: ``"<path>: <first words> ..."``."""
    words = document.text.split()
    head = " ".join(words[:FIRST_WORDS])
    more = " ..." if len(words) > FIRST_WORDS else ""
    return f"{shown_path(document.path)}: {head}{more}"


def statement_text(statement: Statement) -> str:
    """The statement's own text."""
    return statement.text


def register_formatters(registry: TextFormatterRegistry) -> None:
    """Register what the demo's artifacts read as in digests (a ``Folder`` reads as its name)."""
    registry.register(Folder, lambda folder: folder_name(folder.path))
    registry.register(TextFile, text_file_text)
    registry.register(Document, document_text)
    registry.register(Statement, statement_text)

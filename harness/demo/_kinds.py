"""What kind of file a document is, judged by its content first and its extension second.

A file is ``empty`` (no bytes), a ``pdf``, an ``image`` or an ``office`` file by its magic bytes
(office files are zip or OLE containers, told apart from other archives by their extension), a
``binary`` when it holds NUL bytes or is not UTF-8 (whatever its extension says), else text:
``code``, ``data`` or ``text`` by extension.
"""

from __future__ import annotations

import codecs
from typing import Final

__all__ = ["READABLE_KINDS", "REFUSAL_REASONS", "binary_reason", "kind_of"]

READABLE_KINDS: Final = frozenset({"text", "code", "data"})
"""The kinds the listing makes a ``TextFile`` of (the readers take nothing else)."""

REFUSAL_REASONS: Final[dict[str, str]] = {
    "empty": "is empty: there is no text to read",
    "pdf": "is a PDF: only text files can be read",
    "image": "is an image: only text files can be read",
    "office": "is an office file (a zip or OLE container): only text files can be read",
    "binary": "is a binary file: only text files can be read",
}
"""Why a reader refuses a file that is no longer text (after the file's path)."""

SNIFF_BYTES: Final = 8192
"""How much of a file the listing reads to judge its kind."""

_IMAGE_MAGIC: Final = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"II*\x00",
    b"MM\x00*",
    b"\x00\x00\x01\x00",
)
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")
_OLE_MAGIC: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_OFFICE_EXTENSIONS: Final = frozenset(
    {"docx", "xlsx", "pptx", "docm", "xlsm", "odt", "ods", "odp", "doc", "xls", "ppt"}
)
_IMAGE_EXTENSIONS: Final = frozenset({"svg"})  # text on disk, but a picture to a reader
_CODE_EXTENSIONS: Final = frozenset(
    {"py", "pyi", "js", "ts", "sh", "bash", "go", "rs", "java", "kt", "c", "h", "cpp", "hpp",
     "cs", "rb", "php", "sql", "swift", "scala", "lua", "pl", "r"}
)  # fmt: skip
_DATA_EXTENSIONS: Final = frozenset(
    {"csv", "tsv", "json", "jsonl", "ndjson", "yaml", "yml", "toml", "xml", "ini", "cfg"}
)


def _extension(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.lstrip(".") else ""


def binary_reason(content: bytes, *, complete: bool) -> str | None:
    """Why ``content`` is not text (``"it contains NUL bytes"`` / ``"it is not UTF-8 text"``),
    or ``None`` when it reads as UTF-8 text.

    ``complete`` says whether ``content`` is the whole file; a head of a file may end inside a
    multi-byte character, which is not held against it.
    """
    if b"\x00" in content:
        return "it contains NUL bytes"
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        decoder.decode(content, final=complete)
    except UnicodeDecodeError:
        return "it is not UTF-8 text"
    return None


def kind_of(name: str, content: bytes, size: int, *, complete: bool) -> str:
    """The kind of the file called ``name`` whose first bytes are ``content`` (of ``size``)."""
    if size == 0:
        return "empty"
    if content.startswith(b"%PDF-"):
        return "pdf"
    extension = _extension(name)
    if content.startswith(_IMAGE_MAGIC) or (
        content.startswith(b"RIFF") and content[8:12] == b"WEBP"
    ):
        return "image"
    if content.startswith(_ZIP_MAGIC) or content.startswith(_OLE_MAGIC):
        return "office" if extension in _OFFICE_EXTENSIONS else "binary"
    if binary_reason(content, complete=complete) is not None:
        return "binary"
    if extension in _IMAGE_EXTENSIONS:
        return "image"
    if extension in _CODE_EXTENSIONS:
        return "code"
    if extension in _DATA_EXTENSIONS:
        return "data"
    return "text"

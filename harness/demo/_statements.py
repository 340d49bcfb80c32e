"""Splitting a document's text into statements: sentences of prose, one per item or line.

The rules, in order:

0. A header block at the start of a document (RFC 822 style, as an email has: two or more
   ``Name: value`` lines whose name is one word such as ``From``, ``To``, ``Subject`` or
   ``Reply-To``, with indented continuation lines, ended by a blank line) is dropped: it says who
   wrote to whom, not what was decided.
1. Each line is stripped of its markdown or comment markers (``#``, ``-``, ``*``, ``>``,
   ``1.``, ``//``, ``[ ]``) and of docstring quotes. A line that looks like code or data (more
   than a few symbols such as ``{}()[]=<>;|``, an assignment, a call, a CSV row without spaces)
   ends the paragraph and is dropped.
2. Consecutive prose lines form one paragraph (wrapped text is joined); a heading stands alone,
   and a list item or a ``Key: value`` header line starts a new paragraph.
3. A paragraph is cut into sentences after ``.``, ``!`` or ``?`` followed by a space and a
   capital letter, a digit or a quote, but not after common abbreviations (``e.g.``, ``Dr.``).
4. A statement keeps at least three words of letters; duplicates within a document are dropped
   (the first is kept).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MIN_WORDS", "split_into_statements"]

MIN_WORDS: Final = 3
"""A statement has at least this many words made of letters."""

_MARKER: Final = re.compile(
    r"^(?:#{1,6}\s+|#+\s*$|//+\s*|>\s*|[-*+\u2022]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)+"
)
_HEADING: Final = re.compile(r"^#{1,6}\s")
_ITEM: Final = re.compile(r"^(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+|\[[ xX]\]\s+)")
_HEADER_LINE: Final = re.compile(r"^[A-Z][A-Za-z -]{0,24}:\s+\S")
_HEADER_FIELD: Final = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:[ \t]+\S")
_HEADER_CONTINUATION: Final = re.compile(r"^[ \t]+\S")
_MIN_HEADER_FIELDS: Final = 2
_DOCSTRING: Final = re.compile(r'^(?:[rbuRBU]?"""|\'\'\')|(?:"""|\'\'\')$')
_CODE_START: Final = re.compile(
    r"^(?:def |class |import |from \S+ import |return\b|raise\b|if .*:$|elif\b|else:|for .* in "
    r".*:$|while .*:$|try:|except\b|finally:|with .*:$|async |await |@\w|#!|\}|\{|\]|\[|\)|<\?|"
    r"<[a-zA-Z/!])"
)
_CODE_SIGNS: Final = re.compile(
    r"(?:\w\(|\)\s*[:{;]$|[;{]$|\s=\s|==|!=|=>|->|:=|\+=|\$\{|\w\.\w+\(|^\w+\s*=|\"\w+\":)"
)
_SYMBOLS: Final = frozenset("{}[]=<>;|\\$`_")
_SYMBOL_SHARE: Final = 0.06
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
_SENTENCE_END: Final = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATIONS: Final = frozenset(
    {"e.g.", "i.e.", "etc.", "vs.", "approx.", "no.", "mr.", "mrs.", "ms.", "dr.", "prof.",
     "inc.", "ltd.", "co.", "st.", "fig.", "cf.", "jan.", "feb.", "mar.", "apr.", "jun.",
     "jul.", "aug.", "sep.", "sept.", "oct.", "nov.", "dec."}
)  # fmt: skip


def _looks_like_code(line: str) -> bool:
    """Whether a stripped line reads as code or data rather than prose."""
    if _CODE_START.match(line) or _CODE_SIGNS.search(line):
        return True
    if " " not in line and ("," in line or len(line) > 24):
        return True  # a CSV row, a path, an identifier
    symbols = sum(1 for char in line if char in _SYMBOLS)
    return symbols > 1 and symbols / len(line) > _SYMBOL_SHARE


def _strip_markers(line: str) -> str:
    line = _MARKER.sub("", line)
    return _DOCSTRING.sub("", line).strip()


def _without_headers(text: str) -> str:
    """``text`` without its leading header block (rule 0), else ``text`` unchanged.

    >>> _without_headers("From: Ana <ana@example.com>\\nSubject: Prices\\n\\nPrices rise.\\n")
    '\\nPrices rise.\\n'
    """
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    fields = 0
    end = start
    while end < len(lines) and lines[end].strip():
        line = lines[end]
        if _HEADER_FIELD.match(line):
            fields += 1
        elif not (fields and _HEADER_CONTINUATION.match(line)):
            return text  # a line that is no header: the block is prose, keep it all
        end += 1
    if fields < _MIN_HEADER_FIELDS:
        return text
    return "".join(lines[end:])


def _paragraphs(text: str) -> list[str]:
    """The prose paragraphs of ``text``: wrapped lines joined, code and data lines dropped."""
    paragraphs: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped:
            close()
            continue
        is_comment = stripped.startswith(("#", "//")) and not stripped.startswith("#!")
        line = _strip_markers(stripped)
        if not line or (_looks_like_code(stripped) and not is_comment) or _looks_like_code(line):
            close()
            continue
        if _HEADING.match(stripped):
            close()
            paragraphs.append(line)
            continue
        if _ITEM.match(stripped) or _HEADER_LINE.match(line):
            close()  # an item or a "Key: value" line starts a paragraph; wrapped lines go on it
        current.append(line)
    close()
    return paragraphs


def _sentences(paragraph: str) -> list[str]:
    pieces = _SENTENCE_END.split(paragraph)
    sentences: list[str] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if sentences and sentences[-1].rsplit(" ", 1)[-1].lower() in _ABBREVIATIONS:
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return sentences


def split_into_statements(text: str) -> list[str]:
    """The statements of a document's ``text``, in document order (see the module's rules).

    >>> split_into_statements("# Minutes\\n\\nPrices rise on 1 May. The board agreed.\\nx = 1\\n")
    ['Prices rise on 1 May.', 'The board agreed.']
    """
    seen: set[str] = set()
    statements: list[str] = []
    for paragraph in _paragraphs(_without_headers(text)):
        for sentence in _sentences(paragraph):
            if len(_WORD.findall(sentence)) < MIN_WORDS or sentence in seen:
                continue
            seen.add(sentence)
            statements.append(sentence)
    return statements

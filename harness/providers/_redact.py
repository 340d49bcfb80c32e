"""The one redaction path for text that comes from a server or a transport error.

Servers echo what they were sent: a 401 body may quote the ``Authorization`` header, a FastAPI
422 quotes each refused value under ``detail[].input``, a gateway's error page may quote the
whole request. Every text a server (or a transport error) produced goes through
:meth:`Redaction.apply` *before* it is cut, logged, raised, recorded or printed; the clients
(System One, OpenAI Decisions, embedded), ``harness serve``'s own error bodies and the record use
this module and nothing else.

What it removes:

* **the key**, in any form that can appear: whole, cut at any point (every run of
  :data:`KEY_RUN` or more characters that is a piece of the key), URL-encoded, JSON-escaped, in
  another letter case, inside a ``Bearer`` echo. Each run becomes ``***``.
* **the request's own text**: every run of :data:`TEXT_RUN` or more characters of the state (its
  strings, its compact JSON), the instructions, the option and level descriptions, in the forms a
  server renders them (as sent, JSON-escaped, whitespace folded), becomes ``[request text]``.
  Texts shorter than that are masked where they appear as a whole word. Field paths stay
  readable: a dotted path whose parts are question ids, option keys, numbers or wire field names
  (``answers.tone``, ``body.questions.q1.criteria``) is never masked as request text.

Masking works on runs, so the order of cutting and redacting does not decide what leaks; it
runs first all the same, and :func:`shown` cuts only what it already redacted.
"""

from __future__ import annotations

import json  # the stdlib: text escaped as json.dumps escapes it, ASCII too (orjson cannot)
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Final
from urllib.parse import quote, quote_plus

import attrs

from harness.decision import Choice, DecisionRequest, Noul, Score
from harness.decision._internal import compact_json

__all__ = [
    "KEY_MASK",
    "KEY_RUN",
    "MESSAGE_CHARS",
    "SCAN_CHARS",
    "TEXT_MASK",
    "TEXT_RUN",
    "Redaction",
    "request_texts",
    "shown",
]

KEY_RUN: Final = 6
"""The shortest piece of a key that is masked wherever it appears (a key shorter than this is
masked whole)."""

TEXT_RUN: Final = 8
"""The shortest run of the request's own text that is masked wherever it appears."""

SCAN_CHARS: Final = 16_384
"""How much of a server's text is read at all: far more than any message shows (a message is
cut to :data:`MESSAGE_CHARS` after redaction), and a bound on the work a hostile body causes."""

MESSAGE_CHARS: Final = 200
"""How much of a redacted server message is shown."""

KEY_MASK: Final = "***"
TEXT_MASK: Final = "[request text]"

_FIELD_WORDS: Final = frozenset(
    {
        "body",
        "model",
        "state",
        "input",
        "questions",
        "question",
        "answers",
        "answer",
        "criteria",
        "instructions",
        "type",
        "choice",
        "choices",
        "noul",
        "score",
        "levels",
        "level",
        "label",
        "value",
        "name",
        "description",
        "probabilities",
        "probability",
        "confidence",
        "legend",
        "usage",
        "true",
        "false",
        "predicate",
        "detail",
        "loc",
        "msg",
        "error",
        "message",
    }
)
"""The wire's own field names: parts of a field path, never masked as request text."""

_PATH: Final = re.compile(r"[\w\-]+(?:\.[\w\-]+)+")
_WORD_EDGE: Final = r"(?<![\w]){}(?![\w])"


def _forms(text: str) -> Iterator[str]:
    """The ways a server renders ``text``: as sent, whitespace folded, JSON-escaped (ASCII or
    not), URL-encoded."""
    yield text
    yield " ".join(text.split())
    yield json.dumps(text, ensure_ascii=False)[1:-1]
    yield json.dumps(text)[1:-1]
    yield quote(text, safe="")
    yield quote_plus(text, safe="")


def _grams(text: str, size: int) -> Iterator[str]:
    for start in range(len(text) - size + 1):
        yield text[start : start + size]


def request_texts(request: DecisionRequest) -> tuple[list[str], set[str]]:
    """(the request's own texts, the words of its field paths): the state's strings and compact
    JSON, every question's instructions and descriptions; the question ids and option keys."""
    texts: list[str] = []
    state = request.state
    if isinstance(state, str):
        texts.append(state)
    else:
        texts.append(compact_json(state))
        texts.extend(_strings(state))
    words: set[str] = set()
    for question_id, question in request.questions.items():
        words.add(question_id)
        texts.append(question.instructions)
        if isinstance(question, Choice):
            words.update(question.options)
            texts.extend(text for text in question.options.values() if text is not None)
        elif isinstance(question, Score):
            texts.extend(question.levels)
        elif isinstance(question, Noul):
            texts.extend(t for t in (question.when_true, question.when_false) if t is not None)
    return texts, words


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    if depth > 64:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _strings(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, depth + 1)


_Table = tuple[frozenset[str], tuple[str, ...], tuple["re.Pattern[str]", ...], frozenset[str]]

LARGE_TEXT: Final = 65_536
"""A request text longer than this is matched as sent only (not lower-cased, escaped or
URL-encoded; the state's compact JSON carries its escaped strings): a failure then costs about
0.3 s of CPU per MiB of state, once per failed call."""


@attrs.frozen
class Redaction:
    """What must never be shown from one round trip: the key and the request's own texts.

    ``keys`` are masked in any form, ``request``'s texts and ``texts`` as runs; :meth:`apply`
    returns a server's text with both masked. The tables are built on first use, so a round trip
    that fails nowhere pays nothing.
    """

    keys: tuple[str, ...] = ()
    request: DecisionRequest | None = attrs.field(default=None, eq=False)
    texts: tuple[str, ...] = ()
    _tables: list[_Table] = attrs.field(factory=list, eq=False, repr=False, alias="_tables")

    @classmethod
    def of(
        cls,
        request: DecisionRequest | None = None,
        *,
        key: str | None = None,
        texts: Iterable[str] = (),
    ) -> Redaction:
        """The redaction for ``request`` sent with ``key`` (either may be absent) plus ``texts``."""
        return cls(keys=(key,) if key else (), request=request, texts=tuple(texts))

    def _table(self) -> _Table:
        if self._tables:
            return self._tables[0]
        own = [text for text in self.texts if text.strip()]
        words: set[str] = set()
        if self.request is not None:
            found, words = request_texts(self.request)
            own.extend(text for text in found if text.strip())
        key_grams: set[str] = set()
        for key in self.keys:
            for form in set(_forms(key)):
                lowered = form.lower()
                if len(lowered) < KEY_RUN:
                    key_grams.add(lowered)
                else:
                    key_grams.update(_grams(lowered, KEY_RUN))
        long_forms: set[str] = set()
        short: set[str] = set()
        for text in own:
            forms = set(_forms(text)) if len(text) <= LARGE_TEXT else set(_large_forms(text))
            for form in forms:
                if len(form) >= TEXT_RUN:
                    long_forms.add(form)
                    if len(form) <= LARGE_TEXT:
                        long_forms.add(form.lower())
                elif len(form.strip()) >= 3 and form.strip() not in words:
                    short.add(form.strip())
        patterns = tuple(
            re.compile(_WORD_EDGE.format(re.escape(word)), re.IGNORECASE)
            for word in sorted(short, key=len, reverse=True)
        )
        kept: list[str] = []
        for form in sorted(long_forms, key=len, reverse=True):
            if not any(form in larger for larger in kept):  # a text inside another: one scan
                kept.append(form)
        table = (frozenset(key_grams), tuple(kept), patterns, frozenset(words))
        self._tables.append(table)
        return table

    def apply(self, text: str) -> str:
        """``text`` (at most :data:`SCAN_CHARS` of it, whitespace folded) with every run of the
        key and of the request's own text masked."""
        text = " ".join(text[:SCAN_CHARS].split())
        if not self.keys and not self.texts and self.request is None:
            return text
        key_grams, long_forms, short, path_words = self._table()
        keyed = _marks(text, key_grams)
        own = _runs_of(text, long_forms)
        for pattern in short:
            for found in pattern.finditer(text):
                own[found.start() : found.end()] = [True] * (found.end() - found.start())
        for found in _PATH.finditer(text):
            if all(
                part in path_words or part in _FIELD_WORDS or part.isdigit()
                for part in found.group().split(".")
            ):
                own[found.start() : found.end()] = [False] * (found.end() - found.start())
        return _masked(text, keyed, own)

    def message(self, text: str, limit: int = MESSAGE_CHARS) -> str:
        """:meth:`apply`, then cut to ``limit`` characters (``...`` marks a cut)."""
        return shown(self.apply(text), limit)


def _large_forms(text: str) -> Iterator[str]:
    """A large text as sent (its JSON-escaped form is inside the state's compact JSON)."""
    yield text


def _windows(text: str, width: int) -> Iterator[str]:
    """Every ``width``-character window of ``text``, sliced in C."""
    count = len(text) - width + 1
    return map(text.__getitem__, map(slice, range(count), range(width, count + width)))


def _runs_of(text: str, sources: tuple[str, ...]) -> list[bool]:
    """Which characters of ``text`` lie in a run of :data:`TEXT_RUN` or more characters that
    also occurs in one of ``sources`` (``text`` compared as is and lower-cased).

    Driven by the message: its windows are the (small) set looked up while each source's
    windows stream past in C, so a large state costs time linear in its size and no memory."""
    marks = [False] * len(text)
    if len(text) < TEXT_RUN or not sources:
        return marks
    where: dict[str, list[int]] = {}
    lowered = text.lower()
    for version in (text, lowered) if len(lowered) == len(text) else (text,):
        for start, window in enumerate(_windows(version, TEXT_RUN)):
            where.setdefault(window, []).append(start)
    wanted = set(where)
    found: set[str] = set()
    for source in sources:
        found |= wanted.intersection(_windows(source, TEXT_RUN))
        if found == wanted:
            break
    for window in found:
        for start in where[window]:
            marks[start : start + TEXT_RUN] = [True] * TEXT_RUN
    return marks


def _marks(text: str, grams: frozenset[str]) -> list[bool]:
    """Which characters of ``text`` lie in a run of a gram (compared case-insensitively)."""
    marks = [False] * len(text)
    if not grams or not text:
        return marks
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer: compare as is
        lowered = text
    for width in {len(gram) for gram in grams}:
        for start in range(len(text) - width + 1):
            piece = lowered[start : start + width]
            if piece in grams or text[start : start + width] in grams:
                marks[start : start + width] = [True] * width
    return marks


def _masked(text: str, keyed: list[bool], own: list[bool]) -> str:
    out: list[str] = []
    last = ""
    for index, char in enumerate(text):
        if keyed[index]:
            if last != KEY_MASK:
                out.append(KEY_MASK)
                last = KEY_MASK
        elif own[index]:
            if last != TEXT_MASK:
                out.append(TEXT_MASK)
                last = TEXT_MASK
        else:
            out.append(char)
            last = ""
    return "".join(out)


def shown(text: str, limit: int = MESSAGE_CHARS) -> str:
    """An already redacted ``text`` cut to ``limit`` characters, ``...`` marking the cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."

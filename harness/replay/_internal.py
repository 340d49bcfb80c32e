"""What other harness packages need of replay's machinery and users do not: :class:`FileFormat`,
the one reader and checker of a harness file's header, :data:`UncheckedJson`, the JSON
object a run record and a journal write and read, and :func:`with_kept`, the parts of a model
call's JSON that both write only when the run kept them.

A cassette (here), a run record (:mod:`harness.record`) and a journal (:mod:`harness.runs`) each
open with ``"format": "harness-<kind>"`` and ``"version": N``; each names its kind with one
:class:`FileFormat`, which writes that header, checks it (the same two mistakes read the same for
every kind: a file of another kind, another version) and reads a JSON file of the kind. Each
kind's module declares its own error class and :class:`FileFormat` in the same few lines: what
differs is the kind's name, the error its readers catch and the wording of the fix. This package
is the lowest of the three, so the class lives here. Not for users: the layer test allows
``harness.x._internal``.
"""

from __future__ import annotations

import json  # the stdlib: only for its JSONDecodeError, what load_json raises for a body it refuses
import os
from collections.abc import Mapping
from typing import Generic, TypeVar

import attrs

from harness.decision._internal import load_json
from harness.errors import HarnessError

__all__ = ["FileFormat", "UncheckedJson", "with_kept"]

UncheckedJson = dict[str, object]
"""A JSON object whose values are not typed as JSON: what ``json.loads`` gives, or what a run
record or a journal builds from artifacts' JSON. A cassette's ``JsonObject`` differs: it holds
wire JSON (:data:`harness.decision.JsonValue`), checked as it is built."""

E = TypeVar("E", bound=HarnessError)


def with_kept(
    call: UncheckedJson, reading: Mapping[str, object] | None, body: object, reply: object
) -> UncheckedJson:
    """``call`` (a model call's JSON object, as a run record or a journal writes it) with what
    the run kept of it added: the provider's ``reading``, the wire ``body`` and ``reply``; each
    is left out when ``None``."""
    if reading is not None:
        call["reading"] = dict(reading)
    if body is not None:
        call["body"] = body
    if reply is not None:
        call["reply"] = reply
    return call


@attrs.frozen
class FileFormat(Generic[E]):
    """One kind of harness file: its header's ``format`` (``harness-<kind>``) and ``version``,
    the error a bad file raises and the fix each mistake names."""

    kind: str
    """What the file is, in messages and in its format name: ``record``, ``cassette``, ..."""
    error: type[E]
    written_by: str
    """The fix for a file of another kind: what writes a file of this one."""
    rewrite: str
    """The fix for a file of another version."""
    version: int = 1

    @property
    def name(self) -> str:
        """The header's ``format``: ``harness-<kind>``."""
        return f"harness-{self.kind}"

    def header(self) -> dict[str, str | int]:
        """The header's fields, first in every file of the kind."""
        return {"format": self.name, "version": self.version}

    def check_header(
        self, source: str, data: Mapping[str, object], *, place: str = "its 'format'"
    ) -> None:
        """Refuse ``data`` (the file's header, at ``source``) unless it names this kind and
        version; ``place`` is where the format is read, for the message."""
        if data.get("format") != self.name:
            raise self.error(
                f"{source} is not a harness {self.kind} ({place} is not {self.name!r}): give "
                f"{self.written_by}"
            )
        version = data.get("version")
        if version != self.version:
            raise self.error(
                f"{source}: {self.kind} version {version!r} is not supported (this harness "
                f"reads version {self.version}): {self.rewrite}"
            )

    def starts(self, path: str | os.PathLike[str]) -> bool:
        """Whether the file at ``path`` opens as this kind (its format named near the start);
        ``False`` for a file that cannot be read, whose reader then names the problem."""
        try:
            with open(path, "rb") as file:
                head = file.read(200)
        except OSError:
            return False
        return f'"{self.name}"'.encode() in head

    def read_json(
        self, path: str | os.PathLike[str], *, label: str, missing: str = "", broken: str = ""
    ) -> object:
        """The JSON value of the file at ``path``; a file that is not there, cannot be read or
        is not JSON is this kind's error, naming it as ``label`` (``missing`` and ``broken``:
        what to do about a file not there, not JSON)."""
        source = os.fspath(path)
        try:
            with open(source, encoding="utf-8") as file:
                text = file.read()
        except FileNotFoundError:
            raise self.error(f"{label} {source} does not exist{_fix(missing)}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise self.error(f"{label} {source} cannot be read: {error}") from None
        try:
            return load_json(text)
        except json.JSONDecodeError as error:
            raise self.error(
                f"{label} {source} is not JSON (line {error.lineno}, column {error.colno})"
                f"{_fix(broken)}"
            ) from None


def _fix(text: str) -> str:
    return f": {text}" if text else ""

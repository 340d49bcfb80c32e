"""The input file of a batch: one JSON object a line, each an input artifact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import attrs

from harness.artifacts import Artifact, UnknownFieldError, from_json

__all__ = ["BadLine", "InputLine", "clipped", "input_from", "read_inputs"]

A = TypeVar("A", bound=Artifact)


def input_from(input_type: type[A], text: str, *, allow_extra: bool) -> A:
    """The input artifact of one line; a key that is not a field of ``input_type`` is refused
    naming ``--allow-extra`` (the batch's opt-out) unless ``allow_extra``."""
    try:
        return from_json(input_type, text, allow_extra=allow_extra)
    except UnknownFieldError as error:
        raise ValueError(error.line("pass --allow-extra")) from None


def clipped(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters: a longer one is cut after a whole
    word, before any quote it would leave open, and ends with `` ...``."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 4]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    for quote in ("'", '"'):
        while cut.count(quote) % 2:  # an opened quote that the cut would leave open
            cut = cut[: cut.rindex(quote)].rstrip()
    return f"{cut.rstrip(' ;,:')} ..."


@attrs.frozen
class InputLine:
    """Line ``number`` (1-based) of the input file, built into ``artifact``; ``text`` is the line
    as written (a worker in another process builds the artifact again from it)."""

    number: int
    text: str
    artifact: Artifact


@attrs.frozen
class BadLine:
    """Line ``number`` could not be built into an input: ``reason`` says why (never its text)."""

    number: int
    reason: str


def read_inputs(
    path: Path, input_type: type[Artifact], *, allow_extra: bool = False
) -> Iterator[InputLine | BadLine]:
    """Every non-blank line of ``path``, built into ``input_type`` or reported as bad (a key
    that is not a field of ``input_type`` too, unless ``allow_extra``)."""
    with path.open("rb") as file:
        for number, raw in enumerate(file, start=1):
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                yield BadLine(number, "the line is not UTF-8 text")
                continue
            if not text:
                continue
            try:
                artifact = input_from(input_type, text, allow_extra=allow_extra)
            except (TypeError, ValueError) as error:
                yield BadLine(number, clipped(str(error), 200))
                continue
            yield InputLine(number, text, artifact)

"""The input file of a batch: one JSON object a line, each an input artifact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs

from harness.artifacts import Artifact, from_json

__all__ = ["BadLine", "InputLine", "read_inputs"]


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


def read_inputs(path: Path, input_type: type[Artifact]) -> Iterator[InputLine | BadLine]:
    """Every non-blank line of ``path``, built into ``input_type`` or reported as bad."""
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
                artifact = from_json(input_type, text)
            except (TypeError, ValueError) as error:
                yield BadLine(number, _short(str(error)))
                continue
            yield InputLine(number, text, artifact)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."

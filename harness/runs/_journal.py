"""The journal of a durable run: a header, then one JSON line per completed turn.

The file is JSON Lines. The first line is the header::

    {"format": "harness-journal", "version": 1, "run_id": "...", "keep_bodies": false,
     "fingerprint": {"thinker": ..., "palette": [...], "objective": ..., "question_scheme": ...,
                     "threshold": ..., "max_turns": ..., "model": {...}},
     "input": {"class": "module:Class", "value": {...}}}

Each later line is a turn (``"kind": "turn"``: the request's digest, the response's answers, the
decision calls made in the turn, the move, the approval, the product as typed data through the
artifacts' cattrs converter (the shapes are :mod:`harness.runs._typed_json`'s), or the readable
failure), or a pause (``"kind": "pending"``: a turn
whose decision waits for a person). Each line is written and flushed before the next turn
starts, and fsynced in a thread while the next decision is asked (on disk before the next tool
runs); a last line cut short by a crash is dropped on read (and cut off the file before anything
is appended to it).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Final

import attrs

from harness.decision._internal import json_bytes, load_json
from harness.errors import HarnessError
from harness.replay._internal import FileFormat, UncheckedJson

__all__ = [
    "JOURNAL_FILE",
    "JournalEntry",
    "JournalError",
    "JournalWriter",
    "JournalledRun",
    "read_journal",
]


class JournalError(HarnessError, ValueError):
    """A journal that cannot be read or written: names the file, the line and what is wrong."""


# same shape as record/_format.py's RECORD_FILE: each file format has its own error
JOURNAL_FILE: Final = FileFormat(
    "journal",
    JournalError,
    written_by="the file written by run(..., journal=PATH) or --journal FILE",
    rewrite="start the run again with a new journal",
)


@attrs.frozen
class JournalEntry:
    """One line after the header: a completed turn, or a turn paused for a person."""

    kind: str  # "turn" or "pending"
    turn: int
    data: Mapping[str, object]


@attrs.frozen
class JournalledRun:
    """A journal as read: the header and the entries (a torn last line dropped)."""

    path: Path
    header: Mapping[str, object]
    entries: tuple[JournalEntry, ...]
    good_bytes: int
    """The length of the file up to the end of the last whole line."""

    @property
    def run_id(self) -> str:
        """The run's id (the root of its idempotency keys)."""
        return str(self.header["run_id"])

    @property
    def fingerprint(self) -> Mapping[str, object]:
        """What the run depends on (see the module's notes)."""
        found = self.header["fingerprint"]
        assert isinstance(found, Mapping)
        return found

    @property
    def keep_bodies(self) -> bool:
        """Whether the run keeps each request's wire body."""
        return bool(self.header.get("keep_bodies"))

    @property
    def pending(self) -> JournalEntry | None:
        """The pause the journal ends on, if it ends on one."""
        if self.entries and self.entries[-1].kind == "pending":
            return self.entries[-1]
        return None

    def by_turn(self) -> dict[int, list[JournalEntry]]:
        """The entries of each turn (a pause, then the turn it became), by turn number."""
        found: dict[int, list[JournalEntry]] = {}
        for entry in self.entries:
            found.setdefault(entry.turn, []).append(entry)
        return found

    def finished(self) -> bool:
        """Whether the run's finishing turn is journalled."""
        return any(e.kind == "turn" and e.data.get("tool") == "finish" for e in self.entries)


def read_journal(path: str | os.PathLike[str]) -> JournalledRun:
    """Read a journal; a torn last line is dropped, any other bad line refused by number."""
    source = Path(path)
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        raise JournalError(
            f"{source}: no such journal; start the run with --journal {source} first"
        ) from None
    except OSError as error:
        raise JournalError(f"{source}: cannot read the journal: {error.strerror}") from None
    lines = raw.split(b"\n")
    whole = lines[:-1]  # the part after the last newline is torn (or empty)
    good = len(raw) - len(lines[-1])
    parsed: list[UncheckedJson] = []
    for number, line in enumerate(whole, 1):
        try:
            value = load_json(line)
            if not isinstance(value, dict):
                raise ValueError("not an object")
        except ValueError:
            if number == len(whole) and number > 1:  # a last line cut mid-write: dropped
                good -= len(line) + 1
                break
            raise JournalError(
                f"{source}: line {number} is not a journal entry (a JSON object); the file is "
                "damaged: start the run again with a new journal"
            ) from None
        parsed.append(value)
    JOURNAL_FILE.check_header(
        str(source), parsed[0] if parsed else {}, place="its first line's 'format'"
    )
    entries = []
    for data in parsed[1:]:
        kind, turn = data.get("kind"), data.get("turn")
        if kind not in ("turn", "pending") or not isinstance(turn, int):
            raise JournalError(f"{source}: an entry without a kind and a turn number: damaged")
        entries.append(JournalEntry(str(kind), turn, data))
    return JournalledRun(source, parsed[0], tuple(entries), good)


class JournalWriter:
    """Appends entries to a journal: :meth:`append` writes, flushes and fsyncs a line;
    :meth:`append_turn` fsyncs it in a thread, :meth:`synced` waits for that."""

    def __init__(self, path: Path, file: IO[bytes]) -> None:
        self.path = path
        self._file = file
        self._syncing: asyncio.Task[None] | None = None

    @classmethod
    def create(cls, path: str | os.PathLike[str], header: Mapping[str, object]) -> JournalWriter:
        """A new journal at ``path`` (an existing non-empty file is refused: resume it)."""
        target = Path(path)
        if target.exists() and target.stat().st_size > 0:
            raise JournalError(
                f"{target}: a journal is already there: resume it (harness.resume(...), "
                f"--resume {target}) or pass a new path"
            )
        if not target.parent.is_dir():
            raise JournalError(f"{target}: the folder {target.parent} does not exist")
        writer = cls(target, target.open("wb"))
        writer.append(
            {**JOURNAL_FILE.header(), **dict(header)}  # first line
        )
        return writer

    @classmethod
    def reopen(cls, journal: JournalledRun) -> JournalWriter:
        """Append to ``journal`` again, its torn last line (if any) cut off first."""
        file = journal.path.open("r+b")
        file.truncate(journal.good_bytes)
        file.seek(journal.good_bytes)
        return cls(journal.path, file)

    def append(self, entry: Mapping[str, object], *, sync: bool = True) -> None:
        """Write one line and flush it to the system (it survives the process); with ``sync``
        also fsync it (it survives the machine) before returning."""
        self._file.write(json_bytes(entry) + b"\n")
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())

    async def append_turn(self, entry: Mapping[str, object]) -> None:
        """Write one line now and fsync it in a thread while the next decision is asked;
        :meth:`synced` waits for it (before the next tool runs, before the next line)."""
        await self.synced()
        self.append(entry, sync=False)
        self._syncing = asyncio.create_task(asyncio.to_thread(os.fsync, self._file.fileno()))

    async def synced(self) -> None:
        """Wait until every line written is on disk."""
        syncing, self._syncing = self._syncing, None
        if syncing is not None:
            await syncing

    async def aclose(self) -> None:
        """Wait for the last fsync, then close the file."""
        try:
            await self.synced()
        finally:
            self._file.close()

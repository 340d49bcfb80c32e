"""The results file of a batch: one JSON object a line, one line per input, written atomically.

Each result is written with a single ``write`` of a whole line on a file opened for appending,
so a process killed at any point leaves whole lines behind, save at most a last line cut short by
the kill; :class:`ResultsFile` drops such a line when it opens the file again, so a resumed
batch runs that input again and the file holds exactly one line per input when it is done.

A resumed batch also runs again the inputs whose result has a status in ``retry`` (by default
``failed`` and ``invalid``): their lines are dropped when the file opens (the file is rewritten
whole, to a temporary file renamed over it, so a kill then leaves the old file or the new one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from harness.decision._internal import json_bytes, load_json

__all__ = ["RETRIED", "ResultsFile"]

RETRIED: Final = frozenset({"failed", "invalid"})
"""The statuses a resumed batch runs again by default."""


class ResultsFile:
    """Appends result lines; knows which input lines already have one (and its status)."""

    def __init__(self, path: Path, *, retry: frozenset[str] = frozenset()) -> None:
        self.path = path
        self.done: dict[int, str] = {}
        self.dropped_torn_line = False
        self.retried = 0
        if path.exists():
            self._recover(retry)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _recover(self, retry: frozenset[str]) -> None:
        data = self.path.read_bytes()
        keep = len(data)
        if data and not data.endswith(b"\n"):  # a line cut short by a kill
            keep = data.rfind(b"\n") + 1
            self.dropped_torn_line = True
        kept: list[bytes] = []
        for raw in data[:keep].splitlines(keepends=True):
            try:
                line = load_json(raw)
            except ValueError:
                raise ValueError(
                    f"{self.path} holds a line that is not JSON: it is not a results file of "
                    "harness batch; give another --out"
                ) from None
            if not isinstance(line, dict) or not isinstance(line.get("line"), int):
                raise ValueError(
                    f"{self.path} holds a line without a line number: it is not a results file "
                    "of harness batch; give another --out"
                )
            status = str(line.get("status"))
            if status in retry:
                self.retried += 1
                continue
            self.done[line["line"]] = status
            kept.append(raw)
        if self.retried:
            fresh = self.path.with_name(self.path.name + ".tmp")
            fresh.write_bytes(b"".join(kept))
            os.replace(fresh, self.path)
        elif keep != len(data):
            with self.path.open("r+b") as file:
                file.truncate(keep)

    def write(self, result: Mapping[str, object]) -> bool:
        """Append ``result`` (a JSON object with ``line``) unless that line has one already;
        returns whether it was written."""
        number = result["line"]
        assert isinstance(number, int)
        if number in self.done:
            return False
        data = json_bytes(result, allow_nan=True) + b"\n"
        written = os.write(self._fd, data)
        if written != len(data):  # a regular file writes all or fails; say so if it did not
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        self.done[number] = str(result.get("status"))
        return True

    def close(self) -> None:
        """Flush to the file system and close."""
        os.fsync(self._fd)
        os.close(self._fd)

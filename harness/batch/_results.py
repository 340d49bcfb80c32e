"""The results file of a batch: one JSON object a line, one line per input, written atomically.

Each result is written with a single ``write`` of a whole line on a file opened for appending,
so a process killed at any point leaves whole lines behind, save at most a last line cut short by
the kill; :class:`ResultsFile` drops such a line when it opens the file again, so a resumed
batch runs that input again and the file holds exactly one line per input when it is done.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ResultsFile"]


class ResultsFile:
    """Appends result lines; knows which input lines already have one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.done: set[int] = set()
        self.dropped_torn_line = False
        if path.exists():
            self._recover()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _recover(self) -> None:
        data = self.path.read_bytes()
        keep = len(data)
        if data and not data.endswith(b"\n"):  # a line cut short by a kill
            keep = data.rfind(b"\n") + 1
            self.dropped_torn_line = True
        for raw in data[:keep].splitlines():
            try:
                line = json.loads(raw)
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
            self.done.add(line["line"])
        if keep != len(data):
            with self.path.open("r+b") as file:
                file.truncate(keep)

    def write(self, result: Mapping[str, object]) -> bool:
        """Append ``result`` (a JSON object with ``line``) unless that line has one already;
        returns whether it was written."""
        number = result["line"]
        assert isinstance(number, int)
        if number in self.done:
            return False
        data = (json.dumps(result, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        written = os.write(self._fd, data)
        if written != len(data):  # a regular file writes all or fails; say so if it did not
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        self.done.add(number)
        return True

    def close(self) -> None:
        """Flush to the file system and close."""
        os.fsync(self._fd)
        os.close(self._fd)

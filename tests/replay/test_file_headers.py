"""The three harness file kinds (cassette, record, journal) write, check and recognise their
header with one :class:`FileFormat`: a file of another kind and a file of another version are
refused with the same words, each kind's own error and fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.record import RECORD_FILE, RecordError, load_record
from harness.replay import CassetteError, load_cassette
from harness.replay._cassette import CASSETTE_FILE
from harness.replay._internal import FileFormat
from harness.runs import JournalError, read_journal
from harness.runs._internal import JOURNAL_FILE


def write_record_or_cassette(path: Path, header: dict[str, object]) -> None:
    path.write_text(json.dumps({**header, "interactions": []}), encoding="utf-8")


def write_journal(path: Path, header: dict[str, object]) -> None:
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")


KINDS = [
    (CASSETTE_FILE, CassetteError, load_cassette, write_record_or_cassette, "--harness-record=all"),
    (RECORD_FILE, RecordError, load_record, write_record_or_cassette, "re-record the run"),
    (JOURNAL_FILE, JournalError, read_journal, write_journal, "start the run again"),
]


@pytest.mark.parametrize(
    ("kind", "error", "read", "write", "fix"), KINDS, ids=["cassette", "record", "journal"]
)
def test_another_kind_and_another_version_read_the_same_for_every_kind(
    kind: FileFormat[HarnessError],
    error: type[HarnessError],
    read: Callable[[Path], object],
    write: Callable[[Path, dict[str, object]], None],
    fix: str,
    tmp_path: Path,
) -> None:
    path = tmp_path / "file"
    write(path, {"format": "harness-other", "version": 1})
    with pytest.raises(error) as caught:
        read(path)
    assert str(caught.value).startswith(f"{path} is not a harness {kind.kind} ")
    assert f"is not {kind.name!r}): give " in str(caught.value)
    write(path, {**kind.header(), "version": 7})
    with pytest.raises(error) as caught:
        read(path)
    assert str(caught.value).startswith(
        f"{path}: {kind.kind} version 7 is not supported (this harness reads version 1): "
    )
    assert fix in str(caught.value)


def test_each_kind_recognises_only_its_own_files(tmp_path: Path) -> None:
    files = {}
    for kind in (CASSETTE_FILE, RECORD_FILE, JOURNAL_FILE):
        files[kind.kind] = tmp_path / kind.kind
        files[kind.kind].write_text(json.dumps(kind.header()), encoding="utf-8")
    for kind in (CASSETTE_FILE, RECORD_FILE, JOURNAL_FILE):
        assert [name for name, path in files.items() if kind.starts(path)] == [kind.kind]
        assert not kind.starts(tmp_path / "missing")

"""The input options ``harness run`` and ``harness replay`` share: one declaration, one reader."""

from __future__ import annotations

import argparse
import pathlib

import pytest

from harness.cli._common import CliError, add_input_options, add_target_argument, input_text


def parser(*, default: str | None = None, optional: bool = False) -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="harness x")
    add_target_argument(made, optional=optional)
    add_input_options(made, default=default)
    return made


def test_the_input_is_the_option_else_the_file_else_none(tmp_path: pathlib.Path) -> None:
    given = tmp_path / "in.json"
    given.write_text('{"text": "from the file"}', encoding="utf-8")
    read = parser().parse_args(["m:C", "--input-file", str(given)])
    assert input_text(read) == '{"text": "from the file"}'
    assert input_text(parser().parse_args(["m:C", "--input", '{"a": 1}'])) == '{"a": 1}'
    assert input_text(parser().parse_args(["m:C"])) is None


def test_an_unreadable_or_undecodable_file_is_one_line_naming_it(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(CliError, match=r"^cannot read --input-file .*missing\.json: No such file"):
        input_text(parser().parse_args(["m:C", "--input-file", str(missing)]))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"text": "caf\xe9"}')
    with pytest.raises(CliError, match=r"latin\.json is not UTF-8 text$"):
        input_text(parser().parse_args(["m:C", "--input-file", str(latin)]))


def test_the_declarations(capsys: pytest.CaptureFixture[str]) -> None:
    assert parser(optional=True).parse_args([]).target is None
    with pytest.raises(SystemExit) as both:
        parser().parse_args(["m:C", "--input", "{}", "--input-file", "f"])
    assert both.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    shown = " ".join(parser(default="the recorded one").format_help().split())
    assert "MODULE:CLASS e.g. mypackage.triage:Triage, or a file: triage.py:Triage" in shown
    assert "the input artifact as a JSON object (default: the recorded one)" in shown

"""CLI errors are clear: one line naming the problem, exit code 2, no traceback."""

from __future__ import annotations

import pathlib

import pytest

from harness.cli import main
from tests.cli.runs import harness


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("HARNESS_CATALOG", raising=False)
        code = main(args)
    err = capsys.readouterr().err
    return code, err


def test_an_unknown_entry_is_refused_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    code, err = run_main(["demo", "--entry", "nope", "--record", str(tmp_path / "r.json")], capsys)
    assert code == 2
    assert "harness demo: error:" in err
    assert "unknown catalog entry id 'nope'" in err
    assert "known ids: 'embedded'" in err
    assert not (tmp_path / "r.json").exists()


def test_bad_json_input_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["run", "tests.cli.words:WordFinder", "--input", "{bad"], capsys)
    assert code == 2
    assert "bad --input for tests.cli.words:WordFinder" in err
    assert "is not JSON (line 1, column 2)" in err


def test_input_missing_a_field_is_refused_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["run", "tests.cli.words:WordFinder", "--input", "{}"], capsys)
    assert code == 2
    assert "not a valid Sentence" in err
    assert "text" in err


def test_a_missing_module_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["run", "no_such_module.thing:Finder", "--input", "{}"], capsys)
    assert code == 2
    assert "cannot import module 'no_such_module.thing'" in err
    assert "no module named 'no_such_module'" in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests.cli.words", "is not MODULE:CLASS"),
        ("tests.cli.words:Nothing", "has no class 'Nothing' (it has: CrashingFinder,"),
        ("tests.cli.words:NotATool", "is the class NotATool, not a thinker or tool class"),
    ],
)
def test_a_target_that_is_not_a_tool_class_is_refused(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_main(["run", target, "--input", "{}"], capsys)
    assert code == 2
    assert message in err


def test_a_missing_record_file_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    code, err = run_main(["record", str(tmp_path / "none.json")], capsys)
    assert code == 2
    assert "none.json does not exist" in err


def test_a_missing_folder_and_a_bad_turn_budget_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    code, err = run_main(["demo", str(tmp_path / "absent")], capsys)
    assert code == 2
    assert "absent does not exist" in err
    code, err = run_main(["demo", "--max-turns", "0"], capsys)
    assert code == 2
    assert "--max-turns must be at least 1" in err


def test_a_catalog_file_that_does_not_exist_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    code, err = run_main(["serve", "--catalog", str(tmp_path / "c.toml")], capsys)
    assert code == 2
    assert "c.toml does not exist" in err


def test_in_a_subprocess_the_errors_carry_no_traceback(tmp_path: pathlib.Path) -> None:
    for args in (
        ("demo", "--entry", "nope"),
        ("run", "tests.cli.words:WordFinder", "--input", "[1, 2"),
        ("run", "missing_module:X", "--input", "{}"),
    ):
        done = harness(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1  # one line
        assert done.stderr.startswith(f"harness {args[0]}: error: ")


def test_an_unknown_model_on_the_command_line_is_not_told_to_pass_a_client(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    code, err = run_main(
        ["demo", "--model", "nosuch", "--record", str(tmp_path / "r.json")], capsys
    )
    assert code == 2
    assert "unknown catalog entry id 'nosuch'" in err
    assert "'openai:<model>', 'openai-chat:<model>" in err  # every model string named
    assert err.rstrip().endswith("(see `harness models`)")
    assert "DecisionClient" not in err


def test_an_input_field_the_class_does_not_have_is_refused_by_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    given = '{"text": "alpha beta", "age": 3}'
    code, err = run_main(["run", "tests.cli.words:WordFinder", "--input", given], capsys)
    assert code == 2
    assert err.splitlines() == [
        "harness run: error: bad --input for tests.cli.words:WordFinder: unknown field 'age' for "
        "Sentence: expected one of text; remove it (or pass --allow-extra)"
    ]


def test_allow_extra_drops_the_fields_the_class_does_not_have(tmp_path: pathlib.Path) -> None:
    given = '{"text": "alpha beta", "age": 3}'
    done = harness(
        "run", "tests.cli.words:WordFinder", "--input", given, "--allow-extra", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr


def test_replay_refuses_an_unknown_input_field_too(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    record = tmp_path / "words.json"
    args = ["run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha"}']
    assert run_main([*args, "--bodies", "--record", str(record)], capsys)[0] == 0
    given = '{"text": "alpha", "colour": "red"}'
    code, err = run_main(
        ["replay", str(record), "tests.cli.words:WordFinder", "--input", given], capsys
    )
    assert code == 2
    assert "unknown field 'colour' for Sentence: expected one of text; remove it (or pass " in err
    assert err.rstrip().endswith("--allow-extra)")
    code, _ = run_main(
        ["replay", str(record), "tests.cli.words:WordFinder", "--input", given, "--allow-extra"],
        capsys,
    )
    assert code == 0


def test_an_output_file_that_cannot_be_written_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path
) -> None:
    record = tmp_path / "words.json"
    args = ["run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha"}']
    assert run_main([*args, "--record", str(record)], capsys)[0] == 0
    page = tmp_path / "absent" / "run.html"
    code, err = run_main(["record", str(record), "--html", str(page)], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"harness record: error: cannot write {page}: No such file or directory"
    ]

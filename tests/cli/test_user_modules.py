"""A mistake in the user's ``MODULE:CLASS`` reads the same from every command (``run``, ``batch``,
``replay``, ``eval``): one line (the same line), exit code 2, no traceback
(``harness.runs.import_target``'s table)."""

from __future__ import annotations

import json
import pathlib
import sys
from collections.abc import Iterator

import pytest

from harness.cli import main
from harness.runs import TARGET_ERRORS
from tests.cli.runs import harness

MODULES = {
    "broken.py": "import attrs\n\nclass Triage(:\n    pass\n",
    "needs.py": "import nosuch_package_xyz\n",
    "raises.py": "raise RuntimeError('the module is not ready')\n",
    "plain.py": "def helper() -> int:\n    return 1\n",
    # A thinker in a file of a folder that is no package, and one in a package's module.
    "apps/screening.py": "from tests.cli.words import WordFinder as ScreenWords\n",
    "mine/finder.py": "from tests.cli.words import WordFinder as Finder\n",
    "mine/__init__.py": "",
    "mine/triage.py": "import mine.helpers\n",
    # An optional dependency that is missing: a package shadowing it that cannot import.
    "redis/__init__.py": "raise ImportError('No module named redis (simulated)')\n",
    "ray/__init__.py": "raise ImportError('No module named ray (simulated)')\n",
}

CASES = [
    ("syntax", "broken:Triage", "syntax error in module 'broken' (broken.py:3): invalid syntax"),
    ("no-module", "nosuch_mod:Triage", "cannot import module 'nosuch_mod': no module named"),
    (
        "no-package",
        "needs:Triage",
        "module 'needs' imports 'nosuch_package_xyz', which is not installed: install it "
        "(pip install nosuch_package_xyz",
    ),
    ("import-failed", "raises:Triage", "importing module 'raises' failed (raises.py:1)"),
    (
        "import-failed",
        "mine.triage:Triage",
        "importing module 'mine.triage' failed (mine/triage.py:1): it imports 'mine.helpers', "
        "which does not exist in your package",
    ),
    ("no-class", "tests.cli.words:Nope", "module 'tests.cli.words' has no class 'Nope' (it has:"),
    ("not-a-tool", "plain:helper", "plain:helper is a function, not a thinker or tool class"),
    ("palette", "tests.cli.words:IllegalFinder", "has an illegal palette:"),
    ("form", "tests.cli.words", "'tests.cli.words' is not MODULE:CLASS"),
    (
        "no-file",
        "apps/nosuch.py:Triage",
        "no file apps/nosuch.py: give the path of a .py file (e.g. apps/triage.py:Triage) or a "
        "module name (e.g. mypackage.triage:Triage)",
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("project")
    for name, text in MODULES.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "in.jsonl").write_text(json.dumps({"text": "alpha"}) + "\n", encoding="utf-8")
    case = {"name": "one", "input": {"text": "alpha"}, "expected": []}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    return root


def commands(target: str) -> dict[str, list[str]]:
    """Each command that runs a user's MODULE:CLASS, with arguments that are otherwise fine (a
    command added later, such as ``eval``, belongs here too)."""
    return {
        "run": ["run", target, "--input", '{"text": "alpha"}'],
        "batch": ["batch", target, "in.jsonl", "--out", "out.jsonl"],
        "replay": ["replay", "no-record.json", target],
        "eval": ["eval", target, "cases.jsonl", "--out", "eval-out"],
    }


def one_line(err: str, command: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, f"harness {command}: {err}"
    assert "Traceback" not in err
    assert lines[0].startswith(f"harness {command}: error: ")
    return lines[0].removeprefix(f"harness {command}: error: ")


def test_every_kind_of_the_table_is_covered() -> None:
    covered = {kind for kind, _, _ in CASES} | {"extra", "constructor", "input-type"}
    assert covered == set(TARGET_ERRORS)


@pytest.fixture
def inside(project: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[pathlib.Path]:
    """The current folder is the project (as a user runs `harness` there)."""
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    monkeypatch.delenv("HARNESS_CATALOG", raising=False)
    yield project
    for name in ("broken", "needs", "raises", "plain", "mine", "mine.triage", "screening"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(("kind", "target", "expected"), CASES, ids=[c[1] for c in CASES])
def test_the_same_mistake_reads_the_same_from_every_command(
    kind: str, target: str, expected: str, inside: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, str] = {}
    for command, args in commands(target).items():
        code = main(args)
        out, err = capsys.readouterr()
        assert code == 2, f"harness {command}: {err}"
        seen[command] = one_line(err, command)
        assert expected in seen[command], seen[command]
        assert out == ""
    assert len(set(seen.values())) == 1, seen
    assert not (inside / "out.jsonl").exists()  # a batch that cannot start writes nothing
    assert not (inside / "eval-out" / "report.json").exists()


def test_in_a_process_of_its_own_too_it_is_one_line_and_no_traceback(
    project: pathlib.Path,
) -> None:
    for command, args in commands("broken:Triage").items():
        result = harness(*args, cwd=project)
        assert result.returncode == 2, result.stderr
        assert "syntax error in module 'broken'" in one_line(result.stderr, command)


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (["--admission", "redis://127.0.0.1:9"], "pip install 'harness[redis]'"),
        (["--ray", "local"], "pip install 'harness[ray]'"),
    ],
)
def test_a_missing_optional_dependency_names_the_extra_to_install(
    option: list[str], expected: str, project: pathlib.Path
) -> None:
    args = commands("tests.cli.words:WordFinder")["batch"] + option
    result = harness(*args, cwd=project)
    assert result.returncode == 2, result.stderr
    assert expected in one_line(result.stderr, "batch")


def test_a_batch_whose_redis_is_down_stops_before_running_anything(
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "alpha"}) + "\n", encoding="utf-8")
    args = commands("tests.cli.words:WordFinder")["batch"] + ["--admission", "redis://127.0.0.1:9"]
    result = harness(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    line = one_line(result.stderr, "batch")
    assert "the shared admission at redis://127.0.0.1:9 cannot be reached" in line
    assert "start Redis there, or drop --admission" in line
    assert not (tmp_path / "out.jsonl").exists()


def test_a_redis_password_never_shows_in_the_preflight_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "alpha"}) + "\n", encoding="utf-8")
    url = "redis://user:s3cret-pw@127.0.0.1:9/0"
    args = commands("tests.cli.words:WordFinder")["batch"] + ["--admission", url]
    result = harness(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "redis://user:***@127.0.0.1:9/0 cannot be reached" in one_line(result.stderr, "batch")
    assert "s3cret-pw" not in result.stderr


@pytest.mark.parametrize(
    "target", ["apps/screening.py:ScreenWords", "mine/finder.py:Finder", "./plain.py:helper"]
)
def test_a_file_path_names_the_module_in_every_command(
    target: str, inside: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if target.endswith(":helper"):  # the file's module is found: the class is what is wrong
        assert main(commands(target)["run"]) == 2
        assert "./plain.py:helper is a function, not" in one_line(capsys.readouterr().err, "run")
        return
    mark = target.partition(".py")[0].replace("/", "-")
    for command, args in commands(target).items():
        if command == "replay":
            continue  # no record here: run below writes one
        args = [{"out.jsonl": f"{mark}.jsonl", "eval-out": f"{mark}-eval"}.get(a, a) for a in args]
        code = main(args)
        out, err = capsys.readouterr()
        assert code in (0, 1), f"harness {command}: {err}"  # it ran (an eval's gate aside)
        assert "error:" not in err
        if command == "run":
            assert json.loads(out.splitlines()[0])["text"] == "alpha"
    record = inside / "screened.json"
    assert main([*commands(target)["run"], "--bodies", "--record", str(record)]) == 0
    capsys.readouterr()
    assert main(["replay", str(record), target]) == 0, capsys.readouterr().err


def test_a_file_path_runs_from_another_folder_in_a_process_of_its_own(
    project: pathlib.Path,
) -> None:
    done = harness(
        "run", str(project / "apps" / "screening.py") + ":ScreenWords", "--input",
        '{"text": "alpha"}', cwd=project.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0]) == {"text": "alpha", "position": 0}


MODULE_KINDS = [c for c in CASES if c[0] in ("syntax", "no-module", "no-package", "import-failed")]


@pytest.mark.parametrize(
    ("kind", "target", "expected"), MODULE_KINDS, ids=[c[1] for c in MODULE_KINDS]
)
def test_harness_check_reads_a_module_that_does_not_import_as_run_does(
    kind: str, target: str, expected: str, inside: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = target.partition(":")[0]
    assert main(["check", module]) == 2
    out, err = capsys.readouterr()
    checked = one_line(err, "check")
    assert expected in checked, checked
    assert out == ""
    assert main(commands(target)["run"]) == 2
    assert one_line(capsys.readouterr().err, "run") == checked  # the one importer's line


@pytest.mark.parametrize(
    ("input_class", "expected"),
    [
        (
            "nosuch_mod:Sentence",
            TARGET_ERRORS["no-module"].format(module="nosuch_mod", missing="nosuch_mod"),
        ),
        (
            "raises:Sentence",
            "importing module 'raises' failed (raises.py:1): RuntimeError: the module is not ready",
        ),
        (
            "tests.cli.words:Nope",
            TARGET_ERRORS["no-class"].format(module="tests.cli.words", name="Nope", known=""),
        ),
    ],
)
def test_a_journal_whose_input_class_does_not_import_is_refused_in_one_line(
    input_class: str, expected: str, inside: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = inside / f"{input_class.replace(':', '-')}.journal"
    args = ["run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha beta"}']
    assert main([*args, "--journal", str(journal)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    header, *turns = journal.read_text(encoding="utf-8").splitlines()
    data = json.loads(header)
    data["input"]["class"] = input_class  # as if the class was renamed or its module moved
    journal.write_text("\n".join([json.dumps(data), *turns[:1]]) + "\n", encoding="utf-8")
    assert main(["run", "--resume", str(journal)]) == 2
    line = one_line(capsys.readouterr().err, "run")
    assert line == f"{journal}: cannot rebuild the journalled input {input_class}: {expected}"

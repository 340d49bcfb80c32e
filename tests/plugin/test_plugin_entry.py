"""The plugin's entry: what it reports to mypy's cache, and an internal surprise becoming an error.

mypy runs in this process (``mypy.api.run``), so a check can be made to fail by monkeypatching
the plugin's own modules; one cache directory is shared by the module's runs (each test checks a
file of its own, so no verdict is ever read from the cache).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mypy import api
from mypy.options import Options
from mypy.plugin import ReportConfigContext

import mypy_plugin
import mypy_plugin._definition
import mypy_plugin._palette_site
import mypy_plugin._plugin
import mypy_plugin._record
from mypy_plugin._codes import ERROR_CODES

REPO = Path(__file__).resolve().parents[2]
KIT = Path(__file__).resolve().parent / "kit"

CONFIG = """\
[mypy]
python_version = 3.11
strict = True
plugins = mypy_plugin

[mypy-harness.*]
follow_imports = silent
"""

THINKER = """\
from palette_kit import DecisionThinker, Identifiable, JudgeNote, Note, SplitNote, Verdict


class Triage(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=JudgeNote,
            palette=(SplitNote,),
            objective="Judge the note",
        )
"""

TOOL = """\
from harness.tools import DecisionTool, tool_name
from palette_kit import JobContext, Note


@tool_name("copy_note")
class Copy(DecisionTool[Note, Note]):
    async def execute(self, input: Note, context: JobContext) -> Note:
        raise NotImplementedError
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("plugin_entry")
    (root / "mypy.ini").write_text(CONFIG)
    old_cwd, old_path = os.getcwd(), os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = os.pathsep.join([str(REPO), str(KIT)])
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(old_cwd)
        if old_path is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = old_path


def _run(project: Path, name: str, source: str, *extra: str) -> tuple[str, str, int]:
    path = project / name
    if not path.exists() or path.read_text() != source:
        path.write_text(source)
    return api.run(
        ["--config-file", "mypy.ini", "--cache-dir", str(project / ".cache"), *extra, name]
    )


def _config_data() -> object:
    plugin = mypy_plugin.HarnessPlugin(Options())
    return plugin.report_config_data(ReportConfigContext("app", "app.py", is_check=True))


def test_report_config_data_carries_version_digest_and_codes() -> None:
    data = _config_data()
    assert data == {
        "harness_plugin": mypy_plugin.PLUGIN_VERSION,
        "sources": mypy_plugin.SOURCE_DIGEST,
        "codes": sorted(ERROR_CODES),
    }
    assert len(mypy_plugin.SOURCE_DIGEST) == 16
    assert mypy_plugin._plugin._source_digest() == mypy_plugin.SOURCE_DIGEST  # stable


def test_an_edited_source_changes_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "mypy_plugin"
    copy.mkdir()
    for path in Path(mypy_plugin.__file__).parent.glob("*.py"):
        (copy / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(mypy_plugin._plugin, "_PLUGIN_DIR", copy)
    assert mypy_plugin._plugin._source_digest() == mypy_plugin.SOURCE_DIGEST
    (copy / "_palette_site.py").write_text("# edited\n")
    assert mypy_plugin._plugin._source_digest() != mypy_plugin.SOURCE_DIGEST


def test_a_new_plugin_version_invalidates_the_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(project, "cached.py", THINKER)
    _, same, _ = _run(project, "cached.py", THINKER, "-v")
    assert "plugin configuration differs" not in same
    monkeypatch.setattr(mypy_plugin._plugin, "PLUGIN_VERSION", "0.0.0-test")
    _, changed, _ = _run(project, "cached.py", THINKER, "-v")
    assert "Metadata abandoned for cached: plugin configuration differs" in changed


def _boom(*args: object, **kwargs: object) -> object:
    raise RuntimeError("planted by the test")


def _assert_internal(stdout: str, stderr: str, status: int, where: str) -> None:
    assert "Traceback" not in stdout + stderr, stdout + stderr
    assert status == 1, stdout + stderr
    assert f"The harness plugin failed while checking {where} (RuntimeError at _boom:" in stdout
    assert "[harness-internal]" in stdout
    assert "note: Please report this to the harness project with the code above" in stdout


def test_a_surprise_at_a_palette_is_an_error_not_a_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mypy_plugin._palette_site, "plain_palette_fine", _boom)
    stdout, stderr, status = _run(project, "surprise_palette.py", THINKER)
    _assert_internal(stdout, stderr, status, "a thinker's palette")
    assert "surprise_palette.py:6: error:" in stdout  # at the super().__init__ call


def test_a_surprise_while_recording_a_name_is_an_error_not_a_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mypy_plugin._record, "_string_value", _boom)
    stdout, stderr, status = _run(project, "surprise_name.py", TOOL)
    _assert_internal(stdout, stderr, status, 'the tool "Copy"')
    assert "surprise_name.py:5: error:" in stdout  # at the decorator


def test_a_surprise_at_a_definition_is_an_error_not_a_traceback(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mypy_plugin._definition, "plain_definition_fine", _boom)
    stdout, stderr, status = _run(project, "surprise_definition.py", TOOL)
    _assert_internal(stdout, stderr, status, 'the tool "Copy"')


def test_the_digest_covers_every_rule_module_the_checks_load() -> None:
    """The checks import only the palette rules (never the runtime validator), and every
    module of harness they load is hashed into the cache key, so editing any rule or wording
    invalidates a cached verdict (package ``__init__`` files that only load lazily aside)."""
    script = (
        "import sys, mypy_plugin._definition, mypy_plugin._palette_site\n"
        "import harness\n"
        "root = harness.__file__.rsplit('/', 1)[0] + '/'\n"
        "print('\\n'.join(sorted(m.__file__[len(root):] for m in list(sys.modules.values())\n"
        "    if getattr(m, '__file__', None) and m.__file__.startswith(root))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = set(done.stdout.split())
    assert "palette/_runtime.py" not in loaded
    lazy = {"__init__.py", "tools/__init__.py"}
    assert loaded - lazy == set(mypy_plugin._plugin.RULE_SOURCES), loaded

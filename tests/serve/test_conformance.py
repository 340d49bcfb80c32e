"""`harness serve` (the embedded model, in a subprocess) under `jevcompat test`: every MUST."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.serve.servers import harness_serve, offline_env

pytestmark = pytest.mark.interop


def jevcompat() -> list[str]:
    found = shutil.which("jevcompat", path=str(pathlib.Path(sys.executable).parent))
    assert found is not None, "jevcompat is not installed: pip install 'harness[test]'"
    return [found]


def test_harness_serve_passes_every_must_of_jevcompat(tmp_path: pathlib.Path) -> None:
    report_path = tmp_path / "report.json"
    with harness_serve() as (process, root):
        done = subprocess.run(
            [*jevcompat(), "test", root, "--json", str(report_path), "--timeout", "30"],
            capture_output=True,
            text=True,
            timeout=120,
            env=offline_env(),
        )
    assert done.returncode == 0, done.stdout[-4000:]  # 0 = conformant
    report = json.loads(report_path.read_text(encoding="utf-8"))
    summary = report["summary"]
    assert summary["verdict"] == "conformant"
    assert summary["MUST"]["failed"] == 0
    assert summary["untested_musts"] == []
    musts = [r for r in report["results"] if r["level"] == "MUST"]
    assert len(musts) == 33
    passed = {r["id"] for r in musts if r["status"] == "pass"}
    # Without a key the server runs with auth off: exactly one of the two auth MUSTs applies.
    skipped = {r["id"] for r in musts if r["status"] != "pass"}
    assert skipped <= {"auth.bearer"}, skipped
    assert {"auth.ignored-when-off", "dropin.sdk-python", "errors.no-5xx"} <= passed
    # Beyond the MUSTs: the model listing and the reference confidence formula.
    shoulds = {r["id"]: r["status"] for r in report["results"] if r["level"] == "SHOULD"}
    assert shoulds["http.models"] == "pass"
    assert shoulds["confidence.formula"] == "pass"
    assert shoulds["errors.validation-shape"] == "pass"
    # The server stops cleanly on SIGINT and says what it served.
    assert process.wait(timeout=10) == 0
    assert process.stdout is not None
    assert "stopped after" in process.stdout.read()

"""`harness serve` (the embedded model, in a subprocess) under `jevcompat test`: every MUST."""

from __future__ import annotations

import json
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from harness.serve import API_KEY_ENV
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


KEY = "serve-key-7f3a9c2e41b84d6a"


def test_harness_serve_with_a_key_passes_every_must_and_should_of_jevcompat_auth_included(
    tmp_path: pathlib.Path,
) -> None:
    report_path = tmp_path / "report.json"
    with harness_serve(env={API_KEY_ENV: KEY}) as (process, root):
        done = subprocess.run(
            [
                *jevcompat(),
                "test",
                root,
                "--key",
                KEY,
                "--timeout",
                "30",
                "--json",
                str(report_path),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=offline_env(),
        )
        # SIGTERM: the server drains and exits cleanly, saying what it served.
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    assert done.returncode == 0, done.stdout[-4000:]
    report = json.loads(report_path.read_text(encoding="utf-8"))
    results = {r["id"]: r for r in report["results"]}
    summary = report["summary"]
    assert summary["verdict"] == "conformant"
    assert (summary["MUST"]["failed"], summary["SHOULD"]["failed"]) == (0, 0)
    assert summary["untested_musts"] == []
    # With a key the auth checks run: the bearer MUST and both auth SHOULDs pass.
    for requirement in ("auth.bearer", "auth.missing", "auth.invalid"):
        assert results[requirement]["status"] == "pass", results[requirement]
    assert results["auth.ignored-when-off"]["status"] != "fail"  # applies only without a key
    not_passed = {rid for rid, r in results.items() if r["status"] != "pass"}
    # errors.shape is "not exercised": the server never meets a non-validation error here.
    assert not_passed <= {"auth.ignored-when-off", "errors.shape"}, not_passed
    assert process.stdout is not None
    assert "stopped after" in process.stdout.read()

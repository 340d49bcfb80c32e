"""jevcompat's MUST suite against a System One server on loopback: what the ``harness serve
--upstream`` tests of the logprob providers and of the ``llama`` provider share."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys

from tests.serve.servers import offline_env


def jevcompat() -> str:
    """The jevcompat command installed beside this Python."""
    found = shutil.which("jevcompat", path=str(pathlib.Path(sys.executable).parent))
    assert found is not None, "jevcompat is not installed: pip install 'harness[test]'"
    return found


def assert_every_must_passes(
    root: str, folder: pathlib.Path, *, call_timeout: int, suite_timeout: int
) -> None:
    """Run the suite against the server at ``root`` (each call given ``call_timeout`` seconds,
    the whole suite ``suite_timeout``), its report in ``folder``: every MUST tested and
    passed."""
    report_path = folder / "report.json"
    done = subprocess.run(
        [jevcompat(), "test", root, "--json", str(report_path), "--timeout", str(call_timeout)],
        capture_output=True,
        text=True,
        timeout=suite_timeout,
        env=offline_env(),
    )
    assert done.returncode == 0, done.stdout[-4000:]
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["summary"]["MUST"]["failed"] == 0
    assert report["summary"]["untested_musts"] == []

"""``harness serve`` closes with the count of requests its access log shows, split into decision
requests (by outcome) and the others (health, models)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import pytest

from tests.serve.servers import URL, offline_env


def test_the_closing_count_is_the_access_logs(tmp_path: object) -> None:
    with tempfile.TemporaryFile(mode="w+") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "serve", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=offline_env(),
        )
        assert process.stdout is not None
        found = URL.search(process.stdout.readline())
        assert found is not None
        root = f"http://127.0.0.1:{found.group(1)}"
        for path in ("/health", "/v1/models", "/health"):
            with urllib.request.urlopen(root + path, timeout=10) as reply:
                assert reply.status == 200
        bad = urllib.request.Request(root + "/v1/systemone", data=b"{not json", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bad, timeout=10)
        assert refused.value.code in (400, 422)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        closing = process.stdout.read().strip().splitlines()[-1]
        errors.seek(0)
        logged = [line for line in errors.read().splitlines() if root.split("//")[1] not in line]
    access_lines = [line for line in logged if re.search(r"\b(GET|POST) /", line)]
    assert len(access_lines) == 4, logged
    assert closing.startswith("harness serve: stopped after 4 requests (the access log's lines): ")
    assert "1 decision requests (0 answered, 0 busy, 1 invalid, 0 failed), 3 others" in closing

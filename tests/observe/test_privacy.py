"""No state, no key, no server text in telemetry by default; harness runs without the extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness.catalog import Catalog
from harness.decision import Answer, Choice, DecisionRequest, Noul, NoulAnswer
from harness.jobs import Dispatcher, Pacing
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import ThinkerRun
from harness.tools import Workflow
from tests.observe.conftest import Telemetry
from tests.thinker.notes import Note, Triage, pick


def first_tools_then_finish(request: DecisionRequest) -> dict[str, Answer]:
    """Take the first offered tool on its first candidate until none is left; keep everything."""
    answers: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        if isinstance(question, Noul):
            answers[qid] = NoulAnswer(0.9)
        elif isinstance(question, Choice):
            options = [o for o in question.options if o != "finish"] or ["finish"]
            answers[qid] = pick(question, options[0])
    return answers


KEY = "sk-otel-canary-7f3a9c2e5b1d4068a2c4e6f8091b3d5f7a9c"
STATE = "STATE-CANARY-41d9"


async def test_no_canary_in_any_span_event_or_metric(
    telemetry: Telemetry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_OTEL_TEST_KEY", KEY)
    async with FakeSystemOneServer(policy=first_tools_then_finish, api_key=KEY) as server:
        entry = server.entry(api_key_env="HARNESS_OTEL_TEST_KEY", input_price_per_million=1.0)
        catalog = Catalog([entry], {"decision": entry.id})
        server.fail_next(Fault.unavailable(f"echo {KEY} of {STATE}"))
        async with Dispatcher(catalog, pacing=Pacing.immediate()) as dispatcher:
            answer = await dispatcher.run(
                ThinkerRun(Workflow(), Triage(Workflow()), Note(f"alpha {STATE}; beta"))
            )
    assert answer.iterands  # the run went through, the 503 retried
    spans = telemetry.spans.get_finished_spans()
    assert any(event.name == "retry" for span in spans for event in span.events)
    texts = [span.to_json() for span in spans]
    metrics = telemetry.metrics.get_metrics_data()
    assert metrics is not None
    texts.append(metrics.to_json())
    pieces = [KEY[i : i + 8] for i in range(len(KEY) - 7)]
    for text in texts:
        assert STATE not in text
        assert not any(piece in text for piece in pieces)
        assert "echo" not in text  # no server text either, unless a run opts in


def test_harness_imports_and_runs_without_opentelemetry() -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        import importlib.abc

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ModuleNotFoundError(f"No module named {name!r}")
                return None

        sys.meta_path.insert(0, Block())
        import harness
        from harness.thinker import ThinkerRun
        from harness.jobs import Dispatcher
        from harness.providers import FakeDecisionModel
        from harness.tools import Workflow
        from tests.thinker.notes import Note, Triage, fake_catalog, triage_policy

        async def main():
            model = FakeDecisionModel(triage_policy)
            async with Dispatcher(fake_catalog(), clients={"fake": model}) as d:
                answer = await d.run(ThinkerRun(Workflow(), Triage(Workflow()), Note("alpha; b")))
            print(len(answer.iterands))

        asyncio.run(main())
        assert not any(m.startswith("opentelemetry") for m in sys.modules)
        try:
            import harness.observe
        except ImportError as error:
            print("refused:", error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "1"
    assert "pip install 'harness[otel]'" in lines[1]

"""Property: for any drawn scenario, a journalled run cut after any turn and resumed
gives the record of the run that was never interrupted, asking the model only the turns that
were not journalled."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness.artifacts import Artifact
from harness.decision import Answer, DecisionRequest
from harness.runs import RunFailedError, RunResult, resume_sync, run_sync
from harness.testing import FakeDecisionModel
from harness.testing.strategies import ScenarioSpec, build_scenario, scenario_specs, seeded_policy


class RequestSeeded:
    """Answers each request from a generator seeded by the seed and the request itself: the
    same answer to the same request, whatever was asked before (so a resumed run, which asks
    fewer requests, is answered as the uninterrupted run was)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.asked: list[str] = []

    def __call__(self, request: DecisionRequest) -> Mapping[str, Answer]:
        text = json.dumps(request.state, sort_keys=True) + repr(list(request.questions))
        digest = hashlib.sha256(f"{self.seed}:{text}".encode()).hexdigest()
        self.asked.append(digest)
        return seeded_policy(int(digest[:12], 16))(request)


def record_of(run: object) -> dict[str, object]:
    """The run's record without its timing fields (a failed run's partial record)."""
    result: RunResult[Artifact]
    try:
        result = run() if callable(run) else run  # type: ignore[assignment]  # a result or a thunk
    except RunFailedError as failed:
        result = failed.result
    data = result.record().to_json()
    data.pop("timing")
    calls = data["calls"]
    assert isinstance(calls, list)
    data["calls"] = [{k: v for k, v in c.items() if k != "latency"} for c in calls]
    return data


@given(scenario_specs(), st.integers(0, 40))
def test_a_journal_cut_after_any_turn_resumes_to_the_uninterrupted_record(
    spec: ScenarioSpec, cut: int
) -> None:
    scenario = build_scenario(spec)
    with tempfile.TemporaryDirectory() as folder:
        journal = Path(folder) / "run.journal"
        whole = RequestSeeded(spec.policy_seed)
        expected = record_of(
            lambda: run_sync(
                scenario.thinker, scenario.input, model=FakeDecisionModel(whole), journal=journal
            )
        )
        lines = journal.read_text(encoding="utf-8").splitlines()
        kept = lines[: 1 + min(cut, len(lines) - 1)]
        journal.write_text("\n".join(kept) + "\n", encoding="utf-8")
        again = RequestSeeded(spec.policy_seed)
        resumed = record_of(
            lambda: resume_sync(scenario.thinker, journal, model=FakeDecisionModel(again))
        )
        assert resumed == expected
        journalled = sum(len(json.loads(line)["decision"]) for line in kept[1:])
        assert len(again.asked) == len(whole.asked) - journalled  # none asked again
        assert again.asked == whole.asked[journalled:]

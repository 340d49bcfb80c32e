"""Record the demo thinker against `harness serve` fronting the embedded model, stop the server,
replay: the same answer, turns and wire bytes, and no socket connected. Change one tool's output:
the replay fails naming the first divergent turn. Replays under two PYTHONHASHSEEDs agree."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness.catalog import Catalog, CatalogEntry
from harness.cli import main
from harness.decision import DecisionRequest, DecisionResponse
from harness.decision import systemone as systemone_codec
from harness.demo import Document, Folder, PriceDecisionFinder, TextFile, corpus_path
from harness.providers import DecisionClient, SystemOneClient
from harness.record import RunFailedError, RunRecord, record_run
from harness.replay import Cassette, load_cassette
from harness.replay._override import ModelOverride
from harness.testing import ReplayClient, ReplayMissError
from harness.tools import Workflow
from tests.serve.servers import harness_serve, offline_env

pytestmark = pytest.mark.slow

_connects: list[object] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _connects is not None and event in ("socket.connect", "socket.getaddrinfo"):
        _connects.append((event, args[1] if len(args) > 1 else args))


sys.addaudithook(_audit)  # audit hooks stay for the process: it only counts while asked to


class Wire:
    """Keeps the canonical wire body of every request its inner client is asked."""

    def __init__(self, inner: DecisionClient) -> None:
        self.inner = inner
        self.bodies: list[bytes] = []

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        self.bodies.append(systemone_codec.encode_body(request, entry.wire_model_id))
        return await self.inner.decide(request, entry, timeout=timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()


def served_catalog(root: str) -> Catalog:
    entry = CatalogEntry(
        id="served",
        provider="systemone",
        wire_model_id="sparrow-decider",
        base_url=root,
        max_context_tokens=32768,
        max_concurrent=2,
    )
    return Catalog([entry], {"decision": "served"})


def folder(tmp_path: Path) -> Folder:
    """A copy of two folders of the demo corpus: a run of a few turns."""
    target = tmp_path / "docs"
    target.mkdir()
    for name in ("2027-01-20-cfo-pricing-update.txt", "2027-02-10-customer-question.txt"):
        (target / name).write_bytes((corpus_path() / "email" / name).read_bytes())
    return Folder(str(target))


class Recorded:
    def __init__(
        self, record: RunRecord, cassette: Cassette, bodies: list[bytes], path: Path
    ) -> None:
        self.path = path  # the record file
        self.record = record
        self.cassette = cassette
        self.bodies = bodies


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    tmp = tmp_path_factory.mktemp("recorded")
    given = folder(tmp)
    with harness_serve() as (process, root):
        catalog = served_catalog(root)
        tape = ReplayClient(Cassette(), record=True)
        wire = Wire(SystemOneClient())
        recording = ModelOverride(
            "recording", make=lambda entry, installed: tape.with_fallback(wire)
        )

        async def run() -> RunRecord:
            try:
                with recording:
                    outcome = await record_run(
                        PriceDecisionFinder(Workflow()),
                        given,
                        catalog=catalog,
                        command="test",
                        keep_bodies=True,
                    )
            finally:
                await wire.aclose()
            return outcome.record

        record = asyncio.run(run())
    assert process.poll() is not None  # the server is gone
    record.write(tmp / "record.json")
    tape.cassette().write(tmp / "cassette.json")
    return Recorded(record, load_cassette(tmp / "cassette.json"), wire.bodies, tmp / "record.json")


def replay_run(
    cassette: Cassette, given: Folder, catalog: Catalog
) -> tuple[RunRecord | None, list[bytes], list[object], ReplayMissError | None]:
    global _connects
    client = ReplayClient(cassette)
    wire = Wire(client)
    _connects = []
    miss = None
    record = None
    try:
        with harness.override(model=wire):
            record = asyncio.run(
                record_run(
                    PriceDecisionFinder(Workflow()),
                    given,
                    catalog=catalog,
                    command="test",
                    keep_bodies=True,
                )
            ).record
    except RunFailedError as failed:
        record = failed.record  # the turns before the miss
        miss = failed.error if isinstance(failed.error, ReplayMissError) else None
        if miss is None:
            raise
    finally:
        connects, _connects = _connects, None
    return record, wire.bodies, connects, miss


def test_the_recorded_run_went_through_the_server(recorded: Recorded) -> None:
    assert len(recorded.record.turns) >= 3
    assert recorded.record.failure is None
    assert len(recorded.cassette.interactions) == len(recorded.bodies)
    assert [i.body for i in recorded.cassette.interactions] == recorded.bodies
    served = {i.reply.model for i in recorded.cassette.interactions}
    assert served  # the server said which model answered
    assert None not in served


def test_a_replay_gives_the_same_answer_turns_and_wire_bytes_with_no_socket(
    recorded: Recorded, tmp_path: Path
) -> None:
    dead = served_catalog("http://127.0.0.1:9")  # the server is gone; nothing may call it
    given = Folder(json.loads(json.dumps(recorded.record.input_value))["path"])
    record, bodies, connects, miss = replay_run(recorded.cassette, given, dead)
    assert miss is None
    assert record is not None
    assert connects == []
    assert bodies == recorded.bodies  # byte for byte
    assert [t.to_json() for t in record.turns] == [t.to_json() for t in recorded.record.turns]
    assert [a.to_json() for a in record.answer] == [a.to_json() for a in recorded.record.answer]
    assert [c.body for c in record.calls] == [c.body for c in recorded.record.calls]


def change_the_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_statements`` now reads a sentence first: its output (and digest) changes."""
    import harness.demo._tools as tools

    real = tools._read

    def changed(ref: TextFile) -> Document:
        document = real(ref)
        return Document(document.path, "Prices double on 1 May 2027. " + document.text)

    monkeypatch.setattr(tools, "_read", changed)


def _first_read(record: RunRecord) -> int:
    return next(t.turn for t in record.turns if t.tool == "read_statements" and t.failure is None)


def test_a_changed_tool_output_fails_the_replay_naming_the_first_divergent_turn(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    change_the_reader(monkeypatch)
    given = Folder(json.loads(json.dumps(recorded.record.input_value))["path"])
    record, _, connects, miss = replay_run(
        recorded.cassette, given, served_catalog("http://127.0.0.1:9")
    )
    assert miss is not None
    assert connects == []
    divergent = _first_read(recorded.record) + 1  # the turn that reads the changed document
    assert record is not None
    assert [t.to_json() for t in record.turns] == [
        t.to_json() for t in recorded.record.turns[: divergent - 1]
    ]
    assert miss.nearest == divergent - 1  # the recorded request of that very turn
    assert f"nearest recorded request is interaction {divergent} of" in miss.message
    assert any(d.where.startswith("state.artifacts[") for d in miss.differences)
    assert "Prices double" not in miss.message  # the message names places, never the state
    assert "Prices double" in miss.details  # the details show both sides


def test_harness_replay_names_the_first_divergent_turn_side_by_side(
    recorded: Recorded,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = recorded.path
    assert main(["replay", str(path), "harness.demo:PriceDecisionFinder"]) == 0
    assert "same turns and answer" in capsys.readouterr().out

    change_the_reader(monkeypatch)
    assert main(["replay", str(path), "harness.demo:PriceDecisionFinder"]) == 1
    out = capsys.readouterr().out
    divergent = _first_read(recorded.record) + 1
    assert f"diverges from {path} at turn {divergent}" in out
    row = next(line for line in out.splitlines() if line.lstrip().startswith(f"{divergent} >"))
    assert "(no turn: its request is not in the record)" in row
    assert "recorded:" in out
    assert "asked:" in out


def test_two_replays_under_different_hash_seeds_give_identical_records(
    recorded: Recorded, tmp_path: Path
) -> None:
    path = recorded.path
    written = []
    for seed in ("1", "4242"):
        out = tmp_path / f"replay-{seed}.json"
        env = {**offline_env(), "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", "replay", str(path),
             "harness.demo:PriceDecisionFinder", "--record", str(out)],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        data = json.loads(out.read_text(encoding="utf-8"))
        data["timing"].pop("wall_seconds")  # the clock, the only thing a replay cannot repeat
        written.append(data)
    assert written[0] == written[1]
    assert written[0]["turns"] == json.loads((path).read_text(encoding="utf-8"))["turns"]

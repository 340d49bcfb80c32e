"""``harness.override(model=...)``: sync and async, every dispatcher in the context, each kind of
model it takes; and the guard that keeps real models over the network out of tests."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import harness
from harness.catalog import Catalog, CatalogEntry
from harness.decision import DecisionRequest, DecisionResponse, Noul
from harness.jobs import Dispatcher
from harness.providers import FakeDecisionModel, SystemOneClient, yes
from harness.replay import Cassette
from harness.replay._override import (
    OverrideError,
    RealModelBlockedError,
    current_override,
    guard_real_models,
)
from harness.testing import FakeSystemOneServer, ReplayClient, ReplayMissError
from harness.thinker import DecisionCall
from harness.tools import Workflow

REQUEST = DecisionRequest("a note about alpha", {"keep": Noul("Keep it?")})


def entry(base_url: str = "http://127.0.0.1:9", entry_id: str = "jev") -> CatalogEntry:
    return CatalogEntry(
        id=entry_id,
        provider="systemone",
        wire_model_id="jev-latest",
        base_url=base_url,
        max_context_tokens=100_000,
        max_concurrent=4,
    )


def catalog(*entries: CatalogEntry) -> Catalog:
    chosen = entries or (entry(),)
    return Catalog(chosen, {"decision": chosen[0].id})


async def ask(cat: Catalog | None = None, **clients: FakeDecisionModel) -> DecisionResponse:
    async with Dispatcher(cat or catalog(), clients=clients) as dispatcher:
        return await dispatcher.run(DecisionCall(Workflow(), REQUEST, upstream_retries=0))


def sure(probability: float) -> FakeDecisionModel:
    return FakeDecisionModel(lambda request: {"keep": yes(probability)})


def test_a_sync_override_answers_every_dispatcher_inside_it() -> None:
    fake = sure(0.25)
    with harness.override(model=fake) as active:
        assert current_override() is active
        first = asyncio.run(ask())
        second = asyncio.run(ask(catalog(entry(entry_id="other"))))
    assert current_override() is None
    assert first.noul("keep").probability == 0.25
    assert second.noul("keep").probability == 0.25
    assert len(fake.requests) == 2
    assert not fake.closed  # the caller's client stays the caller's


async def test_an_async_override_reaches_the_tasks_started_inside_it() -> None:
    fake = sure(0.75)
    async with harness.override(model=fake):
        answers = await asyncio.gather(ask(), ask(), ask())
    assert [a.noul("keep").probability for a in answers] == [0.75] * 3
    assert current_override() is None


async def test_the_override_wins_over_installed_clients_and_nests() -> None:
    installed, outer, inner = sure(0.1), sure(0.2), sure(0.3)
    assert (await ask(jev=installed)).noul("keep").probability == 0.1
    with harness.override(model=outer):
        assert (await ask(jev=installed)).noul("keep").probability == 0.2
        with harness.override(model=inner):
            assert (await ask(jev=installed)).noul("keep").probability == 0.3
        assert (await ask(jev=installed)).noul("keep").probability == 0.2


async def test_a_policy_is_a_fake_model() -> None:
    with harness.override(model=lambda request: {"keep": yes(0.4)}) as active:
        assert isinstance(active.client, FakeDecisionModel)
        assert (await ask()).noul("keep").probability == 0.4


async def test_a_cassette_path_replays_strictly(tmp_path: Path) -> None:
    recorder = ReplayClient(Cassette(), fallback=sure(0.6), record=True)
    with harness.override(model=recorder):
        await ask()
    path = tmp_path / "c.json"
    recorder.cassette().write(path)
    with harness.override(model=str(path)) as active:
        assert isinstance(active.client, ReplayClient)
        assert (await ask()).noul("keep").probability == 0.6
        with pytest.raises(ReplayMissError):
            await ask()  # recorded once, asked twice


async def test_embedded_answers_with_the_embedded_model_each_dispatcher_closing_its_own() -> None:
    with harness.override(model="embedded") as active:
        assert active.client is None
        response = await ask()
    assert 0.0 <= response.noul("keep").probability <= 1.0
    assert response.model is not None
    assert response.model.startswith("sparrow")


async def test_an_entry_id_asks_that_entry_of_the_default_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(
        '[pins]\ndecision = "local"\n\n[[entries]]\nid = "local"\nprovider = "embedded"\n'
        'wire_model_id = "sparrow-decider"\nmax_context_tokens = 32768\nmax_concurrent = 2\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("HARNESS_CATALOG", str(path))
    with harness.override(model="local") as active:
        assert active.label == "entry 'local'"
        response = await ask()  # the catalog asked resolves 'jev'; 'local' answers it
    assert response.model is not None
    assert response.model.startswith("sparrow")


def test_an_unknown_model_is_refused_saying_what_it_may_be() -> None:
    with pytest.raises(OverrideError, match="'no-such-entry' is not 'embedded', a cassette file"):
        harness.override(model="no-such-entry")
    with pytest.raises(OverrideError, match="not int"):
        harness.override(model=42)  # type: ignore[arg-type]  # the wrong type on purpose


def test_a_missing_cassette_path_says_how_to_record_it(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="does not exist: record it first"):
        harness.override(model=tmp_path / "missing.json")


# -- the guard -----------------------------------------------------------------------------------


@pytest.fixture
def guarded() -> object:
    previous = guard_real_models("allow it with the test marker")
    yield
    guard_real_models(previous)


@pytest.mark.usefixtures("guarded")
async def test_a_real_model_over_the_network_is_blocked_naming_the_way_out() -> None:
    remote = entry("https://api.typesafe.invalid")
    with pytest.raises(RealModelBlockedError) as caught:
        await ask(catalog(remote))
    message = str(caught.value)
    assert "'jev'" in message
    assert "api.typesafe.invalid" in message
    assert "allow it with the test marker" in message
    assert not caught.value.llm_readable  # it ends the run


@pytest.mark.usefixtures("guarded")
async def test_loopback_servers_fakes_and_overrides_are_not_blocked() -> None:
    server = FakeSystemOneServer()
    await server.start()
    try:
        local = entry(server.root)
        response = await ask(catalog(local))
        assert response.success
    finally:
        await server.stop()
    remote = catalog(entry("https://api.typesafe.invalid"))
    assert (await ask(remote, jev=sure(0.5))).success  # an installed fake is no network
    with harness.override(model=sure(0.5)):
        assert (await ask(remote)).success


async def test_the_guard_is_process_wide_so_threads_are_guarded_too() -> None:
    previous = guard_real_models("allowed nowhere")
    caught: list[BaseException] = []

    def in_a_thread() -> None:
        try:
            asyncio.run(ask(catalog(entry("https://api.typesafe.invalid"))))
        except BaseException as error:
            caught.append(error)

    try:
        thread = threading.Thread(target=in_a_thread)
        thread.start()
        thread.join(30)
    finally:
        guard_real_models(previous)
    assert len(caught) == 1
    assert isinstance(caught[0], RealModelBlockedError)


@pytest.mark.harness_real_model
def test_allowed_in_a_test_a_remote_entry_gets_its_client() -> None:
    dispatcher = Dispatcher(catalog(entry("https://api.typesafe.invalid")))
    assert isinstance(dispatcher.client_for(entry("https://api.typesafe.invalid")), SystemOneClient)

"""The harness pytest plugin: cassettes, a model override per test, and no real model by accident.

One concern, past 400 lines: a test's view of harness. pytest loads a plugin as the module its
``pytest11`` entry point names, so the hooks, fixtures and markers that work together are here,
and loading them must import nothing else of harness; what loads only when used is apart: the
short failures (``_failures.py``, when a test fails) and the stand-in (``_stand_in.py``, when
``--harness-fallback`` names one).

Loaded by pytest wherever harness is installed (the ``pytest11`` entry point ``harness``; ``-p
no:harness`` turns it off); a test that uses none of it runs as before, and loading it imports
nothing of harness but a flag (:mod:`harness._guard`): the rest loads when a test asks for it.
Its types (:class:`CassetteRun`, :class:`ModelSwitch`) are also at
``harness.testing.pytest_plugin``, for annotations. What it gives:

* ``@pytest.mark.harness_cassette`` (or ``harness_cassette("name")``, or
  ``harness_cassette(path="...")``): every decision of every thinker run inside the test is
  answered from the cassette ``cassettes/<module>/<name>.json`` beside the test file (the name
  defaults to the test's). ``--harness-record`` says what happens to it, as pytest-recording's
  ``--record-mode`` does:

  - ``none`` (default): replay only; a request the cassette does not hold fails the test with a
    :class:`~harness.testing.ReplayMissError` naming the nearest recorded request and what
    differs (and a "harness cassette" section with both sides' text); a missing cassette fails
    it, saying how to record one;
  - ``new``: replay what is recorded, ask the real entry for the rest and append it;
  - ``all``: ask the real entry for everything and write the cassette afresh.

  The ``harness_cassette`` fixture gives the test its :class:`CassetteRun` (the replay client,
  the path, the mode), and activates one with the default name when the test has no marker.
* ``@pytest.mark.harness_model(model=...)`` or the ``harness_model`` fixture
  (``harness_model.use(model)``): every decision inside the test is answered by ``model``,
  anything :func:`harness.override` takes (a fake, a policy, ``"embedded"``, a cassette path, an
  entry id; for the marker also a function of no arguments making a fresh one per test). No
  catalog needed: entries resolve as usual, only the client is replaced. (Give a function as
  ``model=``: pytest reads a marker's lone positional function as the test it decorates.)
* Real models blocked: inside a test, a dispatcher refuses the client of a real model over the
  network (an HTTP client for an entry whose host is not loopback) with
  :class:`~harness.testing.RealModelBlockedError`, which says how to allow it:
  ``@pytest.mark.harness_real_model``, ``--harness-allow-real-model``, or recording a cassette
  (``--harness-record=new`` / ``all`` allow them in cassette tests). Servers on loopback and
  the embedded model are not real calls in this sense: they need no key and no network.
* A stand-in for cassette misses: ``--harness-fallback=fitted:FILE`` (a decider ``harness fit``
  distilled from the recorded model's cassettes or records) answers a request no cassette holds,
  in replay mode; the answer's reading says ``stand_in`` (so the record shows it), the test's
  report gets a "harness stand-in" section and the session a summary.
  ``--harness-fallback-min-agreement SHARE`` ends the session at its start when the stand-in's
  held-out agreement with its teacher (measured by ``harness fit``) is below ``SHARE``.
* Short failures: a test failing with an error raised through harness (a cassette miss, a
  blocked real model, a run that failed) reports the cause's type and message first (its fix is
  in the message), then the lines of the test's own code it came through; harness's frames are
  hidden and a run's failure is summarised (``via RunFailedError``), not chained in full.
  ``pytest --full-trace`` shows everything. A recording run lists the cassettes it wrote.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import pytest

from harness._guard import guard_real_models

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.providers import DecisionClient
    from harness.pytest_plugin._stand_in import StandIn
    from harness.replay import ModelOverride, ModelSpec, ReplayClient

__all__ = ["RECORD_MODES", "CassetteRun", "ModelSwitch"]

RecordMode = Literal["none", "new", "all"]
RECORD_MODES: Final[tuple[RecordMode, ...]] = ("none", "new", "all")

HOW_TO_ALLOW: Final = (
    "replay it from a cassette (@pytest.mark.harness_cassette, recorded once with "
    "--harness-record=new), answer with a fake (@pytest.mark.harness_model(...) or the "
    "harness_model fixture), or allow real models in this test (@pytest.mark.harness_real_model)"
    " or in the whole run (--harness-allow-real-model)"
)

_UNSAFE = re.compile(r'[\\/:*?"<>|\s]+')
_SECTION_LINES: Final = 20
"""The most lines of a report section the plugin adds (the rest: ``--full-trace``)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "harness: cassettes and model overrides")
    group.addoption(
        "--harness-record",
        choices=RECORD_MODES,
        default=None,
        help="cassette mode: none (replay only, the default), new (record what is missing "
        "against the real entry), all (re-record everything)",
    )
    group.addoption(
        "--harness-allow-real-model",
        action="store_true",
        default=False,
        help="let tests ask real models over the network (blocked by default)",
    )
    group.addoption(
        "--harness-fallback",
        default=None,
        metavar="fitted:FILE",
        help="answer a request no cassette holds with this stand-in (a decider harness fit "
        "distilled from the recorded model), marked in the record and the report",
    )
    group.addoption(
        "--harness-fallback-min-agreement",
        type=float,
        default=None,
        metavar="SHARE",
        help="fail the session when the stand-in's held-out agreement with the model it was "
        "distilled from is below this share (e.g. 0.9)",
    )
    parser.addini("harness_record", "default --harness-record mode", default="none")


def pytest_configure(config: pytest.Config) -> None:
    spec = config.getoption("harness_fallback", None)
    least = config.getoption("harness_fallback_min_agreement", None)
    if spec is not None:
        from harness.pytest_plugin._stand_in import StandIn  # loaded when one is asked for

        config.stash[_STAND_IN] = StandIn.checked(spec, least)
    elif least is not None:
        raise pytest.UsageError(
            "--harness-fallback-min-agreement gates a stand-in: give it with "
            "--harness-fallback=fitted:FILE"
        )
    for line in (
        "harness_cassette(name=None, *, path=None): answer every decision of the test from a "
        "cassette (see --harness-record)",
        "harness_model(model=...): answer every decision of the test with model (a fake, a "
        "policy, 'embedded', a cassette path, an entry id, or a function making one)",
        "harness_real_model: let this test ask real models over the network",
    ):
        config.addinivalue_line("markers", line)


def _mode(config: pytest.Config) -> RecordMode:
    given = config.getoption("harness_record") or config.getini("harness_record") or "none"
    if given not in RECORD_MODES:
        raise pytest.UsageError(
            f"harness_record = {given!r} in the ini file: use one of {', '.join(RECORD_MODES)}"
        )
    return given


def _real_models_allowed(item: pytest.Item) -> bool:
    if item.config.getoption("harness_allow_real_model"):
        return True
    if item.get_closest_marker("harness_real_model") is not None:
        return True
    recording = _mode(item.config) in ("new", "all")
    cassette = item.get_closest_marker("harness_cassette") is not None or (
        "harness_cassette" in getattr(item, "fixturenames", ())
    )
    return recording and cassette


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    previous = guard_real_models(None if _real_models_allowed(item) else HOW_TO_ALLOW)
    try:
        return (yield)
    finally:
        guard_real_models(previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed and call.excinfo is not None and not item.config.getoption("fulltrace"):
        from harness.pytest_plugin._failures import short_failure  # loaded when a test fails

        short = short_failure(item, call.excinfo.value)
        if short is not None:
            report.longrepr = short
    run = item.stash.get(_RUN, None)
    if run is not None and report.failed and run.client.refused:
        shown = "\n\n".join(miss.details for miss in run.client.refused)
        lines = shown.splitlines()
        if len(lines) > _SECTION_LINES:
            more = len(lines) - _SECTION_LINES
            lines = [*lines[:_SECTION_LINES], f"... ({more} more lines; pytest --full-trace)"]
        report.sections.append(("harness cassette", "\n".join(lines)))
    if run is not None and run.stand_in is not None and run.client.misses and call.when == "call":
        misses = run.client.misses
        report.sections.append(
            (
                "harness stand-in",
                f"{len(misses)} request(s) not in {run.path.name} answered by the stand-in "
                f"{run.stand_in.spec}; record them (pytest --harness-record=new) to replay the "
                "real model's answers",
            )
        )
        report.user_properties.append(("harness_stand_in_answers", len(misses)))
        run.stand_in.tests.append(item.nodeid)
    return report


# -- the model override ------------------------------------------------------------------------


class ModelSwitch:
    """The ``harness_model`` fixture: :meth:`use` answers every decision for the rest of the
    test with a model; the override ends with the test."""

    def __init__(self) -> None:
        self._active: list[ModelOverride] = []

    def use(self, model: ModelSpec) -> ModelOverride:
        """Answer every decision from now to the end of the test with ``model`` (anything
        :func:`harness.override` takes); returns the override (its ``client`` when it has one)."""
        from harness.replay import override

        active = override(model=model).__enter__()
        self._active.append(active)
        return active

    def close(self) -> None:
        """End every override this switch started (the plugin does at the end of the test)."""
        while self._active:
            # An override begun inside an async test's task ended with the task: ValueError.
            with contextlib.suppress(ValueError):
                self._active.pop().__exit__(None, None, None)


@pytest.fixture
def harness_model() -> Iterator[ModelSwitch]:
    """Override the model of every thinker run in the test: ``harness_model.use(model)``."""
    switch = ModelSwitch()
    try:
        yield switch
    finally:
        switch.close()


def _marker_model(marker: pytest.Mark) -> ModelSpec:
    given = list(marker.args)
    if "model" in marker.kwargs:
        given.append(marker.kwargs["model"])
    if len(given) != 1 or set(marker.kwargs) - {"model"}:
        pytest.fail(
            "@pytest.mark.harness_model takes one model, as harness_model(model=...): a "
            "DecisionClient, a policy, 'embedded', a cassette path, an entry id, or a function "
            "of no arguments making one (pass a function as model=..., since pytest reads a "
            "marker's lone positional function as the test it decorates)",
            pytrace=False,
        )
    model = given[0]
    if callable(model) and not hasattr(model, "decide"):
        try:
            takes = len(inspect.signature(model).parameters)
        except (TypeError, ValueError):
            takes = 1
        if takes == 0:
            made: ModelSpec = model()
            return made
    return model  # type: ignore[no-any-return]  # a marker's argument: checked by override()


# -- the stand-in for cassette misses (its class: _stand_in.py) --------------------------------


_STAND_IN = pytest.StashKey["StandIn"]()


def pytest_unconfigure(config: pytest.Config) -> None:
    stand_in = config.stash.get(_STAND_IN, None)
    if stand_in is not None:
        import asyncio

        with contextlib.suppress(RuntimeError):
            asyncio.run(stand_in.client.aclose())


# -- cassettes ---------------------------------------------------------------------------------


class CassetteRun:
    """A test's cassette: its :attr:`path`, :attr:`mode` and the :attr:`client` answering from
    it (a :class:`~harness.testing.ReplayClient`: ``played``, ``misses``, ``refused``,
    ``new_interactions``)."""

    def __init__(self, path: Path, mode: RecordMode, stand_in: StandIn | None = None) -> None:
        from harness.replay import Cassette, ModelOverride, ReplayClient, load_cassette

        self.path = path
        self.mode = mode
        self.stand_in = stand_in if mode == "none" else None
        fix = (
            f"If the change is meant, re-record it: pytest --harness-record=new (or all to start "
            f"over) with the model reachable, and commit {path.name}."
        )
        if mode == "none" and not path.exists() and self.stand_in is None:
            pytest.fail(
                f"cassette {path} does not exist: record it once with the model reachable "
                "(pytest --harness-record=new), commit it, and this test replays it",
                pytrace=False,
            )
        recorded = load_cassette(path) if mode != "all" and path.exists() else Cassette()
        self.client: ReplayClient = ReplayClient(
            recorded,
            record=mode != "none",
            source=str(path),
            fix=fix,
            fallback=self.stand_in,
        )
        if mode == "none":
            self.override = ModelOverride(f"cassette {path.name}", client=self.client)
        else:
            self.override = ModelOverride(f"recording {path.name}", make=self._recording)

    def _recording(self, entry: CatalogEntry, installed: _Installed) -> DecisionClient:
        return self.client.with_fallback(installed(entry))

    def finish(self) -> str | None:
        """Write the cassette when recording brought something new (always under ``all``);
        returns a line saying what was written (``None``: nothing)."""
        if self.mode == "none":
            return None
        if self.mode == "all" or self.client.new_interactions or not self.path.exists():
            cassette = self.client.cassette(keep_recorded=self.mode == "new")
            cassette.write(self.path)
            new = len(self.client.new_interactions)
            return (
                f"wrote {self.path} ({len(cassette.interactions)} interactions, {new} new); "
                "commit it, and the test replays it with no key"
            )
        return None


if TYPE_CHECKING:
    from collections.abc import Callable

    _Installed = Callable[[CatalogEntry], DecisionClient]


_RUN = pytest.StashKey["CassetteRun"]()
_WRITTEN = pytest.StashKey[list[str]]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """After a recording run: each cassette written, its path and size."""
    stand_in = terminalreporter.config.stash.get(_STAND_IN, None)
    if stand_in is not None and stand_in.answered:
        terminalreporter.section("harness stand-in")
        terminalreporter.write_line(
            f"{stand_in.answered} request(s) no cassette held were answered by the stand-in "
            f"{stand_in.spec}, in {len(stand_in.tests)} test(s): "
            + ", ".join(stand_in.tests[:10])
            + (" ..." if len(stand_in.tests) > 10 else "")
        )
    written = terminalreporter.config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.section("harness cassettes")
        for line in written:
            terminalreporter.write_line(line)


def _cassette_path(node: pytest.Item, marker: pytest.Mark | None) -> Path:
    folder = Path(str(node.path)).parent
    given_path = marker.kwargs.get("path") if marker is not None else None
    if given_path is not None:
        path = Path(os.fspath(given_path))
        return path if path.is_absolute() else folder / path
    name = marker.args[0] if marker is not None and marker.args else None
    if name is None:
        name = (
            node.name
            if node.parent is None or not isinstance(node.parent, pytest.Class)
            else (f"{node.parent.name}.{node.name}")
        )
    module = Path(str(node.path)).stem
    return folder / "cassettes" / module / f"{_UNSAFE.sub('_', str(name))}.json"


@pytest.fixture
def harness_cassette(request: pytest.FixtureRequest) -> Iterator[CassetteRun]:
    """The test's cassette (see the module's notes); every decision in the test goes through it."""
    node = request.node
    assert isinstance(node, pytest.Item)
    marker = node.get_closest_marker("harness_cassette")
    run = CassetteRun(
        _cassette_path(node, marker),
        _mode(request.config),
        request.config.stash.get(_STAND_IN, None),
    )
    node.stash[_RUN] = run
    with run.override:
        yield run
    said = run.finish()
    if said is not None:
        request.config.stash.setdefault(_WRITTEN, []).append(said)


@pytest.fixture(autouse=True)
def _harness_markers(request: pytest.FixtureRequest) -> None:
    """Activate the cassette or the model a test's markers ask for (nothing otherwise)."""
    node = request.node
    cassette = node.get_closest_marker("harness_cassette")
    model = node.get_closest_marker("harness_model")
    if cassette is not None and model is not None:
        pytest.fail(
            f"{node.nodeid} has both harness_cassette and harness_model: a test's decisions come "
            "from one place; keep one of them",
            pytrace=False,
        )
    if cassette is not None:
        request.getfixturevalue("harness_cassette")
    elif model is not None:
        switch = request.getfixturevalue("harness_model")
        assert isinstance(switch, ModelSwitch)
        switch.use(_marker_model(model))

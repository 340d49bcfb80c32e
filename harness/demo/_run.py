"""Running the demo: the thinker on a folder, its progress as lines, its record.

:func:`run_demo` is what ``harness demo`` and ``benchmarks/demo.py`` call: it runs
:class:`PriceDecisionFinder` on a folder (the shipped corpus by default) through a dispatcher
over the catalog, hands a line per turn to ``on_progress`` as the turn ends, and returns the
answer with the run's record.

When the entry has a calibration (the shipped embedded entry has one, fitted on
``harness/evals/data``, never on the demo's folder), the thinker selects at the calibration's
``selection_threshold`` and the run also keeps the model's own selection probabilities
(:attr:`DemoRun.raw_selection`), so the demo can show what the answer was before calibration:
a calibration's maps are monotone and leave every choice's top option as it was, so the run
would have taken the same turns without it.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Mapping
from importlib import resources

import attrs

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact
from harness.catalog import DECISION, Catalog, CatalogEntry, load_catalog
from harness.decision import DecisionRequest, DecisionResponse, NoulAnswer
from harness.demo._artifacts import Document, Folder, Statement, TextFile
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE, PriceDecisionFinder
from harness.jobs import JobEvent
from harness.providers import DecisionClient, client_for
from harness.record import RecordedRun, move_line, record_run
from harness.thinker import DEFAULT_SELECTION_THRESHOLD, OBS_TURNS, parse_turns
from harness.tools import Workflow

__all__ = [
    "DemoRun",
    "corpus_path",
    "demo_folder",
    "demo_progress_line",
    "relative_source",
    "run_demo",
]


@attrs.frozen
class DemoRun(RecordedRun):
    """A demo run: its product and record, and for an entry with a calibration the model's own
    selection probabilities (``raw_selection``, by ref, of the finishing turn) beside the
    threshold the thinker would have used without one (``raw_threshold``)."""

    raw_selection: Mapping[str, float] | None = None
    raw_threshold: float = DEFAULT_SELECTION_THRESHOLD
    raw_answer: tuple[tuple[str, str], ...] = ()
    """``(source, text)`` of each statement the model's own probabilities select at
    ``raw_threshold``, in world order (empty without a calibration)."""


class _RawAnswers:
    """Passes every call to ``inner`` and keeps the last answered response, as the model gave
    it (it sits under the calibrating wrapper)."""

    def __init__(self, inner: DecisionClient, owned: bool) -> None:
        self.inner = inner
        self.owned = owned
        self.last: DecisionResponse | None = None

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        response = await self.inner.decide(request, entry, timeout=timeout)
        if response.success:
            self.last = response
        return response

    async def aclose(self) -> None:
        if self.owned:
            await self.inner.aclose()

    def selection(self) -> dict[str, float]:
        """The raw ``select_<ref>`` probabilities of the last answered request, by ref."""
        if self.last is None:
            return {}
        return {
            qid.removeprefix("select_"): answer.probability
            for qid, answer in self.last.answers.items()
            if qid.startswith("select_") and isinstance(answer, NoulAnswer)
        }


def relative_source(path: str, folder: str) -> str:
    """``path`` relative to ``folder`` when inside it, else as given (with ``/`` separators);
    a relative path (what the demo's tools give) is taken as relative to ``folder`` already."""
    if not os.path.isabs(path):
        return path.replace(os.sep, "/")
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:  # another drive on Windows
        return path
    if relative.startswith(".."):
        return path
    return relative.replace(os.sep, "/")


def _about(artifact: Artifact, folder: str) -> str:
    if isinstance(artifact, TextFile | Document):
        return relative_source(artifact.path, folder)  # listed paths are already relative
    if isinstance(artifact, ListArtifact):
        count = len(artifact.iterands)
        noun = str(getattr(artifact.iterand_type, "alias", "item")).replace("_", " ")
        return f"{count} {noun}{'' if count == 1 else 's'}"
    return ""


def demo_progress_line(event: JobEvent, world: ArtifactRegistry, folder: str) -> str:
    """The line a turn prints: the move (as :func:`~harness.record.move_line` writes it) and,
    for a move that produced something, what it ran on and what came of it."""
    published = event.job.metadata.get(OBS_TURNS)
    if not published:
        return event.message or ""
    turn = parse_turns(published)[-1]
    line = move_line(turn)
    if turn.failure is None and turn.artifact is not None and turn.result is not None:
        on = _about(world.get(turn.artifact), folder)
        made = _about(world.get(turn.result), folder)
        details = on if on == made else " -> ".join(part for part in (on, made) if part)
        if details:
            line += f"  ({details})"
    return line


def corpus_path() -> pathlib.Path:
    """The folder of documents shipped with the package (a real directory on disk).

    The package is installed as files (a wheel unpacks into site-packages), so the resource
    directory is a real path; a zipped install is refused with the fix.
    """
    corpus = resources.files("harness.demo").joinpath("corpus")
    path = pathlib.Path(str(corpus))
    if not path.is_dir():
        raise FileNotFoundError(
            f"the demo corpus is not a folder on disk ({corpus!s}): install harness as files "
            "(pip install harness, not a zipped import), or pass your own folder to the demo"
        )
    return path


def demo_folder(folder: str | os.PathLike[str] | None = None) -> str:
    """The absolute path of ``folder``, or of the shipped corpus when ``None``; a missing
    folder raises ``FileNotFoundError`` naming it."""
    root = os.path.abspath(os.fspath(folder) if folder is not None else corpus_path())
    if not os.path.isdir(root):
        what = "does not exist" if not os.path.exists(root) else "is not a folder"
        raise FileNotFoundError(f"the demo's folder {root} {what}: give an existing folder")
    return root


async def run_demo(
    folder: str | os.PathLike[str] | None = None,
    *,
    objective: str = DEMO_OBJECTIVE,
    max_turns: int = DEMO_MAX_TURNS,
    catalog: Catalog | None = None,
    entry_id: str | None = None,
    on_progress: Callable[[str], None] | None = None,
    keep_bodies: bool = False,
    clients: Mapping[str, DecisionClient] | None = None,
) -> DemoRun:
    """Run the demo thinker on ``folder`` (the shipped corpus when ``None``) and record it.

    ``catalog`` defaults to :func:`~harness.catalog.load_catalog` (``$HARNESS_CATALOG`` or the
    shipped one, whose pinned entry is the embedded model); ``entry_id`` pins another entry.
    ``on_progress`` gets one line per tool turn as it ends. The thinker selects at the entry's
    calibrated ``selection_threshold`` when it has one (see the module's notes).
    """
    root = demo_folder(folder)
    catalog = catalog if catalog is not None else load_catalog()
    entry = catalog.entry(entry_id) if entry_id is not None else catalog.pinned(DECISION)
    calibration = entry.calibration
    # the thinker answers at the entry's fitted threshold when the calibration has one
    thinker = PriceDecisionFinder(Workflow(), objective=objective, max_turns=max_turns)

    def progress(event: JobEvent) -> None:
        if on_progress is not None:
            on_progress(demo_progress_line(event, thinker.registry, root))

    tap: _RawAnswers | None = None
    given = dict(clients or {})
    inner = given.get(entry.id)
    if calibration is not None and (inner is not None or entry.provider != "fake"):
        tap = _RawAnswers(inner if inner is not None else client_for(entry), owned=inner is None)
        given[entry.id] = tap
    try:
        run = await record_run(
            thinker,
            Folder(root),
            catalog=catalog,
            command="demo",
            entry_id=entry_id,
            on_progress=progress,
            keep_bodies=keep_bodies,
            clients=given,
        )
    finally:
        if tap is not None:
            await tap.aclose()
    if tap is None:
        return DemoRun(run.product, run.record)
    raw = tap.selection()
    before = []
    for ref, p in raw.items():
        statement = thinker.registry.get(ref)
        if p >= DEFAULT_SELECTION_THRESHOLD and isinstance(statement, Statement):
            before.append((statement.source, statement.text))
    return DemoRun(run.product, run.record, raw_selection=raw, raw_answer=tuple(before))

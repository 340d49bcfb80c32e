"""Running the demo: the thinker on a folder, its progress as lines, its record.

:func:`run_demo` is what ``harness demo`` and ``benchmarks/demo.py`` call: it runs
:class:`PriceDecisionFinder` on a folder (the shipped corpus by default) through a dispatcher
over the catalog, hands a line per turn to ``on_progress`` as the turn ends, and returns the
answer with the run's record.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact
from harness.catalog import Catalog, load_catalog
from harness.demo._artifacts import Document, Folder, TextFile
from harness.demo._thinker import DEMO_MAX_TURNS, DEMO_OBJECTIVE, PriceDecisionFinder
from harness.jobs import JobEvent
from harness.providers import DecisionClient
from harness.record import RecordedRun, move_line, record_run
from harness.thinker import OBS_TURNS, parse_turns
from harness.tools import Workflow

__all__ = ["demo_folder", "demo_progress_line", "relative_source", "run_demo"]


def relative_source(path: str, folder: str) -> str:
    """``path`` relative to ``folder`` when inside it, else as given (with ``/`` separators);
    a relative path (as the demo's tools now give) is taken as relative to ``folder`` already."""
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


def demo_folder(folder: str | os.PathLike[str] | None = None) -> str:
    """The absolute path of ``folder``, or of the shipped corpus when ``None``; a missing
    folder raises ``FileNotFoundError`` naming it."""
    from harness.demo import corpus_path

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
) -> RecordedRun:
    """Run the demo thinker on ``folder`` (the shipped corpus when ``None``) and record it.

    ``catalog`` defaults to :func:`~harness.catalog.load_catalog` (``$HARNESS_CATALOG`` or the
    shipped one, whose pinned entry is the embedded model); ``entry_id`` pins another entry.
    ``on_progress`` gets one line per tool turn as it ends.
    """
    root = demo_folder(folder)
    thinker = PriceDecisionFinder(Workflow(), objective=objective, max_turns=max_turns)

    def progress(event: JobEvent) -> None:
        if on_progress is not None:
            on_progress(demo_progress_line(event, thinker.registry, root))

    return await record_run(
        thinker,
        Folder(root),
        catalog=catalog if catalog is not None else load_catalog(),
        command="demo",
        entry_id=entry_id,
        on_progress=progress,
        keep_bodies=keep_bodies,
        clients=clients,
    )

"""What a durable run depends on: the fingerprint its journal's header keeps (the thinker, its
palette and settings, the model), the phrases that say how two differ, the header itself, and
the classes a run's products can be of (what a resumed run reads them back as).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from harness.artifacts import Artifact
from harness.catalog import CatalogEntry
from harness.runs._typed_json import class_path, known_classes, product_json, type_name
from harness.thinker import DecisionThinker
from harness.tools import ClassToolProvider, DecisionTool, tool_types

__all__ = ["changes", "classes_of", "fingerprint_of", "header_of"]


def fingerprint_of(tool: DecisionTool[Any, Artifact], entry: CatalogEntry) -> dict[str, object]:
    """What a run of ``tool`` on ``entry`` depends on (the journal's header keeps it)."""
    model = {"id": entry.id, "provider": entry.provider, "wire_model_id": entry.wire_model_id}
    thinker = type(tool).__qualname__
    with contextlib.suppress(TypeError, ValueError):  # a thinker built directly: its class
        thinker += f" ({ClassToolProvider(type(tool)).name})"
    if not isinstance(tool, DecisionThinker):
        return {"thinker": thinker, "model": model}
    palette = []
    for cls in tool.palette:
        provider = ClassToolProvider(cls)
        palette.append(
            {
                "name": provider.name,
                "input": type_name(provider.input_type),
                "output": type_name(provider.output_type),
                "description": provider.description,
            }
        )
    return {
        "thinker": thinker,
        "palette": palette,
        "objective": tool.objective,
        "question_scheme": tool.scheme,
        "threshold": tool.selection_threshold,
        "max_turns": tool.max_turns,
        "model": model,
    }


def changes(journalled: Mapping[str, object], now: Mapping[str, object]) -> list[str]:
    """What differs between two fingerprints, one phrase each, by name."""
    found: list[str] = []
    for key in ("thinker", "palette", "objective", "question_scheme", "threshold", "max_turns"):
        before, after = journalled.get(key), now.get(key)
        if before == after:
            continue
        if key == "palette" and isinstance(before, list) and isinstance(after, list):
            found.extend(_palette_changes(before, after))
        else:
            found.append(f"{key} changed from {before!r} to {after!r}")
    before_model, after_model = journalled.get("model"), now.get("model")
    if before_model != after_model:
        found.append(f"model changed from {_model(before_model)} to {_model(after_model)}")
    return found


def _model(value: object) -> str:
    if isinstance(value, Mapping):
        return f"{value.get('id')} ({value.get('provider')}: {value.get('wire_model_id')})"
    return repr(value)


def _palette_changes(before: list[Any], after: list[Any]) -> list[str]:  # JSON objects
    old = {t["name"]: t for t in before}
    new = {t["name"]: t for t in after}
    found = [f"palette: tool {name!r} was removed" for name in old if name not in new]
    found += [f"palette: tool {name!r} was added" for name in new if name not in old]
    for name in old:
        if name in new and old[name] != new[name]:
            what = [k for k in ("input", "output", "description") if old[name][k] != new[name][k]]
            found.append(f"palette: tool {name!r} changed its {' and '.join(what)}")
    if not found:
        found.append("palette: the tools' order changed")
    return found


def classes_of(tool: DecisionTool[Any, Artifact]) -> dict[str, type]:
    """The classes a run of ``tool`` can hold: its palette's types and their subclasses."""
    roots: list[object] = []
    with contextlib.suppress(TypeError):
        roots.extend(tool_types(type(tool)))
    if isinstance(tool, DecisionThinker):
        roots.append(tool.output_type)
        for cls in tool.palette:
            provider = ClassToolProvider(cls)
            roots.extend((provider.input_type, provider.output_type))
    return known_classes(roots)


def header_of(
    tool: DecisionTool[Any, Artifact],
    input: Artifact,
    entry: CatalogEntry,
    run_id: str,
    keep_bodies: bool,
) -> dict[str, object]:
    """The journal's header for a run of ``tool`` on ``input`` (see harness.runs._journal)."""
    return {
        "run_id": run_id,
        "keep_bodies": keep_bodies,
        "fingerprint": fingerprint_of(tool, entry),
        "target": class_path(type(tool)),
        "input": product_json(input),
    }

"""Where a call's CPU goes: a cProfile of a benchmark's calls, its self time grouped by part.

Every function the profiler saw is put in one part of harness's path by the file it lives in
(and, for the wire codecs, by whether it encodes or decodes); the self times of each part are
added up and divided by the number of calls. The profiler adds its own cost to every function
call, so the figures are larger than the unprofiled ones: read them as shares, and scale them by
the unprofiled CPU a call the benchmark measures (:func:`scaled`).

Used by ``benchmarks/embedded.py``, ``benchmarks/dispatch.py`` and ``benchmarks/batch_embedded.py``
(their ``--breakdown`` option); not a script of its own.
"""

from __future__ import annotations

import cProfile
import pstats
import re
from collections.abc import Mapping

__all__ = ["PARTS", "breakdown", "print_breakdown", "scaled"]

PARTS = (
    "model",
    "job and identity",
    "dispatcher",
    "admission",
    "resolution and pricing",
    "calibration",
    "events and hooks",
    "record",
    "encoding",
    "transport",
    "decoding",
    "client",
    "thinker and run",
    "event loop",
    "other",
)
"""The parts, in the order they are printed."""

_BY_PATH: tuple[tuple[str, str], ...] = (
    ("sparrow_decider", "model"),
    ("numpy", "model"),
    ("harness/catalog/_calibration", "calibration"),  # the maps and the roles
    ("harness/providers/_calibrated.py", "calibration"),
    ("harness/jobs/_job.py", "job and identity"),
    ("harness/scope/", "job and identity"),
    ("harness/deciding/_call.py", "job and identity"),
    ("harness/thinker/_call.py", "job and identity"),
    ("harness/jobs/_events.py", "events and hooks"),
    ("harness/jobs/_hooks.py", "events and hooks"),
    ("harness/observe/", "events and hooks"),
    ("harness/jobs/_observable.py", "record"),
    ("harness/jobs/_record.py", "record"),
    ("harness/jobs/_budget.py", "dispatcher"),
    ("harness/jobs/", "dispatcher"),
    ("harness/models/_admission.py", "admission"),
    ("harness/models/_gate.py", "admission"),
    ("harness/models/_bucket.py", "admission"),
    ("harness/models/_adaptive.py", "admission"),
    ("harness/admission/", "admission"),
    ("harness/models/_tokenizers.py", "resolution and pricing"),
    ("harness/models/_pricing.py", "resolution and pricing"),
    ("harness/catalog/", "resolution and pricing"),
    ("harness/models/", "resolution and pricing"),
    ("harness/decision/_record.py", "record"),
    ("harness/llm/_observable.py", "record"),
    ("harness/record/", "record"),
    ("harness/decision/_json.py", "encoding"),
    ("harness/decision/_request.py", "encoding"),
    ("harness/decision/_questions.py", "encoding"),
    ("harness/llm/_providers.py", "encoding"),
    ("harness/providers/_providers.py", "encoding"),
    ("json/encoder.py", "encoding"),
    ("harness/decision/_answers.py", "decoding"),
    ("harness/decision/_response.py", "decoding"),
    ("harness/decision/_frozen_map.py", "decoding"),
    ("harness/decision/_wire.py", "decoding"),
    ("json/decoder.py", "decoding"),
    ("json/__init__.py", "decoding"),
    ("harness/llm/_http.py", "transport"),
    ("harness/providers/_http.py", "transport"),
    ("aiohttp/", "transport"),
    ("yarl/", "transport"),
    ("multidict/", "transport"),
    ("asyncio/selector_events.py", "transport"),
    ("asyncio/streams.py", "transport"),
    ("asyncio/transports.py", "transport"),
    ("selectors.py", "transport"),
    ("socket.py", "transport"),
    ("harness/llm/", "client"),
    ("harness/providers/", "client"),
    ("harness/replay/", "client"),
    ("harness/deciding/", "thinker and run"),
    ("harness/thinker/", "thinker and run"),
    ("harness/runs/", "thinker and run"),
    ("harness/batch/", "thinker and run"),
    ("harness/artifacts/", "thinker and run"),
    ("harness/tools/", "thinker and run"),
    ("harness/palette", "thinker and run"),
    ("asyncio/", "event loop"),
    ("contextvars", "event loop"),
)

_BUILTINS: Mapping[str, str] = {"send": "transport", "recv": "transport", "poll": "transport"}
"""Builtins placed by their own name (sockets, the selector); every other builtin is placed by
its callers."""


def _part(filename: str, function: str) -> str | None:
    """The part a function belongs to by its own file, ``None`` when only its callers can say
    (a builtin, the standard library's generic helpers, attrs' generated methods)."""
    path = filename.replace("\\", "/")
    generated = _GENERATED.match(path)
    if generated is not None:  # "<attrs generated methods harness.decision._x.Y>": its module
        path = generated.group(1).rsplit(".", 1)[0].replace(".", "/") + ".py"
    if path.endswith(("harness/decision/systemone.py", "harness/decision/openai.py")):
        return "decoding" if "decode" in function or function.startswith("_plain") else "encoding"
    for fragment, part in _BY_PATH:
        if fragment in path:
            return part
    if path == "~":
        for name, part in _BUILTINS.items():
            if f"'{name}' of '_socket" in function or f"'{name}' of 'select" in function:
                return part
    return None


_GENERATED = re.compile(r"<attrs generated \w+ ([\w.]+)>")


def _weights(
    key: tuple[str, int, str],
    table: Mapping[tuple[str, int, str], tuple[object, ...]],
    seen: dict[tuple[str, int, str], dict[str, float]],
) -> dict[str, float]:
    """The shares of the parts ``key``'s self time goes to: its own part, else its callers'
    parts in proportion to the time each caller spent in it."""
    if key in seen:
        return seen[key]
    seen[key] = {"other": 1.0}  # a cycle through generic code: counted as other
    own = _part(key[0], key[2])
    if own is not None:
        seen[key] = {own: 1.0}
        return seen[key]
    callers = table[key][4]
    assert isinstance(callers, dict)
    total = sum(row[2] for row in callers.values())
    if not callers or total <= 0:
        return seen[key]
    shares: dict[str, float] = {}
    for caller, row in callers.items():
        if caller not in table:
            continue
        for part, share in _weights(caller, table, seen).items():
            shares[part] = shares.get(part, 0.0) + share * row[2] / total
    seen[key] = shares or {"other": 1.0}
    return seen[key]


def breakdown(profile: cProfile.Profile, calls: int) -> dict[str, float]:
    """Microseconds of profiled self time a call, by part (every part of :data:`PARTS`)."""
    table = pstats.Stats(profile).stats  # type: ignore[attr-defined]  # pstats' table is undocumented
    totals = dict.fromkeys(PARTS, 0.0)
    seen: dict[tuple[str, int, str], dict[str, float]] = {}
    for key, row in table.items():
        for part, share in _weights(key, table, seen).items():
            totals[part] += row[2] * share
    return {part: seconds / calls * 1e6 for part, seconds in totals.items()}


def scaled(parts: Mapping[str, float], cpu_per_call_us: float) -> dict[str, float]:
    """``parts`` scaled so that they add up to the unprofiled CPU a call."""
    total = sum(parts.values())
    if total <= 0:
        return dict.fromkeys(parts, 0.0)
    return {part: value * cpu_per_call_us / total for part, value in parts.items()}


def print_breakdown(title: str, parts: Mapping[str, float], cpu_per_call_us: float | None) -> None:
    """Print the microseconds a call of each part that took any: scaled to the unprofiled CPU a
    call when it is given, else as profiled."""
    total = sum(parts.values())
    if cpu_per_call_us is None:
        print(f"{title}: profiled {total:.1f} us a call (shares hold; times carry the profiler's)")
        shown = dict(parts)
    else:
        print(f"{title}: profiled {total:.1f} us a call, unprofiled CPU {cpu_per_call_us:.1f} us")
        shown = scaled(parts, cpu_per_call_us)
    for part, value in shown.items():
        if parts[part] > 0:
            print(f"  {part:<22} {value:8.1f} us  ({parts[part] / total:5.1%})")

"""Reproducibility: the same example must give the same bytes, run again or in another interpreter.

:func:`reproducibility_problems` compares two runs' :class:`~harness.testing.invariants.RunBytes`
(wire bodies, turns, ``OBS_TURNS``, world lines, outcome) and names the first byte that differs,
with a diff of the two requests and, when a tool's product is what changed, the tool.
:func:`check_reproducible` runs one example in fresh interpreters under several
``PYTHONHASHSEED`` values (``python -m harness.testing._reproducible``, fed by pickle on stdin)
and compares them with a run in this interpreter.
"""

from __future__ import annotations

import difflib
import json  # the stdlib: a body shown indented with ASCII kept as json writes it, for a diff
import os
import pickle
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from harness.artifacts import Artifact
from harness.decision._internal import load_json
from harness.providers import Policy
from harness.testing._policy import RandomPolicy
from harness.testing._run_facts import RunBytes
from harness.testing._run_report import report_run
from harness.testing._violation import InvariantKind, InvariantViolation, Problem
from harness.testing._wall_clock import RunHung, guarded
from harness.thinker import DecisionThinker
from harness.tools import Identifiable, Workflow

__all__ = [
    "DEFAULT_HASH_SEEDS",
    "DEFAULT_RUN_TIMEOUT",
    "check_reproducible",
    "first_difference",
    "reproducibility_problems",
]

DEFAULT_RUN_TIMEOUT: Final = 30.0
"""Seconds one run of an example may take before the checker calls it a hang."""

DEFAULT_HASH_SEEDS: Final = (0, 1, 2)
"""The ``PYTHONHASHSEED`` values :func:`check_reproducible` runs an example under."""

_MARK: Final = "HARNESS-RUN-BYTES "
_CONTEXT_BEFORE: Final = 60
_CONTEXT_AFTER: Final = 30
_DIFF_LINES: Final = 40

_NOT_A_FUNCTION = "an unseeded random, the clock, a counter, id(), a set's order"


def first_difference(first: bytes, second: bytes) -> int | None:
    """The offset of the first byte that differs (the shorter's length when one is a prefix of
    the other), or ``None`` when both are equal."""
    if first == second:
        return None
    for offset, (a, b) in enumerate(zip(first, second, strict=False)):
        if a != b:
            return offset
    return min(len(first), len(second))


def _around(data: bytes, offset: int) -> tuple[str, int]:
    """The text around ``offset`` and the caret's column in it."""
    start = max(0, offset - _CONTEXT_BEFORE)
    prefix = ("..." if start else "") + data[start:offset].decode("utf-8", "replace")
    rest = data[offset : offset + _CONTEXT_AFTER].decode("utf-8", "replace")
    tail = "..." if offset + _CONTEXT_AFTER < len(data) else ""
    return prefix + rest + tail, len(prefix)


def _pretty(data: bytes) -> list[str]:
    try:
        return json.dumps(load_json(data), indent=2, ensure_ascii=False).splitlines()
    except ValueError:
        return data.decode("utf-8", "replace").splitlines() or [""]


def byte_diff(what: str, first: bytes, second: bytes, labels: tuple[str, str]) -> str:
    """Where ``first`` and ``second`` part (the byte, with context and a caret) and a unified
    diff of the two, pretty-printed when they are JSON."""
    offset = first_difference(first, second)
    if offset is None:
        return f"{what}: equal"
    width = max(len(label) for label in labels)
    a, caret = _around(first, offset)
    b, _ = _around(second, offset)
    lines = [
        f"{what} differs first at byte {offset}:",
        f"  {labels[0]:<{width}}: {a}",
        f"  {labels[1]:<{width}}: {b}",
        "  " + " " * (width + 2 + caret) + "^",
    ]
    diff = list(
        difflib.unified_diff(
            _pretty(first),
            _pretty(second),
            f"{what}, {labels[0]}",
            f"{what}, {labels[1]}",
            n=2,
            lineterm="",
        )
    )
    if len(diff) > _DIFF_LINES:
        diff = [*diff[:_DIFF_LINES], f"... ({len(diff) - _DIFF_LINES} more diff lines)"]
    return "\n".join([*lines, "a diff of the two:", *diff])


def _turns_of(data: str) -> list[dict[str, Any]]:  # JSON objects as written by turns_json
    try:
        loaded = load_json(data)
    except ValueError:
        return []
    return [t for t in loaded if isinstance(t, dict)] if isinstance(loaded, list) else []


def _state_lines(body: bytes) -> list[str]:
    """The artifact lines of a wire body's state (none when it has no such lines)."""
    try:
        found: Any = load_json(body)  # Any: read by key; what is not so raises below
        lines = found["state"]["artifacts"]
    except (ValueError, KeyError, TypeError):
        return []
    return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []


def _changed_product(first: RunBytes, second: RunBytes, body: bytes) -> str | None:
    """When the first world line that differs shows in ``body``: which move produced it."""
    index = next(
        (i for i, (a, b) in enumerate(zip(first.world, second.world, strict=False)) if a != b),
        None,
    )
    if index is None or first.world[index] not in _state_lines(body):
        return None
    refs = [line.split(" ", 1)[0] for line in first.world]
    if index == 0:
        return f"the input's digest line differs ({refs[0]}): its formatter is not a function"
    producer = None
    for turn in _turns_of(first.turns):
        result = turn.get("result")
        if isinstance(result, str) and result in refs and refs.index(result) <= index:
            producer = turn
    if producer is None:
        return f"the digest line of {refs[index]} differs"
    artifact = producer.get("artifact")
    shown = f"{artifact} (the input)" if artifact == refs[0] else artifact
    return (
        f"tool {producer.get('tool')} on {shown} (turn {producer.get('turn')}) produced "
        f"different artifacts from the same input ({refs[index]} differs): the tool is not "
        f"deterministic ({_NOT_A_FUNCTION})"
    )


def reproducibility_problems(
    first: RunBytes, second: RunBytes, labels: tuple[str, str] = ("run 1", "run 2")
) -> tuple[list[Problem], str]:
    """Whether two runs of one example gave the same bytes: the problems (empty when they did)
    and the details (a byte-level report and a diff of the first part that differs)."""
    kind = InvariantKind.REPRODUCIBILITY
    both = f"{labels[0]} and {labels[1]}"
    for number, (a, b) in enumerate(zip(first.bodies, second.bodies, strict=False), 1):
        if a == b:
            continue
        cause = _changed_product(first, second, a) or (
            f"the thinker's request is not a function of the run ({_NOT_A_FUNCTION})"
        )
        offset = first_difference(a, b)
        text = (
            f"not reproducible: request {number}'s wire body differs between {both} "
            f"(first at byte {offset}); {cause}"
        )
        return [Problem(kind, text)], byte_diff(f"request {number}", a, b, labels)
    if len(first.bodies) != len(second.bodies):
        text = (
            f"not reproducible: {labels[0]} asked {len(first.bodies)} decisions, {labels[1]} "
            f"{len(second.bodies)}, with the same answers to the same requests"
        )
        return [Problem(kind, text)], ""
    parts: list[tuple[str, bytes, bytes]] = [
        ("the turns (turns()) differ", first.turns.encode(), second.turns.encode()),
        ("OBS_TURNS differs", (first.obs_turns or "").encode(), (second.obs_turns or "").encode()),
        (
            "the world's lines differ",
            "\n".join(first.world).encode(),
            "\n".join(second.world).encode(),
        ),
        ("the outcome differs", first.outcome.encode(), second.outcome.encode()),
    ]
    for what, a, b in parts:
        offset = first_difference(a, b)
        if offset is None:
            continue
        text = (
            f"not reproducible: {what} between {both} (first at byte {offset}), with "
            f"byte-identical requests: the record holds something that is not a function of "
            f"the run ({_NOT_A_FUNCTION})"
        )
        name = what.rsplit(" ", 1)[0]
        return [Problem(kind, text)], byte_diff(name, a, b, labels)
    return [], ""


# -- in fresh interpreters -----------------------------------------------------------------


def _payload(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    input: Artifact,
    policy: Policy,
    run_timeout: float,
) -> bytes:
    try:
        return pickle.dumps(
            {
                "factory": factory,
                "input": input,
                "policy": policy,
                "run_timeout": run_timeout,
            }
        )
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise TypeError(
            "check_reproducible sends the factory, the input and the policy to fresh "
            f"interpreters by pickle, and one of them does not pickle ({error}): use a "
            "module-level thinker class or function, artifacts of module-level classes and a "
            "module-level policy (e.g. harness.testing.strategies.seeded_policy(0))"
        ) from error


def _run_payload(payload: bytes) -> RunBytes:
    import asyncio

    data = pickle.loads(payload)  # our own payload, written by _payload
    thinker = data["factory"](Workflow())
    timeout = float(data["run_timeout"])
    try:
        with guarded(timeout):
            report = asyncio.run(
                report_run(thinker, data["input"], data["policy"], run_timeout=timeout)
            )
    except RunHung:
        return RunBytes((), "", None, (), f"stopped after {timeout:g} s: the run blocked")
    return report.fingerprint()


def check_reproducible(
    factory: Callable[[Identifiable], DecisionThinker[Any, Any]],  # any thinker
    input: Artifact,
    policy: Policy | None = None,
    *,
    hash_seeds: Sequence[int] = DEFAULT_HASH_SEEDS,
    run_timeout: float = DEFAULT_RUN_TIMEOUT,
) -> RunBytes:
    """Run one example here and in a fresh interpreter per ``PYTHONHASHSEED`` in
    ``hash_seeds``; raise :class:`~harness.testing.InvariantViolation` (kind
    ``reproducibility``) naming the first byte that differs, with a diff of the two requests;
    return the bytes every run gave.

    ``factory``, ``input`` and ``policy`` travel by pickle, so they must be module-level
    (importable) classes and functions; ``policy`` defaults to a seeded
    :class:`~harness.testing.strategies.RandomPolicy` (seed 0). A run that hangs raises a
    violation of kind ``hang``.
    """
    chosen: Policy = policy if policy is not None else RandomPolicy(random.Random(0), label="0")
    payload = _payload(factory, input, chosen, run_timeout)
    sent = pickle.dumps((list(sys.path), payload))
    children = []
    for seed in hash_seeds:
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        command = [sys.executable, "-m", "harness.testing._reproducible"]
        process = subprocess.Popen(  # this interpreter, our own module
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        children.append((seed, process))
    here = _run_payload(payload)
    runs: list[tuple[str, RunBytes]] = [("this interpreter", here)]
    for seed, process in children:
        label = f"PYTHONHASHSEED={seed}"
        try:
            out, err = process.communicate(sent, timeout=run_timeout + 120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise InvariantViolation(
                [Problem(InvariantKind.HANG, f"the run under {label} did not end in time")], None
            ) from None
        lines = out.decode("utf-8", "replace").splitlines()
        marked = [line for line in lines if line.startswith(_MARK)]
        if process.returncode != 0 or not marked:
            tail = "\n".join(err.decode("utf-8", "replace").splitlines()[-15:])
            raise RuntimeError(
                f"the example could not run in a fresh interpreter ({label}, exit "
                f"{process.returncode}); its stderr ends:\n{tail}"
            )
        runs.append((label, RunBytes.from_json(marked[-1][len(_MARK) :])))
    for label, run in runs:
        if run.outcome.startswith("stopped after"):
            text = f"the run under {label} {run.outcome}"
            raise InvariantViolation([Problem(InvariantKind.HANG, text)], None)
    reference_label, reference = runs[0]
    for label, run in runs[1:]:
        problems, details = reproducibility_problems(reference, run, (reference_label, label))
        if problems:
            raise InvariantViolation(problems, None, details=details)
    return reference


def _main() -> None:
    path, payload = pickle.loads(sys.stdin.buffer.read())  # our own payload: see _run_payload
    sys.path[:] = path  # the parent's: its test modules import here too
    print(_MARK + _run_payload(payload).to_json(), flush=True)


if __name__ == "__main__":
    _main()

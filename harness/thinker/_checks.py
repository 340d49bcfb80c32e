"""What a thinker's constructor refuses, each refusal one line naming the fix.

One concern: the arguments of :class:`~harness.thinker.DecisionThinker` checked before it runs,
the palette included (the runtime validator gives the mypy plugin's verdicts, for every type
checker, once per thinker class and palette).
"""

from __future__ import annotations

import weakref

from harness.artifacts import Artifact
from harness.palette import thinker_input_of, validate_palette
from harness.tools import list_iterand, tool_types

__all__ = ["check_arguments"]

# Palettes already proved legal, by thinker class (weakly: classes made at run time may go).
_LEGAL: weakref.WeakKeyDictionary[type, set[tuple[object, ...]]] = weakref.WeakKeyDictionary()


def check_arguments(
    thinker: type,
    output_type: object,
    key_tool: object,
    palette: object,
    objective: object,
    max_turns: object,
    selection_threshold: object,
) -> None:
    """Refuse the constructor arguments of a ``thinker`` class that cannot make a run (a caller
    without a type checker may pass anything), and an illegal palette."""
    _require(output_type, "output_type", "the artifact class of the answer's items")
    _require(key_tool, "key_tool", "the tool producing ListArtifact[O]")
    _require(palette, "palette", "a tuple of tool classes (it may be empty)")
    if not (isinstance(output_type, type) and issubclass(output_type, Artifact)):
        raise ValueError(
            f"output_type must be an Artifact subclass (the answer's item type), not "
            f"{output_type!r}"
        )
    if not isinstance(palette, tuple):
        raise ValueError(
            "palette must be a tuple of tool classes, e.g. palette=(SplitNote,), not "
            f"{type(palette).__name__}"
        )
    if not isinstance(objective, str) or not objective.strip():
        raise ValueError("objective must be a non-blank string: say what the run is for")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be an integer >= 1, got {max_turns!r}")
    if selection_threshold is not None and (
        isinstance(selection_threshold, bool)
        or not isinstance(selection_threshold, int | float)
        or not 0.0 <= selection_threshold <= 1.0
    ):
        raise ValueError(
            f"selection_threshold must be a number in [0, 1], got {selection_threshold!r}"
        )
    _check_declared_output(thinker, output_type)
    _validate(thinker, output_type, key_tool, tuple(palette))


def _validate(
    thinker: type, output_type: type, key_tool: object, palette: tuple[object, ...]
) -> None:
    """The runtime palette validator (the mypy plugin's verdicts, for every type checker),
    once per thinker class and palette."""
    thinker_input = thinker_input_of(thinker)  # of a direct construction: its type arguments
    key: tuple[object, ...] = (thinker_input, output_type, key_tool, palette)
    proved = _LEGAL.setdefault(thinker, set())
    if key in proved:
        return
    validate_palette(
        thinker_input=thinker_input,
        output_type=output_type,
        key_tool=key_tool,
        palette=palette,
    )
    proved.add(key)


def _check_declared_output(thinker: type, output_type: type) -> None:
    """A subclass that binds O (``DecisionThinker[Note, Verdict]``) must pass that O."""
    try:
        _, declared = tool_types(thinker)
    except TypeError:
        return  # O left open (a direct DecisionThinker[...](...) call): nothing to compare
    item = list_iterand(declared)
    if item is not None and item is not output_type:
        raise ValueError(
            f"{thinker.__qualname__} declares its answer as ListArtifact[{item.__qualname__}] "
            f"but passes output_type={output_type.__qualname__}: pass output_type="
            f"{item.__qualname__}"
        )


def _require(value: object, name: str, what: str) -> None:
    if value is None:
        raise ValueError(f"{name} is required: pass {what}")

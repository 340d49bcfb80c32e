"""``MODULE:CLASS``: the thinker a batch runs, imported the same way in every process."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from harness.artifacts import Artifact, ListArtifact
from harness.errors import HarnessError
from harness.tools import DecisionTool, runtime_class, tool_types

__all__ = ["BatchError", "import_target", "input_type_of"]


class BatchError(HarnessError):
    """A batch cannot start or go on: the message says what is wrong and how to fix it."""


def import_target(target: str) -> type[DecisionTool[Any, Artifact]]:  # any thinker's types
    """The tool class ``MODULE:CLASS`` names."""
    module_name, colon, class_name = target.partition(":")
    if not colon or not module_name or not class_name:
        raise BatchError(f"{target!r} is not MODULE:CLASS (e.g. mypackage.triage:Triage)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: modules beside you import
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise BatchError(
            f"cannot import module {module_name!r}: no module named {error.name!r}; run from "
            "the folder that holds it, or add that folder to PYTHONPATH"
        ) from None
    found = getattr(module, class_name, None)
    if not (isinstance(found, type) and issubclass(found, DecisionTool)):
        raise BatchError(f"{target} is not a thinker or tool class (a DecisionTool subclass)")
    return found


def input_type_of(tool_class: type[DecisionTool[Any, Artifact]], target: str) -> type[Artifact]:
    """The artifact class each input line is built into."""
    try:
        input_type, _ = tool_types(tool_class)
    except (TypeError, ValueError) as error:
        raise BatchError(f"{target}: cannot read its input type: {error}") from None
    if issubclass(runtime_class(input_type), ListArtifact):
        raise BatchError(
            f"{target} takes a list; a batch builds one artifact per line: wrap the list in a "
            "thinker whose input is a single artifact"
        )
    return runtime_class(input_type)

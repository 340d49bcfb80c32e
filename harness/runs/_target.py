"""``MODULE:CLASS``: the one importer of a user's thinker (or tool) for every command.

``harness run``, ``batch``, ``replay`` (and ``eval``) name what to run as ``MODULE:CLASS``
(``MODULE`` a dotted module name, or the path of a ``.py`` file as ``harness check`` takes it:
``screening.py:ScreenApplication``, ``apps/screening.py:...``); each
imports it with :func:`import_target` and builds it with :func:`build_target`, so the same
mistake reads the same everywhere: one line (a :class:`TargetError`, whose ``kind`` is a key of
:data:`TARGET_ERRORS`) that the command line prints with exit code 2 and no traceback.

The table, one row a mistake (``kind``: what the line says):

=================  ===============================================================================
``form``           not ``MODULE:CLASS``: the form, with an example
``no-file``        a ``.py`` path that is not a file: both forms, with an example
``syntax``         a syntax error in the user's module: its file, line and the error
``no-module``      the module is not found: run from its folder or add that folder to PYTHONPATH
``no-package``     the module imports a package that is not installed: install it (pip install)
``import-failed``  the module raised while importing: the error's type and message, file and line
``no-class``       the module has no such name: the thinker or tool classes it does have
``not-a-tool``     the name is not a thinker or tool class: what it is instead
``palette``        the class's palette is illegal (``PaletteError``): the palette's own message
``constructor``    the class cannot be built from its parent alone, or its constructor raised
``input-type``     the class's input type cannot be read, or is a list (one artifact is built)
``extra``          an option needs an optional dependency: ``pip install 'harness[EXTRA]'``
=================  ===============================================================================

A command with its own kind of target (an evaluation's dataset, say) adds a row with
:func:`TargetError.of` and a kind of its own; :func:`import_object` imports any ``MODULE:NAME``
with the same rows for the module part.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

from harness.artifacts import Artifact, ListArtifact
from harness.errors import HarnessError
from harness.palette import PaletteError
from harness.scope import Workflow
from harness.tools import DecisionTool, runtime_class, tool_types

__all__ = [
    "TARGET_ERRORS",
    "TargetError",
    "build_target",
    "import_module",
    "import_object",
    "import_target",
    "module_of_path",
    "require_extra",
    "target_input_type",
]

_TOOL_WHAT: Final = (
    "a thinker or tool class (a DecisionTool subclass such as a DecisionThinker subclass)"
)

TARGET_ERRORS: Final[dict[str, str]] = {
    "form": "{target!r} is not MODULE:CLASS (e.g. mypackage.triage:Triage)",
    "no-file": (
        "no file {path}: give the path of a .py file (e.g. apps/triage.py:Triage) or a module "
        "name (e.g. mypackage.triage:Triage)"
    ),
    "syntax": "syntax error in module {module!r} ({place}): {detail}; fix it and run again",
    "no-module": (
        "cannot import module {module!r}: no module named {missing!r}; run from the folder "
        "that holds it, or add that folder to PYTHONPATH"
    ),
    "no-package": (
        "module {module!r} imports {missing!r}, which is not installed: install it (pip install "
        "{package}, or the package that provides it) and run again"
    ),
    "import-failed": "importing module {module!r} failed ({place}): {detail}",
    "no-class": "module {module!r} has no class {name!r}{known}",
    "not-a-tool": "{target} is {found}, not {expected}",
    "palette": "{target} has an illegal palette: {detail}",
    "constructor": "{target}: {detail}",
    "input-type": "{target}: {detail}",
    "extra": "{option} needs the optional dependency {package!r}: pip install 'harness[{extra}]'",
}
"""Each kind of user-target mistake and its one line (``str.format`` fields)."""


class TargetError(HarnessError):
    """A ``MODULE:CLASS`` the user gave cannot be imported, built or used: one line saying what
    and how to fix it (the command line prints it with exit code 2, no traceback). ``kind`` is
    its row of :data:`TARGET_ERRORS`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    @classmethod
    def of(cls, kind: str, **fields: object) -> TargetError:
        """The error of row ``kind`` of :data:`TARGET_ERRORS` with ``fields`` filled in."""
        return cls(kind, TARGET_ERRORS[kind].format(**fields))


def _split(target: str) -> tuple[str, str]:
    """``MODULE:NAME`` as the dotted module name and ``NAME``; a ``MODULE`` that is a ``.py``
    path is the module of that file (its folder, or the folder above its package, goes first on
    ``sys.path``)."""
    module_name, colon, name = target.rpartition(":")
    module_name, name = module_name.strip(), name.strip()
    is_path = module_name.endswith(".py") or "/" in module_name or os.sep in module_name
    if not colon or not module_name or not name or (":" in module_name and not is_path):
        raise TargetError.of("form", target=target)
    if is_path:
        return _module_of_file(module_name), name
    return module_name, name


def module_of_path(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The ``sys.path`` folder and dotted module name of the ``.py`` file at ``path``: up
    through the folders that hold an ``__init__.py`` (``mine/finder.py`` in a package ``mine``
    is ``mine.finder`` under the folder above ``mine``)."""
    found = os.path.abspath(os.fspath(path))
    folder, file = os.path.split(found)
    parts = [] if file == "__init__.py" else [os.path.splitext(file)[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    return folder, ".".join(parts)


def _module_of_file(path: str) -> str:
    """The dotted name of the module at ``path`` (a ``.py`` file), its folder put first on
    ``sys.path``; a path that is not a file is the ``no-file`` row."""
    if not os.path.isfile(path):
        raise TargetError.of("no-file", path=path)
    root, name = module_of_path(path)
    if root not in sys.path:
        sys.path.insert(0, root)
    return name


def _place_in(error: BaseException, module_name: str) -> str:
    """Where in the user's files ``error`` was raised: ``file:line`` of its last frame outside
    harness and the standard library, else the module's name."""
    frames = traceback.extract_tb(error.__traceback__)
    harness_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for frame in reversed(frames):
        name = frame.filename
        if name.startswith("<") or os.path.abspath(name).startswith(harness_dir):
            continue
        if "importlib" in name:
            continue
        return f"{_shown_path(name)}:{frame.lineno}"
    return module_name


def _shown_path(path: str) -> str:
    """``path`` relative to the current folder when it is under it, else as given."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _missing_is_the_target(missing: str, module_name: str) -> bool:
    """Whether the module not found is the named one (or a package above it)."""
    return module_name == missing or module_name.startswith(missing + ".")


def import_module(module_name: str) -> ModuleType:
    """Import the user's module ``module_name`` (the current folder first, as ``python -m``
    does); every failure is a :class:`TargetError` of the table."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: modules beside you import
    try:
        return importlib.import_module(module_name)
    except SyntaxError as error:
        where = f"{_shown_path(error.filename)}:{error.lineno}" if error.filename else ""
        raise TargetError.of(
            "syntax", module=module_name, place=where or module_name, detail=error.msg
        ) from None
    except ModuleNotFoundError as error:
        missing = error.name or module_name
        if _missing_is_the_target(missing, module_name):
            raise TargetError.of("no-module", module=module_name, missing=missing) from None
        if missing.split(".")[0] == module_name.split(".")[0]:  # a module of your own package
            detail = f"it imports {missing!r}, which does not exist in your package"
            raise _import_failed(error, module_name, detail) from None
        raise TargetError.of(
            "no-package", module=module_name, missing=missing, package=missing.split(".")[0]
        ) from None
    except Exception as error:  # the user's module raised while importing
        raise _import_failed(error, module_name, f"{type(error).__name__}: {error}") from None


def _import_failed(error: BaseException, module_name: str, detail: str) -> TargetError:
    """The ``import-failed`` row: ``detail``, at the place in the user's files ``error`` came
    from."""
    return TargetError.of(
        "import-failed", module=module_name, place=_place_in(error, module_name), detail=detail
    )


def _is_tool_class(found: object) -> bool:
    return isinstance(found, type) and issubclass(found, DecisionTool)


def _what(found: object) -> str:
    if isinstance(found, ModuleType):
        return "a module"
    if inspect.isfunction(found) or inspect.isbuiltin(found):
        return "a function"
    if isinstance(found, type):
        return f"the class {found.__qualname__}"
    return f"a value of type {type(found).__name__}"


def import_object(
    target: str, *, check: Callable[[object], bool], what: str, candidates: bool = True
) -> object:
    """The object ``MODULE:NAME`` names (``NAME`` may be dotted: a nested class), checked by
    ``check``; the module's failures are the
    table's rows, a missing name ``no-class`` (listing the names that pass ``check`` when
    ``candidates``), a name that fails ``check`` ``not-a-tool`` worded with ``what``."""
    module_name, name = _split(target)
    module = import_module(module_name)
    found: object = module
    for part in name.split("."):  # a nested class: Outer.Inner
        found = getattr(found, part, None)
    if found is None:
        known = ""
        if candidates:
            names = sorted(
                n
                for n, v in vars(module).items()
                if check(v) and getattr(v, "__module__", None) == module.__name__
            )
            known = f" (it has: {', '.join(names)})" if names else " (nor any other to run)"
        raise TargetError.of("no-class", module=module_name, name=name, known=known)
    if not check(found):
        raise TargetError.of("not-a-tool", target=target, found=_what(found), expected=what)
    return found


def import_target(target: str) -> type[DecisionTool[Any, Artifact]]:  # Any: any tool's types
    """The thinker (or tool) class ``MODULE:CLASS`` names; :class:`TargetError` says what is
    wrong (a row of :data:`TARGET_ERRORS`)."""
    found = import_object(target, check=_is_tool_class, what=_TOOL_WHAT)
    assert isinstance(found, type)
    assert issubclass(found, DecisionTool)
    return found


def target_input_type(tool_class: type[DecisionTool[Any, Artifact]], target: str) -> type[Artifact]:
    """The artifact class a command builds from one JSON object for ``tool_class`` (a list
    input is refused: a command builds one artifact)."""
    try:
        input_type, _ = tool_types(tool_class)
    except (TypeError, ValueError) as error:
        raise TargetError.of(
            "input-type", target=target, detail=f"cannot read its input type: {error}"
        ) from None
    if issubclass(runtime_class(input_type), ListArtifact):
        raise TargetError.of(
            "input-type",
            target=target,
            detail="it takes a list, and a command builds one artifact from each JSON object: "
            "wrap the list in a thinker whose input is a single artifact",
        )
    return runtime_class(input_type)


def build_target(
    tool_class: type[DecisionTool[Any, Artifact]], target: str
) -> DecisionTool[Any, Artifact]:  # Any: any tool's types
    """``tool_class`` built with its ``(parent)`` constructor under a fresh workflow; an illegal
    palette, a constructor that needs more than the parent, or one that raises is a
    :class:`TargetError`."""
    try:
        return tool_class(Workflow())
    except PaletteError as error:
        raise TargetError.of("palette", target=target, detail=_verdicts(error)) from None
    except (TypeError, ValueError) as error:
        raise TargetError.of(
            "constructor",
            target=target,
            detail=f"cannot build it from its parent alone: {error}; a thinker keeps the "
            "(parent) constructor",
        ) from None
    except Exception as error:  # the user's own constructor crashed: nothing ran
        raise TargetError.of(
            "constructor",
            target=target,
            detail=f"building it failed ({_place_in(error, target)}): "
            f"{type(error).__name__}: {error}",
        ) from None


def _verdicts(error: PaletteError) -> str:
    """The palette's verdicts on one line: ``code: message (fix)``, joined by ``; ``."""
    shown = []
    for verdict in error.verdicts:
        notes = " ".join(" ".join(note.split()) for note in verdict.notes)
        shown.append(f"{verdict.code}: {verdict.message}" + (f" ({notes})" if notes else ""))
    return "; ".join(shown) or str(error).splitlines()[0]


def require_extra(module: str, *, extra: str, option: str) -> None:
    """Import ``module`` (an optional dependency ``option`` needs), or say which extra to
    install: ``--admission redis://... needs ... pip install 'harness[redis]'``."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise TargetError.of("extra", option=option, package=module, extra=extra) from None

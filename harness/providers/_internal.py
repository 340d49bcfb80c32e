"""What other harness packages need of the providers' machinery and users do not:
:func:`cyclic_orders`, the one maker of the option orders a choice is asked in (a logprob
provider asks each choice in several orders; an eval's position-bias probe does the same
through a model), and :func:`gguf_problem`, what keeps a ``llama`` entry from loading, found at
resolution (the run API's :func:`harness.runs.seat_for`), and :data:`LLAMA_LOG_ENV`, the
variable that shows llama.cpp's own log (the commands' ``--verbose`` sets it), and
:data:`LLAMA_INSTALL`, the line that installs the ``llama`` extra. Not for users:
the layer test allows ``harness.x._internal``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.providers._llama_install import INSTALL as LLAMA_INSTALL
from harness.providers._llama_log import LOG_ENV as LLAMA_LOG_ENV
from harness.providers._logprob_reading import cyclic_orders as cyclic_orders

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["LLAMA_INSTALL", "LLAMA_LOG_ENV", "cyclic_orders", "gguf_problem"]


def gguf_problem(entry: CatalogEntry) -> str | None:
    """What keeps ``entry`` (a ``llama`` entry) from loading, in one line, or ``None``; any
    other entry is ``None`` without importing the llama provider's modules."""
    if entry.provider != "llama":
        return None
    from harness.providers._llama_gguf import gguf_problem as problem

    return problem(entry)

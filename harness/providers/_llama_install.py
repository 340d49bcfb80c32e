"""How the ``llama`` provider is installed: one line, said by every error that finds
llama-cpp-python missing and by ``harness models``.

llama-cpp-python is source only on the registry (about 10 minutes to build on 2 cores), so its
wheel is built once into ``~/.cache/harness-wheels`` (what ``.ci/run`` builds into and looks in;
docs/llama.md shows the build) and every later install finds it there.
"""

from __future__ import annotations

from typing import Final

__all__ = ["INSTALL"]

INSTALL: Final = "pip install --find-links ~/.cache/harness-wheels 'harness[llama]'"

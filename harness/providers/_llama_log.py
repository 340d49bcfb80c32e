"""llama.cpp's own log: silent by default, shown with ``HARNESS_LLAMA_LOG=1`` (the commands'
``--verbose``), its errors kept for harness's one-line errors.

llama.cpp writes about 1,400 lines while it loads a GGUF, a few of them warnings about the model
file (``load: control-looking token: 212 '</s>' was not control-type ...``) that a user can do
nothing about; llama-cpp-python prints its warnings and errors on stderr. Its log callback is
replaced here (:func:`install`, given the bindings by the engine, the one module that drives
them): every line is dropped unless :data:`LOG_ENV` is set, and the last error lines are kept,
so an :class:`~harness.providers._llama_engine.EngineError` says what llama.cpp said
(:func:`last_error`: ``failed to read header``) in its own one line.
"""

from __future__ import annotations

import collections
import ctypes
import os
import sys
import threading
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["LOG_ENV", "install", "last_error", "verbose"]

LOG_ENV: Final = "HARNESS_LLAMA_LOG"
"""Set (to anything but empty or ``0``), llama.cpp's own log goes to stderr, every line of it."""

_ERROR: Final = 4
"""ggml's ``GGML_LOG_LEVEL_ERROR`` (0 none, 1 debug, 2 info, 3 warn, 4 error, 5 a line's
continuation)."""
_CONTINUED: Final = 5

_errors: collections.deque[str] = collections.deque(maxlen=4)
_lock = threading.Lock()
_last_level = 0
_installed: list[object] = []  # the ctypes callback, kept alive as long as llama.cpp may call it


def verbose() -> bool:
    """Whether llama.cpp's log is shown (:data:`LOG_ENV`)."""
    return os.environ.get(LOG_ENV, "") not in ("", "0")


def _log(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
    """llama.cpp's log callback: the line on stderr when :func:`verbose`, else nothing; an
    error line (and its continuations) kept for :func:`last_error` either way."""
    global _last_level
    line = text.decode("utf-8", errors="replace")
    shown = level if level != _CONTINUED else _last_level
    _last_level = shown
    if shown == _ERROR and line.strip():
        with _lock:
            _errors.append(line.strip())
    if verbose():
        print(line, end="", file=sys.stderr, flush=True)


def install(bindings: ModuleType) -> None:
    """Route llama.cpp's log through :func:`_log` (once per process; after llama-cpp-python's
    own import, which installs its printer)."""
    with _lock:
        if _installed:
            return
        callback = bindings.llama_log_callback(_log)
        bindings.llama_log_set(callback, ctypes.c_void_p(0))
        _installed.append(callback)


def last_error() -> str:
    """``": <what llama.cpp said last at error level>"`` (cleared once read), or ``""``."""
    with _lock:
        said = _errors[-1] if _errors else ""
        _errors.clear()
    return f": llama.cpp said {said!r}" if said else ""

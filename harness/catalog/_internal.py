"""What the packages above the catalog take of its machinery and users do not:
:class:`OncePerProcess`, the one maker of things built once per process and shared (a
tokenizer's encoding here; a GGUF's path, its loaded model and its contexts in the providers),
and :func:`did_you_mean`, the one near-match hint of a name nothing answers to (an entry id, a
model string; the command line's options use it too)."""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

__all__ = ["OncePerProcess", "did_you_mean"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class OncePerProcess(Generic[K, V]):
    """The value ``build(key)`` made once per key for the life of the process, thread-safe: the
    first caller builds it while the others wait, and every caller gets the same object. A build
    that raises keeps nothing (the next call tries again). :attr:`built` counts the builds."""

    def __init__(self, build: Callable[[K], V]) -> None:
        self._build = build
        self._made: dict[K, V] = {}
        self._lock = threading.Lock()
        self.built = 0

    def __call__(self, key: K) -> V:
        try:
            return self._made[key]
        except KeyError:
            pass
        with self._lock:
            if key not in self._made:
                self._made[key] = self._build(key)
                self.built += 1
            return self._made[key]


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """``"; did you mean 'embedded'?"`` when one of ``known`` is near ``given`` (difflib's
    ratio at least 0.6, the closest), else ``""``: the end of a line refusing ``given``."""
    found = difflib.get_close_matches(given, list(known), n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""

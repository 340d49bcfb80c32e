"""What the packages above the catalog take of its machinery and users do not:
:class:`OncePerProcess`, the one maker of things built once per process and shared (a
tokenizer's encoding here; a GGUF's path, its loaded model and its contexts in the providers)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["OncePerProcess"]

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

"""``OncePerProcess``: the one maker of what a process builds once and shares (a tokenizer, a
GGUF's path, its model, its contexts): one build per key across threads, nothing kept from a
build that fails."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness.catalog._internal import OncePerProcess


def test_each_key_is_built_once_across_threads_and_shared() -> None:
    started = threading.Barrier(8)
    built: list[int] = []

    def build(key: int) -> list[int]:
        built.append(key)
        return [key]

    made: OncePerProcess[int, list[int]] = OncePerProcess(build)

    def ask(key: int) -> list[int]:
        started.wait()
        return made(key)

    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(ask, [1, 2] * 4))
    assert sorted(built) == [1, 2]
    assert made.built == 2
    assert all(value is found[0] for value in found[0::2])
    assert all(value is found[1] for value in found[1::2])


def test_a_failed_build_keeps_nothing_and_the_next_call_builds_again() -> None:
    calls: list[str] = []

    def build(key: str) -> str:
        calls.append(key)
        if len(calls) == 1:
            raise OSError("not there yet")
        return key.upper()

    made: OncePerProcess[str, str] = OncePerProcess(build)
    with pytest.raises(OSError, match="not there yet"):
        made("a")
    assert made.built == 0
    assert made("a") == "A"
    assert made("a") == "A"
    assert (calls, made.built) == (["a", "a"], 1)

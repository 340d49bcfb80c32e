"""A ``llama`` entry's contexts over its one loaded model, and the worker threads that use them.

An entry runs ``max_concurrent`` contexts at most (one by default; ``harness batch`` and
``harness eval`` make it their ``--concurrency N``), each its own KV cache over the same weights,
made when a call finds none idle, each used by one worker thread at a time. The process keeps
one pool per model and settings, shared by every client, run and Ray task naming them, so
contexts, like the model, are made once per process and reused.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import attrs

from harness.catalog._internal import OncePerProcess

from ._llama_engine import LlamaContext, LlamaModel, default_threads
from ._llama_gguf import gguf_path, model_loads

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["Contexts", "Place", "Settings", "contexts_for", "settings_of"]

T = TypeVar("T")


@attrs.frozen
class Settings:
    """What a pool's contexts are made with (the pool's key in the process)."""

    path: str
    n_ctx: int
    n_batch: int
    n_threads: int
    contexts: int


def settings_of(entry: CatalogEntry) -> Settings:
    """The contexts ``entry`` runs: ``max_concurrent`` of them (one when unset), each of
    ``n_threads`` (default: half the logical CPUs shared by the contexts, at least one)."""
    contexts = entry.max_concurrent or 1
    return Settings(
        path=gguf_path(entry),
        n_ctx=entry.n_ctx or entry.max_context_tokens,
        n_batch=entry.n_batch,
        n_threads=entry.n_threads or default_threads(contexts),
        contexts=contexts,
    )


@attrs.frozen
class Place:
    """Where a call ran: the process, the number of the context in its pool (0 to
    ``contexts - 1``), and the GGUF loads the process had made by then (one per model file: a
    Ray worker answering many inputs still says 1)."""

    process: int
    context: int
    model_loads: int

    def as_json(self) -> dict[str, int]:
        """The place as plain JSON values (a part of the call's ``reading``)."""
        return {"process": self.process, "context": self.context, "model_loads": self.model_loads}


class Contexts:
    """An entry's contexts over its model (at most ``settings.contexts``, made when first
    needed), each used by one worker thread at a time; the threads run the calls."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.contexts, thread_name_prefix="harness-llama"
        )
        self._idle: queue.SimpleQueue[tuple[int, LlamaContext]] = queue.SimpleQueue()
        self._held = 0  # contexts made or being made
        self._made = 0
        self._lock = threading.Lock()
        self.last_decode_seconds = 0.0

    @property
    def made(self) -> int:
        """How many contexts the pool has made (never more than ``settings.contexts``)."""
        return self._made

    def run(self, model: LlamaModel, work: Callable[[LlamaContext], T]) -> tuple[T, Place]:
        """Run ``work`` on an idle context (made when none is idle and fewer than the limit
        exist; else the next one given back); what it returned and where it ran.
        ``last_decode_seconds`` is then the time it spent in the model's forward passes (what
        the benchmark compares with)."""
        try:
            number, context = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                make = self._held < self.settings.contexts
                if make:
                    self._held += 1
            if make:
                number, context = self._make(model)
            else:
                number, context = self._idle.get()
        try:
            return work(context), Place(os.getpid(), number, model_loads())
        finally:
            self.last_decode_seconds = context.decode_seconds
            self._idle.put((number, context))

    def _make(self, model: LlamaModel) -> tuple[int, LlamaContext]:
        """A new context and its number (the contexts made before it)."""
        try:
            context = LlamaContext(
                model,
                n_ctx=self.settings.n_ctx,
                n_batch=self.settings.n_batch,
                n_threads=self.settings.n_threads,
            )
        except BaseException:
            with self._lock:
                self._held -= 1
            raise
        with self._lock:
            number = self._made
            self._made += 1
        return number, context


contexts_for: OncePerProcess[Settings, Contexts] = OncePerProcess(Contexts)
"""The process's contexts of these settings (one pool per model and settings)."""

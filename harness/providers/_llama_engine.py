"""A GGUF model in this process through llama.cpp (llama-cpp-python's low-level API): the model
loaded once per process, contexts over it, and options scored exactly by teacher forcing.

What one scoring does (:meth:`LlamaContext.score`): every option of every question is a token
sequence (the question's prompt, then the option's text and the closing delimiter). The
sequences are put in a trie, so a token shared by several of them (the state, a question's
prompt shared by its options) is evaluated once:

* the prefix all sequences share (the state's part) is evaluated once, in sequence 0;
* the rest goes in batches where each token belongs to every sequence passing through it
  (llama.cpp's sequence ids over one unified KV cache): a question's prompt is evaluated once for
  all its options, each option only over its own tokens, and all questions in the same batch;
* each sequence starts from the shared prefix by a sequence copy (``llama_memory_seq_cp``, which
  shares the cells, it copies nothing), and is removed when its group is done, so the cache is
  back at the shared prefix between groups (and cleared between calls: no state leaks).

Across calls (the walked mode, the default): the last sequence a scoring walked stays in the
cache, with the record of its tokens (:attr:`LlamaContext.kept`); the next scoring cuts the cache
back to the longest prefix of it that the new sequences share (the instructions, the examples,
the start of a state that grew since), up to the first token whose logits it reads (llama.cpp
keeps the logits of the last evaluation only), and evaluates only the rest. Each token still
sits at the cell of its position, as in a fresh evaluation, so a reused prefix is the same as one
evaluated again, bit for bit (tests/providers). Anything else (the batched mode, the brute
force, an error or a deadline mid-way) clears the cache and the record together.

The logits read are the full vocabulary's at each position an option token follows; a
log-softmax over them gives each token's log-probability. Nothing is sorted, cut to a top-k or
sampled. :meth:`LlamaContext.score_alone` evaluates each sequence on its own from an empty cache:
the brute force the tests and the benchmark compare against.

One concern, past 400 lines: driving llama.cpp's low-level bindings (load, contexts, the cache
walk, logits to log-probabilities); it is the one module that touches them, so a change of
llama-cpp-python's API lands here alone.
"""

from __future__ import annotations

import ctypes
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import attrs
import numpy as np
import numpy.typing as npt

from harness.errors import HarnessError

from ._llama_log import install as install_log
from ._llama_log import last_error

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "LOGITS_MISSING",
    "EngineError",
    "LlamaContext",
    "LlamaModel",
    "Scored",
    "import_llama",
]

SEQUENCES: Final = 64
"""Sequence ids a context holds: one for the shared prefix, the rest for options scored in one
group (a request with more options is scored in several groups over the same prefix)."""

MIN_BATCH: Final = 8
"""Evaluations of fewer tokens are padded to this many with tokens of a sequence of their own
(:data:`PAD_SEQUENCE`, removed right after): llama.cpp computes a batch of 1 to 7 tokens by
other kernels than a larger one, whose results differ in the last bits, which Gemma's
quantized activations then carry into its log-probabilities (by up to 0.06, measured)."""
PAD_SEQUENCE: Final = SEQUENCES - 1

OUTPUTS: Final = 64
"""The most positions whose logits one evaluation returns (each a row over the vocabulary: 1 MB
for Gemma's 262,144 tokens); more are cut into further evaluations."""

LOGITS_MISSING: Final = "llama.cpp returned no logits for a position it was asked to output"


class EngineError(HarnessError, RuntimeError):
    """llama.cpp refused to load the model, make a context or evaluate a batch."""


class LateError(EngineError):
    """A scoring's deadline passed between two evaluations."""


def import_llama() -> ModuleType:
    """``llama_cpp.llama_cpp`` (the ctypes bindings), llama.cpp's log silent unless asked for
    (:mod:`._llama_log`: ``HARNESS_LLAMA_LOG=1``, the commands' ``--verbose``); ImportError when
    not installed."""
    from llama_cpp import llama_cpp as bindings  # type: ignore[import-untyped, import-not-found, unused-ignore]

    install_log(bindings)
    return bindings  # type: ignore[no-any-return, unused-ignore]


@attrs.frozen
class Scored:
    """The summed log-probability of each sequence's tokens after its ``start``, the decodes it
    took and the tokens evaluated."""

    logprobs: tuple[float, ...]
    decodes: int
    tokens: int
    """The tokens the scoring held in the cache, each counted once: evaluated now, or reused."""
    decode_seconds: float
    """Time spent inside ``llama_decode`` (the model's forward passes)."""
    reused: int = 0
    """Of ``tokens``, those already in the cache from the scoring before (not evaluated)."""

    @property
    def evaluated(self) -> int:
        """The tokens this scoring evaluated."""
        return self.tokens - self.reused


class LlamaModel:
    """One GGUF loaded (weights and vocabulary), shared by every context over it; thread-safe
    for tokenizing."""

    def __init__(self, path: str) -> None:
        llama = import_llama()
        self._llama = llama
        self.path = path
        with _backend_lock:
            global _backend_ready
            if not _backend_ready:
                llama.llama_backend_init()
                _backend_ready = True
        params = llama.llama_model_default_params()
        # No repacked weights: llama.cpp's repacked kernels compute a token by a 4-row GEMM or
        # by a GEMV depending on its place in the batch, and the two differ (by 1e-2 in a
        # log-probability, measured on Gemma), so an option would score differently in another
        # batch. Without them a token's logits depend only on its sequence: the cached scoring
        # equals a fresh evaluation of each sequence, bit for bit (tests/providers).
        params.use_extra_bufts = False
        model = llama.llama_model_load_from_file(path.encode("utf-8"), params)
        if not model:
            raise EngineError(f"llama.cpp could not load the GGUF file {path}{last_error()}")
        self.model = model
        self.vocab = llama.llama_model_get_vocab(model)
        self.n_vocab = int(llama.llama_vocab_n_tokens(self.vocab))
        self.n_ctx_train = int(llama.llama_model_n_ctx_train(model))
        self.name = self.meta("general.name") or os.path.splitext(os.path.basename(path))[0]
        self.chat_template = self.meta("tokenizer.chat_template")

    def meta(self, key: str) -> str | None:
        """A metadata value of the GGUF as a string, or None."""
        size = 1 << 16
        buffer = ctypes.create_string_buffer(size)
        written = self._llama.llama_model_meta_val_str(self.model, key.encode(), buffer, size)
        if written < 0:
            return None
        if written >= size:
            buffer = ctypes.create_string_buffer(written + 1)
            self._llama.llama_model_meta_val_str(self.model, key.encode(), buffer, written + 1)
        return buffer.value.decode("utf-8", errors="replace") or None

    def tokenize(self, text: str, *, first: bool, special: bool = False) -> list[int]:
        """``text``'s tokens in the model's own tokenization; ``first``: the start of a sequence
        (the beginning-of-sequence token added when the model asks for one); ``special``: text
        such as ``<end_of_turn>`` read as the special token (a chat template's markup only,
        never a state's text)."""
        data = text.encode("utf-8")
        room = len(data) + 8
        tokens = (ctypes.c_int32 * room)()
        count = self._llama.llama_tokenize(
            self.vocab, data, len(data), tokens, room, first, special
        )
        if count < 0:
            room = -count
            tokens = (ctypes.c_int32 * room)()
            count = self._llama.llama_tokenize(
                self.vocab, data, len(data), tokens, room, first, special
            )
        return list(tokens[:count])

    def render_chat(self, messages: Sequence[tuple[str, str]], *, open_reply: bool) -> str | None:
        """``messages`` (role, content) through the GGUF's chat template (llama.cpp's own
        renderer), ending with the assistant's turn opened when ``open_reply``; None when the
        model has no template llama.cpp knows."""
        if self.chat_template is None:
            return None
        llama = self._llama
        array = (llama.llama_chat_message * len(messages))()
        kept = []
        for index, (role, content) in enumerate(messages):
            role_bytes, content_bytes = role.encode(), content.encode("utf-8")
            kept.append((role_bytes, content_bytes))
            array[index].role = role_bytes
            array[index].content = content_bytes
        template = self.chat_template.encode("utf-8")
        size = 4096 + sum(len(c) for _, c in kept) * 2
        buffer = ctypes.create_string_buffer(size)
        written = llama.llama_chat_apply_template(
            template, array, len(messages), open_reply, buffer, size
        )
        if written < 0:
            return None
        if written > size:
            buffer = ctypes.create_string_buffer(written)
            written = llama.llama_chat_apply_template(
                template, array, len(messages), open_reply, buffer, written
            )
        return buffer.raw[:written].decode("utf-8", errors="replace")


_backend_lock = threading.Lock()
_backend_ready = False


@attrs.define
class _Node:
    token: int
    depth: int
    parent: int
    """Index of the parent node (-1: none)."""
    children: dict[int, int] = attrs.Factory(dict)
    leaves: list[int] = attrs.Factory(list)
    output: bool = False
    needed: bool = False
    """Evaluated: an output, or the way to one (a sequence's last token never is)."""


class LlamaContext:
    """A context over a :class:`LlamaModel` (its own KV cache), used by one thread at a time."""

    def __init__(self, model: LlamaModel, *, n_ctx: int, n_batch: int, n_threads: int) -> None:
        llama = model._llama
        self._llama = llama
        self.model = model
        n_batch = max(n_batch, MIN_BATCH)
        params = llama.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = n_batch
        params.n_ubatch = n_batch
        params.n_seq_max = SEQUENCES
        params.n_outputs_max = max(n_batch, SEQUENCES, OUTPUTS)  # llama.cpp wants >= n_seq_max
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.kv_unified = True  # one cache whose cells several sequences share
        params.swa_full = True  # sliding-window layers keep every cell: no pruning under a copy
        params.no_perf = True
        # The cache in float32 and no flash attention: with float16 keys and values (and the
        # flash-attention kernels), a token's logits changed with how its sequence was cut
        # into evaluations, by up to 0.3 in a log-probability on Gemma 3 270M (measured);
        # in float32 they do not (beside the small batches that MIN_BATCH pads).
        params.type_k = params.type_v = 0  # GGML_TYPE_F32
        params.flash_attn_type = 0  # LLAMA_FLASH_ATTN_TYPE_DISABLED
        context = llama.llama_init_from_model(model.model, params)
        if not context:
            raise EngineError(
                f"llama.cpp could not make a context of {n_ctx} tokens for {model.path}"
                f"{last_error()}"
            )
        self.context = context
        self.n_ctx = int(llama.llama_n_ctx(context))
        self.n_batch = n_batch
        self.memory = llama.llama_get_memory(context)
        self._batch = llama.llama_batch_init(n_batch, 0, SEQUENCES)
        self._tokens = np.ctypeslib.as_array(self._batch.token, shape=(n_batch,))
        self._positions = np.ctypeslib.as_array(self._batch.pos, shape=(n_batch,))
        self._seq_counts = np.ctypeslib.as_array(self._batch.n_seq_id, shape=(n_batch,))
        self._outputs = np.ctypeslib.as_array(self._batch.logits, shape=(n_batch,))
        self._scratch = np.empty(model.n_vocab, dtype=np.float32)
        self.decode_seconds = 0.0
        self._deadline: float | None = None
        self._kept: tuple[int, ...] = ()

    @property
    def kept(self) -> tuple[int, ...]:
        """The tokens in cells 0 to n-1 of sequence 0, left by the last walked scoring for the
        next one to reuse (empty: the cache is empty)."""
        return self._kept

    def forget(self) -> None:
        """Clear the cache and its record (the next scoring starts from nothing)."""
        self._kept = ()
        if self.context:
            self._llama.llama_memory_clear(self.memory, False)

    def close(self) -> None:
        """Free the context (not the model)."""
        self._kept = ()
        if self.context:
            self._llama.llama_batch_free(self._batch)
            self._llama.llama_free(self.context)
            self.context = None

    # -- the scoring ---------------------------------------------------------------------------

    def score(
        self,
        sequences: Sequence[Sequence[int]],
        starts: Sequence[int],
        *,
        batched: bool = False,
        deadline: float | None = None,
    ) -> Scored:
        """The summed log-probability of ``sequences[i][starts[i]:]`` given the tokens before,
        sharing what the sequences share (see the module's notes). Every start is >= 1 (the
        first token has nothing before it).

        By default the sequences are walked in the trie's order on one sequence id: the cache is
        cut back to what the next sequence shares with the last and only the rest is evaluated,
        so each token sits at the cell of its position, as in a fresh evaluation, and every sum
        equals the brute force's (:meth:`score_alone`) bit for bit. ``batched`` evaluates all
        sequences past their shared prefix at once, one sequence id each: fewer, larger
        evaluations, but each token's attention then sums over its cells in another layout,
        which moves the results by float rounding (see docs/llama.md for how much).
        ``deadline`` (a ``time.monotonic()``) stops between two evaluations.

        A walked scoring starts from what the one before left in the cache (:attr:`kept`), cut
        back to the longest prefix the new sequences share with it, and leaves its own last
        sequence there; ``reused`` says how many tokens that saved. The batched mode, an error
        and a deadline clear the cache and the record."""
        self.decode_seconds = 0.0
        self._deadline = deadline
        nodes, leaf_nodes = _trie(sequences, starts)
        _mark_needed(nodes)
        logprobs: dict[int, npt.NDArray[np.float32]] = {}
        needed = _needed_tokens(nodes)
        kept, self._kept = self._kept, ()  # unknown until the scoring is done
        reused = 0
        try:
            if batched:
                self._llama.llama_memory_clear(self.memory, False)
                decodes = self._score_batched(nodes, leaf_nodes, needed, logprobs)
                self._llama.llama_memory_clear(self.memory, False)
            else:
                decodes, reused, cached = self._score_walked(
                    sequences, nodes, leaf_nodes, needed, logprobs, kept
                )
                self._kept = tuple(nodes[n].token for n in cached)
        except BaseException:
            self._llama.llama_memory_clear(self.memory, False)
            raise
        sums = [
            _summed(nodes, leaf_nodes[index], starts[index], needed, logprobs)
            for index in range(len(sequences))
        ]
        evaluated = sum(1 for node in nodes[1:] if node.needed)
        return Scored(tuple(sums), decodes, evaluated, self.decode_seconds, reused)

    def _score_walked(
        self,
        sequences: Sequence[Sequence[int]],
        nodes: Sequence[_Node],
        leaf_nodes: Sequence[int],
        needed: dict[int, list[int]],
        logprobs: dict[int, npt.NDArray[np.float32]],
        kept: Sequence[int],
    ) -> tuple[int, int, list[int]]:
        """Each sequence in turn on sequence 0: the cache cut back to the part it shares with
        the one before (``llama_memory_seq_rm``), the rest evaluated. The first sequences are
        those sharing the most with ``kept`` (what the cache holds), so that part is reused; the
        order stays a depth-first walk of the trie, so no token is evaluated twice. The
        decodes, the tokens reused and the nodes left in the cache, by depth."""
        cached = _matched(nodes, kept)  # the nodes in the cache, by depth
        if not cached:
            self._llama.llama_memory_clear(self.memory, False)
        elif len(cached) < len(kept):
            self._cut(len(cached))
        reused = len(cached)
        in_cache = set(cached)
        shared = [_shared_depth(nodes, leaf, in_cache) for leaf in leaf_nodes]
        decodes = 0
        for index in sorted(range(len(sequences)), key=lambda i: (-shared[i], list(sequences[i]))):
            at = leaf_nodes[index]
            while at > 0 and not nodes[at].needed:
                at = nodes[at].parent
            fresh: list[int] = []
            while at > 0 and at not in in_cache:
                fresh.append(at)
                at = nodes[at].parent
            if not fresh:
                continue
            keep = nodes[at].depth  # the depth both share (0: nothing)
            if keep < len(cached):
                self._cut(keep)
                for gone in cached[keep:]:
                    in_cache.discard(gone)
                del cached[keep:]
            fresh.reverse()
            decodes += self._evaluate([(n, (0,)) for n in fresh], nodes, needed, logprobs)
            cached.extend(fresh)
            in_cache.update(fresh)
        return decodes, reused, cached

    def _cut(self, keep: int) -> None:
        """Sequence 0 cut back to its first ``keep`` cells."""
        if not self._llama.llama_memory_seq_rm(self.memory, 0, keep, -1):
            raise EngineError("llama.cpp could not cut the cache back to a shared prefix")

    def _score_batched(
        self,
        nodes: Sequence[_Node],
        leaf_nodes: Sequence[int],
        needed: dict[int, list[int]],
        logprobs: dict[int, npt.NDArray[np.float32]],
    ) -> int:
        """The shared prefix in sequence 0, then groups of sequences, one id each, copied from
        it (``llama_memory_seq_cp`` shares the cells) and evaluated together."""
        llama = self._llama
        chain = []
        node = 0
        while len(nodes[node].children) == 1 and nodes[node].needed:
            node = next(iter(nodes[node].children.values()))
            if not nodes[node].needed:
                break
            chain.append(node)
        shared = len(chain)
        decodes = self._evaluate([(n, (0,)) for n in chain], nodes, needed, logprobs)
        prefix_end = chain[-1] if chain else 0
        leaves = sorted(range(len(leaf_nodes)), key=lambda i: leaf_nodes[i])
        for group in _groups(nodes, prefix_end, leaves, leaf_nodes, self.n_ctx - shared):
            seq_of = {leaf: index + 1 for index, leaf in enumerate(group)}
            for seq in seq_of.values():
                llama.llama_memory_seq_cp(self.memory, 0, seq, -1, -1)
            work = [
                n for n in _group_nodes(nodes, prefix_end, group, leaf_nodes) if nodes[n].needed
            ]
            items = [
                (n, tuple(sorted(seq_of[leaf] for leaf in nodes[n].leaves if leaf in seq_of)))
                for n in work
            ]
            decodes += self._evaluate(items, nodes, needed, logprobs)
            for seq in seq_of.values():
                llama.llama_memory_seq_rm(self.memory, seq, -1, -1)
        return decodes

    def score_alone(self, sequences: Sequence[Sequence[int]], starts: Sequence[int]) -> Scored:
        """The same sums, each sequence evaluated alone from an empty cache in one batch per
        ``n_batch`` tokens (the brute force: nothing shared, nothing kept)."""
        self.decode_seconds = 0.0
        self._deadline = None
        self._kept = ()
        sums = []
        decodes = 0
        tokens = 0
        for sequence, start in zip(sequences, starts, strict=True):
            nodes, leaf_nodes = _trie([sequence], [start])
            needed = _needed_tokens(nodes)
            self._llama.llama_memory_clear(self.memory, False)
            logprobs: dict[int, npt.NDArray[np.float32]] = {}
            path = _path(nodes, leaf_nodes[0])
            decodes += self._evaluate([(n, (0,)) for n in path], nodes, needed, logprobs)
            tokens += len(path)
            sums.append(_summed(nodes, leaf_nodes[0], start, needed, logprobs))
        self._llama.llama_memory_clear(self.memory, False)
        return Scored(tuple(sums), decodes, tokens, self.decode_seconds)

    def evaluate_only(self, tokens: Sequence[int]) -> float:
        """Seconds the model takes to evaluate ``tokens`` from an empty cache (one sequence, the
        last position's logits out): the forward pass alone, for the benchmark."""
        self.decode_seconds = 0.0
        self._deadline = None
        self._kept = ()
        self._llama.llama_memory_clear(self.memory, False)
        nodes, leaf_nodes = _trie([tokens], [len(tokens)])
        path = _path(nodes, leaf_nodes[0])
        nodes[path[-1]].output = True
        self._evaluate([(n, (0,)) for n in path], nodes, {path[-1]: []}, {})
        self._llama.llama_memory_clear(self.memory, False)
        return self.decode_seconds

    def _evaluate(
        self,
        items: Sequence[tuple[int, tuple[int, ...]]],
        nodes: Sequence[_Node],
        needed: dict[int, list[int]],
        logprobs: dict[int, npt.NDArray[np.float32]],
    ) -> int:
        """Decode ``items`` (node, its sequence ids) in batches of ``n_batch``, parents first;
        the log-probabilities of the needed tokens after each output node go in ``logprobs``."""
        llama = self._llama
        batch = self._batch
        decodes = 0
        for chunk in _chunks(items, nodes, self.n_batch):
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise LateError("the call's time ran out between two evaluations")
            outputs = []
            for slot, (index, seqs) in enumerate(chunk):
                node = nodes[index]
                self._tokens[slot] = node.token
                self._positions[slot] = node.depth - 1
                self._seq_counts[slot] = len(seqs)
                ids = batch.seq_id[slot]
                for k, seq in enumerate(seqs):
                    ids[k] = seq
                self._outputs[slot] = 1 if node.output else 0
                if node.output:
                    outputs.append((slot, index))
            filled = len(chunk)
            padded = max(filled, MIN_BATCH)
            for slot in range(filled, padded):  # padding: its own sequence, after the rest
                self._tokens[slot] = nodes[chunk[0][0]].token
                self._positions[slot] = slot - filled
                self._seq_counts[slot] = 1
                batch.seq_id[slot][0] = PAD_SEQUENCE
                self._outputs[slot] = 0
            batch.n_tokens = padded
            began = time.perf_counter()
            status = llama.llama_decode(self.context, batch)
            self.decode_seconds += time.perf_counter() - began
            if padded > filled:
                llama.llama_memory_seq_rm(self.memory, PAD_SEQUENCE, -1, -1)
            decodes += 1
            if status != 0:
                raise EngineError(
                    f"llama.cpp could not evaluate a batch of {len(chunk)} tokens (status "
                    f"{status}): the context of {self.n_ctx} tokens may be full{last_error()}"
                )
            for slot, index in outputs:
                pointer = llama.llama_get_logits_ith(self.context, slot)
                if not pointer:
                    raise EngineError(LOGITS_MISSING)
                row = np.ctypeslib.as_array(pointer, shape=(self.model.n_vocab,))
                logprobs[index] = _log_softmax_at(row, needed.get(index, []), self._scratch)
        return decodes


def _chunks(
    items: Sequence[tuple[int, tuple[int, ...]]], nodes: Sequence[_Node], size: int
) -> list[Sequence[tuple[int, tuple[int, ...]]]]:
    """``items`` cut in order into batches of at most ``size`` tokens and :data:`OUTPUTS`
    outputs (each output is a row of the whole vocabulary's logits in llama.cpp's buffer)."""
    chunks: list[Sequence[tuple[int, tuple[int, ...]]]] = []
    begin = 0
    outputs = 0
    for at, (index, _) in enumerate(items):
        if at - begin >= size or (nodes[index].output and outputs >= OUTPUTS):
            chunks.append(items[begin:at])
            begin, outputs = at, 0
        if nodes[index].output:
            outputs += 1
    if begin < len(items):
        chunks.append(items[begin:])
    return chunks


def _log_softmax_at(
    row: npt.NDArray[np.float32], tokens: Sequence[int], scratch: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """The log-softmax of ``row`` (the whole vocabulary) at ``tokens``, in float64 for the sum."""
    top = float(row.max())
    np.subtract(row, top, out=scratch)
    np.exp(scratch, out=scratch)
    normaliser = top + math.log(float(scratch.sum(dtype=np.float64)))
    picked = row[np.asarray(tokens, dtype=np.intp)].astype(np.float64)
    return (picked - normaliser).astype(np.float64)


def _trie(
    sequences: Sequence[Sequence[int]], starts: Sequence[int]
) -> tuple[list[_Node], list[int]]:
    """The token trie of ``sequences`` (node 0 the root), each node's leaves, and the outputs
    needed: a node whose next token in some sequence is scored (at or past its start)."""
    nodes = [_Node(token=-1, depth=0, parent=-1)]
    leaf_nodes = []
    for index, (sequence, start) in enumerate(zip(sequences, starts, strict=True)):
        if not 1 <= start <= len(sequence):
            raise ValueError(f"start {start} outside 1..{len(sequence)}")
        at = 0
        nodes[0].leaves.append(index)
        for depth, token in enumerate(sequence, start=1):
            found = nodes[at].children.get(token)
            if found is None:
                found = len(nodes)
                nodes.append(_Node(token=token, depth=depth, parent=at))
                nodes[at].children[token] = found
            if depth - 1 >= start:
                nodes[at].output = True
            at = found
            nodes[at].leaves.append(index)
        leaf_nodes.append(at)
    return nodes, leaf_nodes


def _summed(
    nodes: Sequence[_Node],
    leaf: int,
    start: int,
    needed: dict[int, list[int]],
    logprobs: dict[int, npt.NDArray[np.float32]],
) -> float:
    """The summed log-probability of the tokens of ``leaf``'s sequence from index ``start``."""
    parts = []
    at = leaf
    while at > 0 and nodes[at].depth - 1 >= start:
        parent = nodes[at].parent
        parts.append(float(logprobs[parent][needed[parent].index(nodes[at].token)]))
        at = parent
    return math.fsum(parts)


def _matched(nodes: Sequence[_Node], kept: Sequence[int]) -> list[int]:
    """The nodes along the longest prefix of ``kept`` that is a path of the trie, up to the
    first output: an output's logits are read, so it is evaluated again (llama.cpp keeps the
    logits of the last evaluation only)."""
    found: list[int] = []
    at = 0
    for token in kept:
        child = nodes[at].children.get(token)
        if child is None or not nodes[child].needed or nodes[child].output:
            break
        found.append(child)
        at = child
    return found


def _shared_depth(nodes: Sequence[_Node], leaf: int, in_cache: set[int]) -> int:
    """The depth of ``leaf``'s deepest ancestor (or itself) in ``in_cache`` (0: none)."""
    at = leaf
    while at > 0 and at not in in_cache:
        at = nodes[at].parent
    return nodes[at].depth if at > 0 else 0


def _tail(nodes: Sequence[_Node], leaf: int, depth: int) -> list[int]:
    """The nodes deeper than ``depth`` on the path to ``leaf``, parents first."""
    found = []
    at = leaf
    while at > 0 and nodes[at].depth > depth:
        found.append(at)
        at = nodes[at].parent
    found.reverse()
    return found


def _mark_needed(nodes: Sequence[_Node]) -> None:
    """Mark each output node and every node on the way to it as needed."""
    for node in nodes[1:]:
        if node.output:
            at: _Node | None = node
            while at is not None and not at.needed and at.depth > 0:
                at.needed = True
                at = nodes[at.parent] if at.parent > 0 else None


def _needed_tokens(nodes: Sequence[_Node]) -> dict[int, list[int]]:
    """For each output node, the tokens whose log-probability after it is read (its children)."""
    return {i: list(node.children) for i, node in enumerate(nodes) if node.output}


def _path(nodes: Sequence[_Node], leaf: int) -> list[int]:
    """The nodes from the first token to ``leaf`` (index d-1 holds the node at depth d)."""
    path = []
    at = leaf
    while at > 0:
        path.append(at)
        at = nodes[at].parent
    path.reverse()
    return path


def _group_nodes(
    nodes: Sequence[_Node], prefix_end: int, group: Sequence[int], leaf_nodes: Sequence[int]
) -> list[int]:
    """The nodes past the shared prefix on the paths of ``group``'s leaves, parents first."""
    depth = nodes[prefix_end].depth
    seen: set[int] = set()
    ordered: list[int] = []
    for leaf in group:
        for node in _tail(nodes, leaf_nodes[leaf], depth):
            if node not in seen:
                seen.add(node)
                ordered.append(node)
    ordered.sort(key=lambda n: nodes[n].depth)  # parents first (a stable order per depth)
    return ordered


def _groups(
    nodes: Sequence[_Node],
    prefix_end: int,
    leaves: Sequence[int],
    leaf_nodes: Sequence[int],
    room: int,
) -> list[list[int]]:
    """The leaves cut into groups of at most ``SEQUENCES - 2`` sequences whose tokens past the
    shared prefix fit in ``room`` cells (a lone sequence always makes a group)."""
    depth = nodes[prefix_end].depth
    groups: list[list[int]] = []
    current: list[int] = []
    cells: set[int] = set()
    for leaf in leaves:
        mine = set(_tail(nodes, leaf_nodes[leaf], depth))
        if current and (len(current) >= SEQUENCES - 2 or len(cells | mine) > room):
            groups.append(current)
            current, cells = [], set()
        current.append(leaf)
        cells |= mine
    if current:
        groups.append(current)
    return groups


def default_threads(contexts: int) -> int:
    """Threads per context: half the logical CPUs (the physical cores, where each has two
    threads: llama-cpp-python's own default) shared by the contexts, at least one. More threads
    than free cores make llama.cpp's threads wait on each other: on a busy 2-core machine one
    thread evaluated a prompt about four times faster than two."""
    return max(1, (os.cpu_count() or 2) // 2 // max(1, contexts))

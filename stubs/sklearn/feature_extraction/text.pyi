from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix

class CountVectorizer:
    vocabulary_: dict[str, int]
    def __init__(
        self,
        *,
        lowercase: bool = True,
        token_pattern: str | None = ...,
        ngram_range: tuple[int, int] = (1, 1),
        analyzer: str = "word",
        min_df: float | int = 1,
        max_features: int | None = None,
        vocabulary: Mapping[str, int] | None = None,
        dtype: type[np.float64] | type[np.int64] = ...,
    ) -> None: ...
    def fit_transform(self, raw_documents: Iterable[str]) -> csr_matrix: ...
    def transform(self, raw_documents: Iterable[str]) -> csr_matrix: ...

class TfidfVectorizer(CountVectorizer):
    idf_: NDArray[np.float64]
    def __init__(
        self,
        *,
        lowercase: bool = True,
        token_pattern: str | None = ...,
        ngram_range: tuple[int, int] = (1, 1),
        analyzer: str = "word",
        min_df: float | int = 1,
        max_features: int | None = None,
        vocabulary: Mapping[str, int] | None = None,
        dtype: type[np.float64] | type[np.int64] = ...,
        sublinear_tf: bool = False,
        norm: str | None = "l2",
    ) -> None: ...
    def fit(self, raw_documents: Iterable[str]) -> TfidfVectorizer: ...

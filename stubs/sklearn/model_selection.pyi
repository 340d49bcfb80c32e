from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

class StratifiedKFold:
    def __init__(
        self, n_splits: int = 5, *, shuffle: bool = False, random_state: int | None = None
    ) -> None: ...
    def split(
        self, X: object, y: NDArray[np.int64], groups: object = None
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]: ...

class StratifiedGroupKFold:
    def __init__(
        self, n_splits: int = 5, *, shuffle: bool = False, random_state: int | None = None
    ) -> None: ...
    def split(
        self, X: object, y: NDArray[np.int64], groups: NDArray[np.int64]
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]: ...

class GroupKFold:
    def __init__(self, n_splits: int = 5) -> None: ...
    def split(
        self, X: object, y: object = None, groups: NDArray[np.int64] | None = None
    ) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]: ...

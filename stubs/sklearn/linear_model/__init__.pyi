from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

class LogisticRegression:
    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    classes_: NDArray[np.int64]
    n_iter_: NDArray[np.int32]
    def __init__(
        self,
        *,
        C: float = 1.0,
        class_weight: str | Mapping[int, float] | None = None,
        max_iter: int = 100,
        solver: str = "lbfgs",
        tol: float = 1e-4,
    ) -> None: ...
    def fit(
        self, X: object, y: NDArray[np.int64], sample_weight: NDArray[np.float64] | None = None
    ) -> LogisticRegression: ...
    def decision_function(self, X: object) -> NDArray[np.float64]: ...
    def predict_proba(self, X: object) -> NDArray[np.float64]: ...

"""What every encoder gives and is: :class:`Matrix` (rows of features) and :class:`Encoder`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["Encoder", "Matrix"]


class Matrix(Protocol):
    """Features, one row per text: a numpy array or a scipy sparse matrix."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __matmul__(self, other: NDArray[np.float64], /) -> NDArray[np.float64]: ...


class Encoder(Protocol):
    """What turns texts into features (see the module's notes)."""

    @property
    def name(self) -> str: ...

    @property
    def width(self) -> int:
        """How many features a row has."""
        ...

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One row of features per text, in order."""
        ...

    def settings(self) -> dict[str, object]:
        """What the fitted file's JSON holds of the encoder."""
        ...

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        """What the fitted file's arrays hold of the encoder (by name)."""
        ...

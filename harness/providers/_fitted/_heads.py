"""A fitted file's heads: what turns features into an answer's probabilities.

Each head is a logistic model over an encoder's features, in one of four forms:

* ``binary`` (a yes/no, a selection): ``P(yes) = sigmoid(x . w + b)``;
* ``classes`` (a choice asked with the same options every time): one row of weights per option,
  a softmax over the rows of the options asked;
* ``pairwise`` (a choice whose options vary: a thinker's next move, an input): one weight vector
  scores each option's own text, a softmax over the options' scores;
* ``ordinal`` (a score): ``P(level > k) = sigmoid(x . w_k + b_k)`` for each cut between levels
  (made monotone), the levels' probabilities the differences.

A head's ``version`` is a digest of its key, form, classes and weights: every answer's reading
names it, so a record says exactly which head gave an answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import attrs
import numpy as np
from numpy.typing import NDArray

from ._encoders import Matrix
from ._errors import FittedError

__all__ = ["FORMS", "Form", "Head", "softmax"]

Form = Literal["binary", "classes", "pairwise", "ordinal"]
FORMS: Final[tuple[Form, ...]] = ("binary", "classes", "pairwise", "ordinal")
KIND_OF_FORM: Final[Mapping[Form, frozenset[str]]] = {
    "binary": frozenset({"noul"}),
    "classes": frozenset({"choice"}),
    "pairwise": frozenset({"choice"}),
    "ordinal": frozenset({"score"}),
}


def _sigmoid(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)), dtype=np.float64)


def softmax(z: NDArray[np.float64]) -> NDArray[np.float64]:
    """The softmax of ``z`` (stable: shifted by its maximum)."""
    e = np.exp(z - np.max(z))
    return np.asarray(e / e.sum(), dtype=np.float64)


def _vector(array: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(array, dtype=np.float64)


@attrs.frozen(eq=False)
class Head:
    """One head (see the module's notes). ``weights`` is ``(d,)`` for ``binary`` and
    ``pairwise``, ``(k, d)`` for ``classes`` (one row per class) and ``(k - 1, d)`` for
    ``ordinal``; ``bias`` a number or one per row. ``classes`` are the option keys or levels
    (``()`` for a yes/no and a pairwise choice). ``meta`` is what the file says of its fit
    (labels per class, the regularisation chosen)."""

    key: str
    role: str
    form: Form
    weights: NDArray[np.float64] = attrs.field(converter=_vector)
    bias: NDArray[np.float64] = attrs.field(converter=_vector)
    classes: tuple[str, ...] = ()
    meta: Mapping[str, object] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        problem = self._problem()
        if problem is not None:
            raise FittedError(
                f"head {self.key!r}: {problem}: the fitted file was edited or cut; fit it again "
                "with harness fit"
            )

    def _problem(self) -> str | None:
        w, b, k = self.weights, self.bias, len(self.classes)
        if self.form in ("binary", "pairwise"):
            if w.ndim != 1 or b.shape != (1,):
                return f"a {self.form} head holds one weight vector and one bias"
        elif self.form == "classes":
            if k < 2 or w.ndim != 2 or w.shape[0] != k or b.shape != (k,):
                return "a classes head holds one weight row and one bias per class (at least 2)"
        elif self.form == "ordinal":
            if k < 2 or w.ndim != 2 or w.shape[0] != k - 1 or b.shape != (k - 1,):
                return "an ordinal head holds one weight row and one bias per cut between levels"
        else:
            return f"unknown form {self.form!r} (known: {', '.join(FORMS)})"
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
            return "its weights are not all finite"
        return None

    @property
    def dimensions(self) -> int:
        """How many features the head reads."""
        return int(self.weights.shape[-1])

    @property
    def version(self) -> str:
        """A digest of what the head computes (12 hex digits)."""
        digest = hashlib.sha256()
        digest.update("\0".join((self.key, self.form, *self.classes)).encode())
        digest.update(np.ascontiguousarray(self.weights).tobytes())
        digest.update(np.ascontiguousarray(self.bias).tobytes())
        return digest.hexdigest()[:12]

    def logits(self, features: Matrix) -> NDArray[np.float64]:
        """``features @ weights.T + bias``: ``(n,)`` or ``(n, rows)``."""
        if self.weights.ndim == 1:
            return np.asarray(features @ self.weights + self.bias[0], dtype=np.float64)
        return np.asarray(features @ self.weights.T + self.bias, dtype=np.float64)

    def yes(self, features: Matrix) -> NDArray[np.float64]:
        """P(yes) for each row (a ``binary`` head)."""
        return _sigmoid(self.logits(features))

    def over_classes(self, features: Matrix, asked: Sequence[str]) -> NDArray[np.float64] | None:
        """A ``classes`` head's probabilities over the ``asked`` options of one row (``None``
        when some option asked is not one of its classes)."""
        rows = [self.classes.index(option) for option in asked if option in self.classes]
        if len(rows) != len(asked):
            return None
        return softmax(self.logits(features)[0][rows])

    def over_levels(self, features: Matrix) -> NDArray[np.float64]:
        """An ``ordinal`` head's probabilities over its levels, for one row."""
        above = _sigmoid(self.logits(features)[0])
        above = np.minimum.accumulate(above)  # P(y > k) cannot grow with k
        cuts = np.concatenate(([1.0], above, [0.0]))
        probabilities = np.clip(cuts[:-1] - cuts[1:], 0.0, None)
        total = probabilities.sum()
        if total <= 0:
            return np.full(len(self.classes), 1.0 / len(self.classes))
        return np.asarray(probabilities / total, dtype=np.float64)

    def describe(self) -> dict[str, object]:
        """The head's part of the fitted file's JSON (its arrays are stored apart)."""
        return {
            "key": self.key,
            "role": self.role,
            "form": self.form,
            "classes": list(self.classes),
            "dimensions": self.dimensions,
            "version": self.version,
            **self.meta,
        }

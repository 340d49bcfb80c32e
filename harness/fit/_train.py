"""Fitting heads: the rows each head learns from, and a class-balanced logistic regression whose
regularisation is chosen by cross-validation on the rows it is fitted on (never the reported
split's).

A labelled decision gives each of its labelled questions to the head its key names
(:func:`harness.providers.head_key`):

* a yes/no or a selection: one row (its text, its truth);
* a choice asked with the same options every time (a pack's fixed question): one row (the
  state), its class the right option (form ``classes``, a multinomial model);
* a choice whose options vary (a thinker's ``next`` and inputs, a pack's choice over varying
  options): one row per option (its text), true for the right one (form ``pairwise``: the
  softmax over the options' scores answers);
* a score: one row (the state), its level; a cut model per pair of neighbouring levels (form
  ``ordinal``).

A teacher's answer (distillation) is a soft target: a row is written once per outcome, weighted
by the teacher's probability of it, which is exactly the log loss against the teacher's
probabilities.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

import attrs
import numpy as np
from numpy.typing import NDArray

from harness.decision import Choice, Noul, Question, Score
from harness.providers import (
    Encoder,
    FittedError,
    Head,
    SparseRows,
    head_key,
    option_texts,
    question_text,
)

__all__ = ["CS", "Example", "HeadRows", "fit_head", "one_thread", "rows_by_head"]

CS: Final = (0.01, 0.1, 1.0, 10.0, 100.0)
"""The regularisation strengths cross-validation chooses from (scikit-learn's ``C``)."""
FOLDS: Final = 5


def one_thread() -> contextlib.AbstractContextManager[object]:
    """BLAS and OpenMP held to one thread while fitting: on two busy cores a logistic
    regression of a few hundred rows over TF-IDF features ran about 9 times faster on one
    thread than on two (threads of one solver fighting for cores the rest of the machine
    holds)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


@attrs.frozen
class Example:
    """One labelled question: its request's state, the question, the right answer (an option
    key, a truth, a level) and, for a teacher, its probabilities (by option / level / yes)."""

    name: str
    question_id: str
    question: Question
    state: object
    label: str | bool
    soft: Mapping[str, float] | None = None
    group: str = ""


@attrs.define
class HeadRows:
    """The rows of one head: texts, classes (int), weights, the question each row came from
    (rows of one question share a fold), and the head's form and classes."""

    key: str
    role: str
    form: str
    classes: tuple[str, ...] = ()
    texts: list[str] = attrs.Factory(list)
    y: list[int] = attrs.Factory(list)
    weights: list[float] = attrs.Factory(list)
    question: list[int] = attrs.Factory(list)
    groups: list[str] = attrs.Factory(list)
    labels: Counter[str] = attrs.Factory(Counter)

    def add(self, text: str, y: int, weight: float, question: int, group: str) -> None:
        if weight <= 0:
            return
        self.texts.append(text)
        self.y.append(y)
        self.weights.append(weight)
        self.question.append(question)
        self.groups.append(group)


def _role(question_id: str, question: Question) -> str:
    key = head_key(question_id, question)
    return key.partition(":")[0] if ":" in key else key


def _form(key: str, examples: Sequence[Example]) -> tuple[str, tuple[str, ...]]:
    first = examples[0].question
    if isinstance(first, Noul):
        return "binary", ()
    if isinstance(first, Score):
        levels = tuple(first.levels)
        for example in examples:
            assert isinstance(example.question, Score)
            if tuple(example.question.levels) != levels:
                raise FittedError(
                    f"head {key!r}: its scores are asked with different levels "
                    f"({list(levels)} and {list(example.question.levels)}): a score head reads "
                    "one scale; give the questions of different scales different instructions"
                )
        return "ordinal", levels
    assert isinstance(first, Choice)
    options = tuple(first.options)
    fixed = key not in ("next", "input") and all(
        isinstance(e.question, Choice) and tuple(e.question.options) == options for e in examples
    )
    return ("classes", options) if fixed else ("pairwise", ())


def rows_by_head(examples: Sequence[Example]) -> dict[str, HeadRows]:
    """Each head's rows (see the module's notes), heads in the order their keys first come."""
    by_key: dict[str, list[Example]] = {}
    for example in examples:
        by_key.setdefault(head_key(example.question_id, example.question), []).append(example)
    heads: dict[str, HeadRows] = {}
    for key, mine in by_key.items():
        form, classes = _form(key, mine)
        rows = HeadRows(key, _role(mine[0].question_id, mine[0].question), form, classes)
        for number, example in enumerate(mine):
            _add(rows, example, number)
        heads[key] = rows
    return heads


def _add(rows: HeadRows, example: Example, number: int) -> None:
    question, soft, group = example.question, example.soft, example.group
    rows.labels[
        str(example.label).lower() if isinstance(example.label, bool) else example.label
    ] += 1
    if rows.form == "binary":
        text = question_text(example.question_id, question, example.state)
        p = float(example.label is True) if soft is None else soft.get("yes", 0.0)
        rows.add(text, 1, p, number, group)
        rows.add(text, 0, 1.0 - p, number, group)
    elif rows.form in ("classes", "ordinal"):
        text = question_text(example.question_id, question, example.state)
        for index, option in enumerate(rows.classes):
            p = float(option == example.label) if soft is None else soft.get(option, 0.0)
            rows.add(text, index, p, number, group)
    else:
        assert isinstance(question, Choice)
        for option, text in option_texts(example.question_id, question, example.state).items():
            p = float(option == example.label) if soft is None else soft.get(option, 0.0)
            rows.add(text, 1, p, number, group)
            rows.add(text, 0, 1.0 - p, number, group)


def _refuse_one_class(rows: HeadRows, present: set[int]) -> None:
    if rows.form in ("binary", "pairwise") and len(present) < 2:
        only = "true" if present == {1} else "false"
        raise FittedError(
            f"head {rows.key!r}: every label is {only} ({sum(rows.labels.values())} "
            "decisions): a head needs both answers among its labels; label decisions of the "
            "other answer, or leave this question to the base model (--role to fit others)"
        )
    if rows.form in ("classes", "ordinal") and len(present) < 2:
        raise FittedError(
            f"head {rows.key!r}: every label is {rows.classes[min(present)]!r}: a head needs at "
            "least two of its options among its labels; label more decisions"
        )


def _folds(y: NDArray[np.int64], questions: NDArray[np.int64], count: int) -> int:
    """How many folds cross-validation can make: each fold keeps whole questions and some of
    each class, at most :data:`FOLDS`; 0 when too few labels for two."""
    per_class = [len(set(questions[y == c].tolist())) for c in sorted(set(y.tolist()))]
    return min(FOLDS, count, *per_class) if per_class else 0


def _logreg(
    x: object,
    y: NDArray[np.int64],
    w: NDArray[np.float64],
    c: float,
    balanced: bool,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    from sklearn.linear_model import LogisticRegression

    if balanced:
        totals = {k: float(w[y == k].sum()) for k in set(y.tolist())}
        mean = sum(totals.values()) / len(totals)
        w = w * np.array([mean / totals[int(k)] for k in y])
    model = LogisticRegression(C=c, max_iter=5000)
    model.fit(x, y, sample_weight=w)
    return np.asarray(model.coef_, dtype=np.float64), np.asarray(model.intercept_, np.float64)


def _loss(
    coef: NDArray[np.float64],
    bias: NDArray[np.float64],
    x: object,
    y: NDArray[np.int64],
    w: NDArray[np.float64],
) -> float:
    z = np.asarray(x @ coef.T, dtype=np.float64) + bias  # type: ignore[operator]  # a matrix
    if z.shape[1] == 1:
        p1 = 0.5 * (1 + np.tanh(0.5 * z[:, 0]))
        p = np.where(y == 1, p1, 1 - p1)
    else:
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e[np.arange(len(y)), y] / e.sum(axis=1)
    return float(-(w * np.log(np.clip(p, 1e-12, 1.0))).sum() / w.sum())


def _choose_c(
    x: object,
    y: NDArray[np.int64],
    w: NDArray[np.float64],
    questions: NDArray[np.int64],
    balanced: bool,
) -> tuple[float, str]:
    """The ``C`` of :data:`CS` with the least held-out log loss over folds of whole questions."""
    from sklearn.model_selection import StratifiedGroupKFold

    count = len(set(questions.tolist()))
    folds = _folds(y, questions, count)
    if folds < 2:
        return 1.0, "C 1 (too few labels of some answer to cross-validate)"
    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=0)
    splits = list(splitter.split(np.zeros(len(y)), y, questions))
    best: tuple[float, float] | None = None
    for c in CS:
        losses = []
        for train, held in splits:
            if len(set(y[train].tolist())) < len(set(y.tolist())):
                continue
            coef, bias = _logreg(_take(x, train), y[train], w[train], c, balanced)
            losses.append(_loss(coef, bias, _take(x, held), y[held], w[held]))
        if losses and (best is None or float(np.mean(losses)) < best[1]):
            best = (c, float(np.mean(losses)))
    if best is None:
        return 1.0, "C 1 (no fold held every answer)"
    return best[0], f"C {best[0]:g} by {folds}-fold cross-validation (log loss {best[1]:.3f})"


def _take(x: object, rows: NDArray[np.intp]) -> object:
    return x[rows]  # type: ignore[index]  # an array or a CSR matrix: both take rows


def fit_head(rows: HeadRows, encoder: Encoder) -> Head:
    """The head ``rows`` fit (see the module's notes); one-class rows are refused by name."""
    y = np.asarray(rows.y, dtype=np.int64)
    w = np.asarray(rows.weights, dtype=np.float64)
    questions = np.asarray(rows.question, dtype=np.int64)
    present = {int(k) for k in set(y[w > 0].tolist())}
    _refuse_one_class(rows, present)
    x = fitting_matrix(encoder.encode(rows.texts))
    meta: dict[str, object] = {
        "labels": dict(sorted(rows.labels.items())),
        "decisions": len(set(rows.question)),
    }
    if rows.form in ("binary", "pairwise"):
        c, how = _choose_c(x, y, w, questions, balanced=True)
        coef, bias = _logreg(x, y, w, c, balanced=True)
        meta |= {"C": c, "chosen": how, "balanced": True}
        return Head(rows.key, rows.role, rows.form, coef[0], bias, rows.classes, meta)  # type: ignore[arg-type]  # form is binary or pairwise here
    if rows.form == "classes":
        c, how = _choose_c(x, y, w, questions, balanced=True)
        coef, bias = _logreg(x, y, w, c, balanced=True)
        weights, biases = _per_class(coef, bias, y, len(rows.classes))
        meta |= {"C": c, "chosen": how, "balanced": True}
        return Head(rows.key, rows.role, "classes", weights, biases, rows.classes, meta)
    encoder_width = int(x.shape[1])  # type: ignore[attr-defined]  # an array or a matrix
    cuts_w: list[NDArray[np.float64]] = []
    cuts_b: list[float] = []
    chosen: list[str] = []
    for k in range(len(rows.classes) - 1):
        above = (y > k).astype(np.int64)
        if len(set(above[w > 0].tolist())) < 2:
            share = float(w[above == 1].sum() + 0.5) / float(w.sum() + 1.0)
            cuts_w.append(np.zeros(encoder_width))
            cuts_b.append(float(np.log(share / (1 - share))))
            chosen.append("prior (one side of the cut has no label)")
            continue
        c, how = _choose_c(x, above, w, questions, balanced=False)
        coef, bias = _logreg(x, above, w, c, balanced=False)
        cuts_w.append(coef[0])
        cuts_b.append(float(bias[0]))
        chosen.append(how)
    meta |= {"cuts": chosen, "balanced": False}
    return Head(
        rows.key, rows.role, "ordinal", np.vstack(cuts_w), np.asarray(cuts_b), rows.classes, meta
    )


def fitting_matrix(features: object) -> object:
    """Features as scikit-learn takes them: a ``tfidf`` encoder's rows as a scipy matrix."""
    return features.to_scipy() if isinstance(features, SparseRows) else features


def _per_class(
    coef: NDArray[np.float64], bias: NDArray[np.float64], y: NDArray[np.int64], classes: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One weight row per class: scikit-learn gives one row for two classes (the second's
    logit against the first), and none for a class no label names (never chosen)."""
    present = sorted(set(y.tolist()))
    width = coef.shape[1]
    weights = np.zeros((classes, width))
    biases = np.full(classes, -30.0)
    if coef.shape[0] == 1:
        low, high = present
        weights[low], biases[low] = 0.0, 0.0
        weights[high], biases[high] = coef[0], bias[0]
    else:
        for row, k in enumerate(present):
            weights[k], biases[k] = coef[row], bias[row]
    return weights, biases

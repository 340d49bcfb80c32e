"""The figures of an eval, as plain functions of numbers (no harness imports but the error base:
pure and testable).

Every function takes plain sequences and either returns a number or raises
:class:`UndefinedMetricError` saying why the figure has no value on that input (no decisions, one
class only, no positive answers...): a figure is never a silent 0.

* scoring rules (``_scores``): :func:`recall`, :func:`precision`, :func:`f1` of counts;
  :func:`accuracy`, :func:`brier` and :func:`log_loss` over the whole distribution, :func:`auc`
  (yes/no), :func:`rps` (ordered levels);
* calibration (``_binning``): :func:`ece` and :func:`reliability` with equal-width or equal-mass
  bins (a run of equal probabilities is never split between bins);
* intervals and tests (``_intervals``): :func:`wilson` bounds of a proportion,
  :func:`bootstrap` intervals resampled by case (the decisions of one run are correlated, so the
  unit resampled is the case, never the decision), the exact two-sided :func:`mcnemar` test of
  paired correctness; a :class:`Resampler` (``_resampler``) computes the intervals of a whole
  report at once (numpy, vectorized).

An :class:`Estimate` is a figure with its interval, ``n`` and its bootstrap bias; one whose value
lies outside its interval says why (:attr:`Estimate.note`).

A distribution is a sequence of probabilities over the options in a fixed order and its label the
index of the right option; a yes/no answer is the two-option distribution ``(p_yes, 1 - p_yes)``.
"""

from harness._public import claim_exports
from harness.evals.metrics._binning import Bin as Bin
from harness.evals.metrics._binning import BinStrategy as BinStrategy
from harness.evals.metrics._binning import binned as binned
from harness.evals.metrics._binning import ece as ece
from harness.evals.metrics._binning import reliability as reliability
from harness.evals.metrics._estimate import Estimate as Estimate
from harness.evals.metrics._estimate import UndefinedMetricError as UndefinedMetricError
from harness.evals.metrics._estimate import reason_of as reason_of
from harness.evals.metrics._intervals import BOOTSTRAP_RESAMPLES as BOOTSTRAP_RESAMPLES
from harness.evals.metrics._intervals import Z95 as Z95
from harness.evals.metrics._intervals import bootstrap as bootstrap
from harness.evals.metrics._intervals import mcnemar as mcnemar
from harness.evals.metrics._intervals import wilson as wilson
from harness.evals.metrics._resampler import Resampler as Resampler
from harness.evals.metrics._scores import LOG_LOSS_FLOOR as LOG_LOSS_FLOOR
from harness.evals.metrics._scores import accuracy as accuracy
from harness.evals.metrics._scores import auc as auc
from harness.evals.metrics._scores import brier as brier
from harness.evals.metrics._scores import f1 as f1
from harness.evals.metrics._scores import log_loss as log_loss
from harness.evals.metrics._scores import precision as precision
from harness.evals.metrics._scores import recall as recall
from harness.evals.metrics._scores import rps as rps

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "LOG_LOSS_FLOOR",
    "Z95",
    "Bin",
    "BinStrategy",
    "Estimate",
    "Resampler",
    "UndefinedMetricError",
    "accuracy",
    "auc",
    "binned",
    "bootstrap",
    "brier",
    "ece",
    "f1",
    "log_loss",
    "mcnemar",
    "precision",
    "reason_of",
    "recall",
    "reliability",
    "rps",
    "wilson",
]

claim_exports(__name__, globals(), __all__)

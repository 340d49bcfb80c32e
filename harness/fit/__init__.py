"""Fitting deciders on labelled decisions: ``harness fit``.

Reads labelled decisions (decision packs, an eval's kept selections, a dataset run through a
thinker, a teacher's cassettes and records), fits an encoder and one logistic head per question
role on the training split, writes the fitted file (:func:`harness.providers.write_fitted`: JSON
and arrays, never pickle), and measures it on the held-out split beside its base model and the
majority answer, each figure with its interval. The fitted file answers wherever a model goes
(``fitted:<file>``, or a catalog entry of provider ``fitted``): see docs/fitted.md.
"""

from harness._public import claim_exports
from harness.fit._fit import CvFigures as CvFigures
from harness.fit._fit import FitOutcome as FitOutcome
from harness.fit._fit import Split as Split
from harness.fit._fit import cross_validate as cross_validate
from harness.fit._fit import fit_decider as fit_decider
from harness.fit._fit import split_of as split_of
from harness.fit._held_out import HeldOut as HeldOut
from harness.fit._held_out import figures_of as figures_of
from harness.fit._held_out import fitted_about as fitted_about
from harness.fit._held_out import held_out as held_out
from harness.fit._held_out import render_fit as render_fit
from harness.fit._sources import Labelled as Labelled
from harness.fit._sources import Source as Source
from harness.fit._sources import read_source as read_source

__all__ = [
    "CvFigures",
    "FitOutcome",
    "HeldOut",
    "Labelled",
    "Source",
    "cross_validate",
    "figures_of",
    "fit_decider",
    "fitted_about",
    "held_out",
    "read_source",
    "render_fit",
    "split_of",
]

claim_exports(__name__, globals(), __all__)

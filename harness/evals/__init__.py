"""Evals: how good are a thinker's decisions? Typed datasets, figures with intervals, fitted
thresholds, comparisons of two evals, and reports for people and for CI.

``Dataset.load("cases.jsonl", Note, Verdict)`` reads labelled cases; ``evaluate(Triage, dataset,
model="embedded")`` runs the thinker on each (resumable, through the batch engine) and returns an
:class:`EvalReport`: recall, precision, F1 and exact match of the answers, and per question role
(``next``, ``<tool>_input``, ``select``) accuracy, Brier, log loss, ECE, AUC and RPS, each with a
95 % bootstrap interval resampled by case, beside two baselines. ``fit_threshold`` fits the
selection threshold on a dev split; ``compare`` and ``check_gates`` turn two reports into a CI
verdict. :mod:`harness.evals.metrics` holds the figures as pure functions.
"""

from harness._public import claim_exports
from harness.evals import metrics as metrics
from harness.evals._bias import PositionBias as PositionBias
from harness.evals._bias import position_bias as position_bias
from harness.evals._calibration import fit_calibration as fit_calibration
from harness.evals._calibration import without_calibration as without_calibration
from harness.evals._calibration import write_calibration as write_calibration
from harness.evals._calibration_report import CalibrationReport as CalibrationReport
from harness.evals._calibration_report import calibration_report as calibration_report
from harness.evals._compare import CaseChange as CaseChange
from harness.evals._compare import Comparison as Comparison
from harness.evals._compare import DecisionShift as DecisionShift
from harness.evals._compare import compare as compare
from harness.evals._dataset import Case as Case
from harness.evals._dataset import Dataset as Dataset
from harness.evals._dataset import DatasetError as DatasetError
from harness.evals._dataset import ItemKey as ItemKey
from harness.evals._dataset import key_text as key_text
from harness.evals._drawn import DrawnSplitError as DrawnSplitError
from harness.evals._examples import ExamplesFit as ExamplesFit
from harness.evals._examples import FittedChoice as FittedChoice
from harness.evals._examples import draw_labeled as draw_labeled
from harness.evals._examples import fit_examples as fit_examples
from harness.evals._examples import fit_examples_async as fit_examples_async
from harness.evals._examples import fit_run_examples as fit_run_examples
from harness.evals._examples import fit_run_examples_async as fit_run_examples_async
from harness.evals._gates import GATES as GATES
from harness.evals._gates import GateResult as GateResult
from harness.evals._gates import assert_eval as assert_eval
from harness.evals._gates import check_gates as check_gates
from harness.evals._gates import failed_gates as failed_gates
from harness.evals._pack import DecisionPack as DecisionPack
from harness.evals._pack import Label as Label
from harness.evals._pack import LabelledDecision as LabelledDecision
from harness.evals._pack_run import evaluate_pack as evaluate_pack
from harness.evals._pack_run import evaluate_pack_async as evaluate_pack_async
from harness.evals._pack_run import scored as scored
from harness.evals._render import estimate_notes as estimate_notes
from harness.evals._render import estimate_text as estimate_text
from harness.evals._render import render_comparison as render_comparison
from harness.evals._render import render_report_html as render_report_html
from harness.evals._render import render_report_text as render_report_text
from harness.evals._render import write_html as write_html
from harness.evals._render import write_junit as write_junit
from harness.evals._report import Candidate as Candidate
from harness.evals._report import CaseResult as CaseResult
from harness.evals._report import EvalReport as EvalReport
from harness.evals._report import ScoredDecision as ScoredDecision
from harness.evals._report import load_report as load_report
from harness.evals._report import report_role_of as report_role_of
from harness.evals._run import ORDERING_PROVIDERS as ORDERING_PROVIDERS
from harness.evals._run import EvalError as EvalError
from harness.evals._run import at_threshold as at_threshold
from harness.evals._run import evaluate as evaluate
from harness.evals._run import evaluate_async as evaluate_async
from harness.evals._run import import_thinker as import_thinker
from harness.evals._run import score as score
from harness.evals._run import selections_dataset as selections_dataset
from harness.evals._run import with_orderings as with_orderings
from harness.evals._selections import RunsSource as RunsSource
from harness.evals._selections import runs_pack as runs_pack
from harness.evals._threshold import FittedThreshold as FittedThreshold
from harness.evals._threshold import ThresholdRule as ThresholdRule
from harness.evals._threshold import fit_threshold as fit_threshold
from harness.evals.metrics import Bin as Bin
from harness.evals.metrics import Estimate as Estimate
from harness.evals.metrics import UndefinedMetricError as UndefinedMetricError

__all__ = [
    "GATES",
    "ORDERING_PROVIDERS",
    "Bin",
    "CalibrationReport",
    "Candidate",
    "Case",
    "CaseChange",
    "CaseResult",
    "Comparison",
    "Dataset",
    "DatasetError",
    "DecisionPack",
    "DecisionShift",
    "DrawnSplitError",
    "Estimate",
    "EvalError",
    "EvalReport",
    "ExamplesFit",
    "FittedChoice",
    "FittedThreshold",
    "GateResult",
    "ItemKey",
    "Label",
    "LabelledDecision",
    "PositionBias",
    "RunsSource",
    "ScoredDecision",
    "ThresholdRule",
    "UndefinedMetricError",
    "assert_eval",
    "at_threshold",
    "calibration_report",
    "check_gates",
    "compare",
    "draw_labeled",
    "estimate_notes",
    "estimate_text",
    "evaluate",
    "evaluate_async",
    "evaluate_pack",
    "evaluate_pack_async",
    "failed_gates",
    "fit_calibration",
    "fit_examples",
    "fit_examples_async",
    "fit_run_examples",
    "fit_run_examples_async",
    "fit_threshold",
    "import_thinker",
    "key_text",
    "load_report",
    "metrics",
    "position_bias",
    "render_comparison",
    "render_report_html",
    "render_report_text",
    "report_role_of",
    "runs_pack",
    "score",
    "scored",
    "selections_dataset",
    "with_orderings",
    "without_calibration",
    "write_calibration",
    "write_html",
    "write_junit",
]

claim_exports(__name__, globals(), __all__)

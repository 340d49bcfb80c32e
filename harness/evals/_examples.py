"""Fitting a catalog entry's solved examples on labelled decisions, and reporting each choice.

A small local model reads a question far better after a few solved questions of the same role
(``harness.catalog.ExampleSet``). Which ones to show is fitted here, the way DSPy's demo
optimizers do it, on the **dev split only**:

* ``labeled`` (DSPy's ``LabeledFewShot``): ``k`` labelled examples per question role, balanced
  over the role's answers (one of each answer in turn, seeded), no model call;
* ``search`` (DSPy's ``BootstrapFewShotWithRandomSearch``, without the bootstrapping): the dev
  split is cut in two by a seeded hash of each decision's state; ``candidates`` balanced sets
  are drawn from the first part, each scored by an eval of the model on the second part, and
  the best scoring set wins (ties: the earlier set); a score undefined on the scored part
  (an AUC where every decision has one answer) is said with its reason, never replaced by 0.5,
  and when no set has one the search is refused naming why.

Beyond DSPy, every choice (zero-shot, each candidate) can be reported on the held-out split with
its intervals, so the figure that picked a set is never the figure that reports it. The fitted
set records what it was drawn from (data, split, digest, method, ``k``, seed) and a digest of
every state of that split: :func:`refuse_drawn` (called by every pack eval) refuses an eval that
shares a state with it.

The score of a candidate (``metric``): ``discrimination`` (the default) averages, over the
roles, the AUC of a yes/no role and the accuracy of a choice or a score (a calibration fitted
afterwards fixes the probabilities, not the ranking); ``accuracy`` averages the accuracies.

One concern, past 400 lines: fitting an example set, from the split's decisions to the chosen
set and its held-out figures; the pack's and a thinker's runs' fits share every step but where
the decisions come from, so they stay side by side.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import attrs

from harness.catalog import (
    Calibration,
    Catalog,
    CatalogEntry,
    DrawnFrom,
    ExampleSet,
    SolvedExample,
    state_key,
    state_text,
)
from harness.evals import metrics as m
from harness.evals._calibration import (
    best_threshold,
    by_calibration_role,
    calibration_role,
    fit_calibration,
    mapped_p_yes,
)
from harness.evals._dataset import DatasetError
from harness.evals._drawn import DrawnSplitError as DrawnSplitError
from harness.evals._drawn import refuse_drawn as refuse_drawn
from harness.evals._draws import (
    draw_labeled as draw_labeled,
)
from harness.evals._draws import part_of, split_digest
from harness.evals._draws import solved_examples as solved_examples
from harness.evals._draws import split_decisions as split_decisions
from harness.evals._pack import DecisionPack, LabelledDecision
from harness.evals._report import EvalReport, ScoredDecision
from harness.evals._run import EvalError, _sync_form
from harness.runs import seat_for

__all__ = [
    "DrawnSplitError",
    "ExamplesFit",
    "FittedChoice",
    "Metric",
    "draw_labeled",
    "fit_examples",
    "fit_examples_async",
    "fit_run_examples",
    "fit_run_examples_async",
    "refuse_drawn",
    "solved_examples",
    "split_decisions",
]

Method = Literal["labeled", "search"]
Metric = Literal["discrimination", "accuracy"]

SCORED_SHARE: Final = 0.5
"""The share of the dev split a ``search`` scores candidates on (the rest is drawn from)."""


@attrs.frozen
class FittedChoice:
    """One set the fitting considered: ``examples`` (``None``: zero-shot), its score on the
    scored part of the dev split (a ``search`` only), and its held-out report when asked."""

    name: str
    examples: ExampleSet | None
    dev_score: float | None = None
    held_out: EvalReport | None = None
    chosen: bool = False
    undefined: str | None = None
    """Why a searched candidate has no dev-part score (it is never picked)."""

    def lines(self) -> list[str]:
        """What the choice scored: its dev score, and each held-out role's AUC and accuracy."""
        mark = " (chosen)" if self.chosen else ""
        head = f"{self.name}{mark}"
        if self.dev_score is not None:
            head += f": dev-part score {self.dev_score:.3f}"
        elif self.undefined is not None:
            head += f": dev-part score undefined: {self.undefined}"
        lines = [head]
        if self.held_out is not None:
            for name, estimate in sorted(self.held_out.metrics.items()):
                if name.endswith((".accuracy", ".auc")):
                    lines.append(f"  held-out {name} {estimate}")
        return lines


@attrs.frozen
class ExamplesFit:
    """The fitted examples, every choice considered, and the held-out split's name."""

    examples: ExampleSet
    choices: tuple[FittedChoice, ...]
    held_out_split: str | None = None
    calibration: Calibration | None = None

    def lines(self) -> list[str]:
        """A readable report: what was drawn from where, each choice with its figures."""
        source = self.examples.source
        lines = [f"examples drawn from {self.examples.drawn_from}"]
        if source is not None and source.digest:
            lines.append(f"  data digest {source.digest}")
        for role, found in sorted(self.examples.by_role.items()):
            answers = ", ".join(example.answer for example in found)
            lines.append(f"  {role}: {len(found)} examples ({answers})")
        if self.held_out_split is not None:
            lines.append(f"each choice on the held-out split {self.held_out_split!r}:")
        for choice in self.choices:
            lines.extend(choice.lines())
        if self.calibration is not None:
            maps = ", ".join(
                f"{role} {found.method}" for role, found in sorted(self.calibration.roles.items())
            )
            lines.append(f"calibration fitted with the examples on {self.calibration.fitted_on}:")
            lines.append(f"  {maps or 'no role had enough decisions'}")
            if self.calibration.selection_threshold is not None:
                lines.append(f"  selection threshold {self.calibration.selection_threshold:.3f}")
        return lines


def _score(decisions: Sequence[ScoredDecision], metric: Metric) -> tuple[float | None, str]:
    """The mean, over roles, of each role's AUC (yes/no roles, with ``discrimination``) or
    accuracy; ``(None, reason)`` when a role's figure is undefined (an AUC on a part whose
    yes/no decisions are all of one answer, no decision at all): never a stand-in value."""
    by_role = by_calibration_role(decisions)
    if not by_role:
        return None, "the scored part has no decision"
    total = 0.0
    for role, found in sorted(by_role.items()):
        if metric == "discrimination" and found[0].kind == "noul":
            outcomes = [d.label == 0 for d in found]
            if all(outcomes) or not any(outcomes):
                answer = "yes" if all(outcomes) else "no"
                return None, (
                    f"{role} AUC is undefined: the scored part's {len(found)} {role} "
                    f"decisions are all {answer!r}"
                )
            total += m.auc([d.probabilities[0] for d in found], outcomes)
        else:
            total += sum(1 for d in found if d.correct) / len(found)
    return total / len(by_role), ""


def _with_examples(catalog: Catalog, entry: CatalogEntry, examples: ExampleSet | None) -> Catalog:
    changed = attrs.evolve(entry, examples=examples, calibration=None)
    others = [e for e in catalog.entries.values() if e.id != entry.id]
    return Catalog(
        [*others, changed], {**catalog.pins, "decision": entry.id}, source=catalog.source
    )


async def _ask(
    catalog: Catalog,
    entry: CatalogEntry,
    examples: ExampleSet | None,
    decisions: Sequence[LabelledDecision],
    name: str,
    *,
    concurrency: int,
    resamples: int,
    split: str,
) -> EvalReport:
    from harness.evals._pack_run import evaluate_pack_async

    with open(os.devnull, "w", encoding="utf-8") as quiet:  # noqa: ASYNC230 - opening /dev/null
        return await evaluate_pack_async(
            DecisionPack(decisions, name=name),
            model=entry.id,
            catalog=_with_examples(catalog, entry, examples),
            concurrency=concurrency,
            progress=quiet,
            resamples=resamples,
            split=split,
        )


async def fit_examples_async(
    pack: DecisionPack,
    *,
    model: str | None = None,
    catalog: Catalog | None = None,
    split: str = "dev",
    k: int = 2,
    seed: int = 0,
    method: Method = "labeled",
    candidates: int = 4,
    metric: Metric = "discrimination",
    held_out: str | None = None,
    calibrate: bool = False,
    as_roles: Mapping[str, str] | None = None,
    concurrency: int = 1,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
) -> ExamplesFit:
    """Fit ``k`` solved examples per question role of ``pack``'s ``split`` decisions for the
    entry ``model`` resolves to (an entry id or model string; default: the catalog's pin).

    ``method`` is ``labeled`` (no model call) or ``search`` (``candidates`` sets drawn from one
    part of the split, each scored by ``metric`` on an eval of the other part). With
    ``held_out`` (a split tag such as ``test``, never ``split`` itself), zero-shot and every set
    considered are also evaluated there, each figure with its interval. With ``calibrate``, a
    calibration (and a selection threshold, when the split has ``select`` decisions) is fitted
    on the split's decisions whose states no example shows, answered with the chosen examples.
    ``as_roles`` stores a role's examples under another role (see :func:`solved_examples`).
    """
    if held_out is not None and held_out == split:
        raise EvalError(
            f"held_out is the split the examples are drawn from ({split!r}): report on another "
            "split (e.g. test)"
        )
    if candidates < 1:
        raise ValueError(f"candidates must be at least 1, not {candidates}")
    drawn_split = split_decisions(pack, split)
    reported = None if held_out is None else split_decisions(pack, held_out)
    if reported is not None:
        pool = {state_key(d.request.state) for d in drawn_split}
        shared = sum(1 for d in reported if state_key(d.request.state) in pool)
        if shared:
            raise DatasetError(
                f"{pack.name}: {shared} decisions tagged {held_out!r} share a state with the "
                f"{split!r} split: give each state one split"
            )
    seat = seat_for(model, catalog)
    base = seat.catalog
    entry = base.pinned()
    pool_keys = frozenset(state_key(d.request.state) for d in drawn_split)

    def made(
        by_role: Mapping[str, tuple[SolvedExample, ...]], chosen_seed: int, keys: frozenset[str]
    ) -> ExampleSet:
        source = DrawnFrom(
            dataset=pack.name,
            split=split,
            digest=split_digest(drawn_split),
            method=method,
            k=k,
            seed=chosen_seed,
            decisions=len(drawn_split),
        )
        return ExampleSet(
            by_role, drawn_from=source.summary(), method=method, source=source, pool=keys
        )

    choices: list[FittedChoice] = []
    if method == "labeled":
        chosen = made(draw_labeled(drawn_split, k, seed=seed, as_roles=as_roles), seed, pool_keys)
        choices.append(FittedChoice("labeled", chosen, chosen=True))
    elif method == "search":
        scored = [d for d in drawn_split if part_of(d, seed) < SCORED_SHARE]
        drawn_part = [d for d in drawn_split if part_of(d, seed) >= SCORED_SHARE]
        if not scored or not drawn_part:
            raise DatasetError(
                f"{pack.name}: the {split!r} split is too small to search ({len(drawn_split)} "
                "decisions): use method labeled, or label more"
            )
        part_keys = frozenset(state_key(d.request.state) for d in drawn_part)
        best: tuple[float, int] | None = None
        why = "no candidate set was drawn"
        for number in range(candidates):
            candidate_seed = seed + number
            candidate = made(
                draw_labeled(drawn_part, k, seed=candidate_seed, as_roles=as_roles),
                candidate_seed,
                part_keys,
            )
            report = await _ask(
                base,
                entry,
                candidate,
                scored,
                f"{pack.name} [{split}, scored part]",
                concurrency=concurrency,
                resamples=resamples,
                split=f"{split} (scored part)",
            )
            value, why = _score(report.decisions, metric)
            choices.append(
                FittedChoice(
                    f"candidate {number + 1} (seed {candidate_seed})",
                    candidate,
                    value,
                    undefined=None if value is not None else why,
                )
            )
            if value is not None and (best is None or value > best[0]):
                best = (value, number)
        if best is None:
            raise DatasetError(
                f"{pack.name}: no candidate set can be picked by {metric}: {why}; label both "
                "answers in the scored half of the split, or pick by --metric accuracy "
                "(metric='accuracy'), or use method labeled"
            )
        winner = choices[best[1]]
        assert winner.examples is not None
        chosen = attrs.evolve(winner.examples, pool=pool_keys)
        choices[best[1]] = attrs.evolve(winner, examples=chosen, chosen=True)
    else:
        raise ValueError(f"method must be 'labeled' or 'search', not {method!r}")
    if reported is not None:
        shown = [FittedChoice("zero-shot", None), *choices]
        choices = []
        for choice in shown:
            report = await _ask(
                base,
                entry,
                choice.examples,
                reported,
                f"{pack.name} [{held_out}]",
                concurrency=concurrency,
                resamples=resamples,
                split=held_out or "",
            )
            choices.append(attrs.evolve(choice, held_out=report))
    calibration = None
    if calibrate:
        calibration = await _calibrate(
            base, entry, chosen, drawn_split, pack.name, split, concurrency, resamples
        )
    return ExamplesFit(chosen, tuple(choices), held_out, calibration)


async def _calibrate(
    catalog: Catalog,
    entry: CatalogEntry,
    examples: ExampleSet,
    decisions: Sequence[LabelledDecision],
    name: str,
    split: str,
    concurrency: int,
    resamples: int,
) -> Calibration:
    """The calibration of ``entry`` showing ``examples``, fitted on the split's decisions whose
    states no example shows (an example's own question is answered from the prompt)."""
    shown = {example.state for found in examples.by_role.values() for example in found}
    kept = [d for d in decisions if state_text(d.request.state) not in shown]
    fitting = attrs.evolve(examples, pool=frozenset())  # fitted on its own split, by design
    report = await _ask(
        catalog,
        entry,
        fitting,
        kept,
        f"{name} [{split}]",
        concurrency=concurrency,
        resamples=resamples,
        split=split,
    )
    fitted_on = f"{name}, split {split} ({len(kept)} decisions), with the examples shown"
    maps = fit_calibration(report.decisions, fitted_on=fitted_on, selection_threshold=False)
    selections = [d for d in report.decisions if calibration_role(d) == "select"]
    threshold = None
    if len(selections) >= 10 and any(d.label == 0 for d in selections):
        select_map = maps.roles.get("select")
        threshold = best_threshold(
            [mapped_p_yes(select_map, d.probabilities[0]) for d in selections],
            [d.label == 0 for d in selections],
        )
    return attrs.evolve(maps, selection_threshold=threshold)


fit_examples = _sync_form(fit_examples_async, "fit_examples")


# fit_examples_async's keywords written out, not **kwargs: a public signature readers see
async def fit_run_examples_async(
    runs: str | os.PathLike[str],
    *,
    model: str | None = None,
    catalog: Catalog | None = None,
    split: str = "dev",
    k: int = 2,
    seed: int = 0,
    method: Method = "labeled",
    candidates: int = 4,
    metric: Metric = "discrimination",
    held_out: str | None = None,
    calibrate: bool = False,
    concurrency: int = 1,
    resamples: int = m.BOOTSTRAP_RESAMPLES,
) -> ExamplesFit:
    """Fit ``select`` examples on the labelled runs of a thinker: the folder of a finished
    :func:`harness.evals.evaluate` (``runs``), whose selections it kept (each selection's
    state and question, labelled by its case's expected answer, tagged with the case's split).

    The same as :func:`fit_examples` on those selections (``split`` drawn from, ``held_out``
    reported on when the folder holds such cases), and the examples' ``pool`` holds the digest
    of every input of the ``split`` cases besides every state: an eval of the thinker on those
    cases, or of a pack of those states, is refused (:class:`DrawnSplitError`).
    """
    from harness.evals._selections import runs_pack

    source = runs_pack(runs)
    fitted = await fit_examples_async(
        source.pack,
        model=model,
        catalog=catalog,
        split=split,
        k=k,
        seed=seed,
        method=method,
        candidates=candidates,
        metric=metric,
        held_out=held_out,
        calibrate=calibrate,
        concurrency=concurrency,
        resamples=resamples,
    )
    pool = fitted.examples.pool | source.inputs_of(split)
    return attrs.evolve(fitted, examples=attrs.evolve(fitted.examples, pool=pool))


fit_run_examples = _sync_form(fit_run_examples_async, "fit_run_examples")

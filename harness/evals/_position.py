"""Whether a model's choices follow the place of an option rather than its content.

A small model often picks the first option it is shown: the first line of a list, the first
tool. Per choice role, a report counts how often the first option was chosen
(``<role>.first_chosen``) against how often it was the right one (``<role>.first_right``, a
pack's labelled choices) or would be chosen by chance (``<role>.first_by_chance``, the mean of
``1/n`` over the choices: a thinker's choices carry no label). Each is a rate over the role's
choices with its 95 % interval, resampling cases. :func:`position_warnings` says when the first
option was chosen clearly more often than that. Against labels: ``first_chosen`` at least
:data:`MARGIN` above ``first_right``, its interval above it too. Against chance, where a right
answer may well sit first more often than chance (a thinker's first artifact is often the one to
work on): only a first option chosen in nearly every choice (:data:`NEARLY_ALWAYS`, over at least
:data:`FEW` choices) of an input role (the tools' order in ``next`` is the palette's, not the
data's). Asking each choice in several orders and averaging (``--orderings K`` on an entry that
reads logits) measures and corrects it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from harness.evals._report import CaseResult
from harness.evals.metrics import Estimate, Resampler

__all__ = [
    "MARGIN",
    "is_position_figure",
    "position_figures",
    "position_lines",
    "position_warnings",
]

MARGIN: Final = 0.2
"""How far above the right option's share the first option's must be for a warning."""
NEARLY_ALWAYS: Final = 0.9
"""The first option's share that warns where the choices carry no label."""
FEW: Final = 10
"""The fewest unlabelled choices a warning is drawn from."""

FIRST_CHOSEN: Final = "first_chosen"
REFERENCES: Final = ("first_right", "first_by_chance")


def position_figures(cases: Sequence[CaseResult], resampler: Resampler) -> dict[str, Estimate]:
    """Per choice role of ``cases``: ``first_chosen`` and its reference (``first_right`` when
    every choice of the role is labelled, else ``first_by_chance``)."""
    roles = sorted({p.role for case in cases for p in case.placed if p.options > 1})
    found: dict[str, Estimate] = {}
    size = len(cases)
    for role in roles:
        count, first, right, chance = [0.0] * size, [0.0] * size, [0.0] * size, [0.0] * size
        labelled = True
        for index, case in enumerate(cases):
            for placed in case.placed:
                if placed.role != role or placed.options < 2:
                    continue
                count[index] += 1
                first[index] += placed.chosen == 0
                chance[index] += 1 / placed.options
                if placed.right is None:
                    labelled = False
                else:
                    right[index] += placed.right == 0
        none = f"{role} has no choice of two options or more"
        found[f"{role}.{FIRST_CHOSEN}"] = resampler.ratio(
            first, count, undefined=f"the first option's share is undefined: {none}"
        )
        if labelled:
            found[f"{role}.first_right"] = resampler.ratio(
                right, count, undefined=f"the right option's place is undefined: {none}"
            )
        else:
            found[f"{role}.first_by_chance"] = resampler.ratio(
                chance, count, undefined=f"the chance of the first option is undefined: {none}"
            )
    return found


def is_position_figure(name: str) -> bool:
    """Whether the figure ``name`` is one of :func:`position_figures`' (a report shows them
    apart from the table of figures)."""
    return name.rpartition(".")[2] in (FIRST_CHOSEN, *REFERENCES)


def position_lines(metrics: Mapping[str, Estimate]) -> list[str]:
    """Per choice role, the first option's share beside its reference, for a terminal::

    first option by choice role (chosen, against right or by chance):
      team: chosen 1.000 [1.000, 1.000] (n=4), right 0.500 [0.000, 1.000] (n=4)
    """
    lines = []
    for name, chosen in metrics.items():
        role, _, figure = name.rpartition(".")
        if figure != FIRST_CHOSEN:
            continue
        shown = f"  {role}: chosen {chosen}"
        for reference in REFERENCES:
            found = metrics.get(f"{role}.{reference}")
            if found is not None:
                shown += f", {reference.removeprefix('first_').replace('_', ' ')} {found}"
        lines.append(shown)
    if lines:
        lines.insert(0, "first option by choice role (chosen, against right or by chance):")
    return lines


def position_warnings(metrics: Mapping[str, Estimate]) -> list[str]:
    """A line per choice role whose first option was chosen clearly more often than it was
    right (or than chance): ``first_chosen`` at least :data:`MARGIN` above its reference, its
    interval (when it has one) wholly above the reference too."""
    lines = []
    for name, chosen in metrics.items():
        role, _, figure = name.rpartition(".")
        if figure != FIRST_CHOSEN or chosen.value is None:
            continue
        reference_name, reference = next(
            ((f, metrics[f"{role}.{f}"]) for f in REFERENCES if f"{role}.{f}" in metrics),
            ("", None),
        )
        if reference is None or reference.value is None:
            continue
        if reference_name == "first_right":
            above = chosen.value - reference.value >= MARGIN
            clear = chosen.low is None or chosen.low > reference.value
            what = f"was right in {reference.value:.2f}"
        else:
            above = chosen.value >= NEARLY_ALWAYS and chosen.n >= FEW
            clear = role != "next"
            what = f"would be chosen by chance in {reference.value:.2f}"
        if not (above and clear):
            continue
        times = round(chosen.value * chosen.n)
        lines.append(
            f"warning: {role}: the first option was chosen in {times} of {chosen.n} choices "
            f"({chosen.value:.2f}), where it {what}: the model's choices follow position; "
            "--orderings K asks each choice in K orders and averages (an entry that reads "
            "logits: llama, openai-chat, openai-completions)"
        )
    return lines

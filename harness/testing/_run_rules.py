"""The invariants of a whole run: its turns (numbered, legal, recorded as the model answered,
each outcome what its tool makes of the recorded artifact when run again), its finish (the
answer is exactly the candidates selected at the threshold, refusals never selected), how it
ended and its ``OBS_TURNS``. :func:`invariant_problems` gathers them with the requests' own.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping, Sequence

from harness.artifacts import Artifact, conforms
from harness.decision import ChoiceAnswer
from harness.testing._derived import Rules, choice_of, selection_of
from harness.testing._request_rules import request_problems
from harness.testing._rerun import Rerun, outcome_text
from harness.testing._run_facts import RecordedWorld, RunReport, ref_of, user_frames
from harness.testing._violation import InvariantKind, InvariantViolation, Problem
from harness.thinker import FINISH, DecisionTurn, parse_turns

__all__ = ["invariant_problems", "violation_of"]

K = InvariantKind


def _recorded(
    number: int, what: str, recorded: Mapping[str, float] | None, answer: ChoiceAnswer | None
) -> list[Problem]:
    """Whether a turn recorded the distribution the response gave."""
    gave = None if answer is None else dict(answer.probabilities)
    got = None if recorded is None else dict(recorded)
    if got == gave:
        return []
    return [
        Problem(
            K.RECORD,
            f"turn {number}: records {what} probabilities {got}, the model's response gave {gave}",
        )
    ]


def _turn_problems(rules: Rules, report: RunReport, world: RecordedWorld) -> list[Problem]:
    out: list[Problem] = []
    refs = {ref: a for ref, a in world}
    pairs: set[tuple[str, str]] = set()
    providers = {p.name: p for p in rules.providers}
    for index, turn in enumerate(report.turns):
        if turn.turn != index + 1:
            out.append(Problem(K.RECORD, f"turn {index + 1} is numbered {turn.turn}"))
        if turn.tool == FINISH:
            continue
        given = report.answers[index] if index < len(report.answers) else {}
        chosen, argument = choice_of(given.get("next")), choice_of(given.get(f"{turn.tool}_input"))
        if chosen is None or chosen.choice != turn.tool:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: ran {turn.tool}, the model chose "
                    f"{chosen and chosen.choice}",
                )
            )
        if argument is None or argument.choice != turn.artifact:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: ran on {rules.ref(turn.artifact)}, the model chose "
                    f"{rules.ref(argument.choice if argument is not None else None)}",
                )
            )
        else:
            out += _recorded(turn.turn, "'next'", turn.next, chosen)
            out += _recorded(turn.turn, f"'{turn.tool}_input'", turn.argument, argument)
        pair = (turn.tool, turn.artifact or "")
        if pair in pairs:
            out.append(
                Problem(
                    K.MOVES,
                    f"turn {turn.turn}: the pair ({turn.tool}, {rules.ref(turn.artifact)}) "
                    "ran twice",
                )
            )
        pairs.add(pair)
        if turn.artifact not in refs:
            out.append(
                Problem(
                    K.MOVES, f"turn {turn.turn}: ran on {turn.artifact}, which is not in the world"
                )
            )
        if (turn.result is None) == (turn.failure is None):
            out.append(
                Problem(K.RECORD, f"turn {turn.turn}: needs exactly one of a result and a failure")
            )
        product = refs.get(turn.result or "")
        provider = providers.get(turn.tool)
        if turn.result is not None and (
            product is None or provider is None or not conforms(product, provider.output_type)
        ):
            out.append(
                Problem(K.RECORD, f"turn {turn.turn}: its result {turn.result} is not a product")
            )
    reruns = {r.turn: r for r in report.reruns}
    for turn in report.turns:
        rerun = reruns.get(turn.turn)
        if rerun is not None and rerun.unchecked is None:
            out += _rerun_problems(rules, turn, rerun, refs.get(turn.result or ""))
    return out


def _rerun_problems(
    rules: Rules, turn: DecisionTurn, rerun: Rerun, product: Artifact | None
) -> list[Problem]:
    """Whether the turn's outcome is what its tool makes of the artifact its record names
    (run again: tools are deterministic by contract)."""
    formatters = rules.thinker.formatters
    again = outcome_text(rerun.product, rerun.failure, formatters)
    recorded = (
        outcome_text(product, None, formatters)
        if product is not None
        else outcome_text(None, turn.failure, formatters)
    )
    if turn.result is None and turn.failure is None:
        return []  # reported above: exactly one of a result and a failure
    if again == recorded:
        return []
    on = rules.ref(turn.artifact)
    if rerun.failure is not None and turn.failure is not None:
        return [
            Problem(
                K.RECORD,
                f"turn {turn.turn}: records the failure {turn.failure!r} of {turn.tool} on {on}, "
                f"but run again on {on}, {turn.tool} fails with {rerun.failure!r}",
            )
        ]
    return [
        Problem(
            K.RECORD,
            f"turn {turn.turn}: records that {turn.tool} on {on} "
            + (f"produced {turn.result} {recorded}" if turn.result is not None else recorded)
            + f", but run again on {on} it gives {again}: the outcome is not what the tool "
            "makes of the artifact the record names",
        )
    ]


def _moved_problems(rules: Rules, report: RunReport) -> list[Problem]:
    """A move that ran on another artifact than its record names: its recorded outcome is
    what its tool makes of that other artifact, run again (the invariant it breaks is named
    first, before what it leaves wrong in the record and the next requests)."""
    turns = {turn.turn: turn for turn in report.turns}
    out: list[Problem] = []
    for number, other in report.moved:
        turn = turns[number]
        on = rules.ref(turn.artifact)
        out.append(
            Problem(
                K.MOVES,
                f"turn {number}: the move ran on another artifact than its record says: the record "
                f"names {turn.tool} on {on}, but its outcome is what {turn.tool} makes of "
                f"{rules.ref(other)} (run again on {on}, it gives something else)",
            )
        )
    return out


def _finish_problems(rules: Rules, report: RunReport, world: RecordedWorld) -> list[Problem]:
    thinker, answer = rules.thinker, report.answer
    if answer is None:
        return []
    out: list[Problem] = []
    finishes = [t for t in report.turns if t.tool == FINISH]
    if len(finishes) != 1 or report.turns[-1].tool != FINISH:
        return [
            Problem(
                K.RECORD,
                f"a completed run ends with exactly one finish turn, not {len(finishes)}",
            )
        ]
    last = report.turns[-1]
    asked = len(report.requests) == len(report.turns)
    if not asked and len(report.requests) != len(report.turns) - 1:
        out.append(
            Problem(K.RECORD, f"{len(report.requests)} decisions for {len(report.turns)} turns")
        )
    answer_refs = [ref for ref, a in world if a is answer]
    before = report.world_before_answer
    candidates = rules.candidates(before)
    selection: dict[str, float] = {}
    unselectable: set[str] = set()  # refused (or unanswered): never selected, at any threshold
    if asked:
        given = report.answers[-1] if report.answers else {}
        chosen = choice_of(given.get("next"))
        if "next" in report.requests[-1].questions:
            if chosen is None or chosen.choice != FINISH:
                out.append(
                    Problem(
                        K.MOVES,
                        "the last request's 'next' was not answered finish, yet the run finished",
                    )
                )
            else:
                out += _recorded(last.turn, "'next'", last.next, chosen)
        elif last.next is not None:
            out.append(
                Problem(
                    K.RECORD,
                    f"turn {last.turn}: a selection-only turn records 'next' probabilities "
                    f"{dict(last.next)}, though 'next' was not asked",
                )
            )
        for ref in candidates:
            probability, can_select = selection_of(given.get(f"select_{ref}"))
            selection[ref] = probability  # a refusal: recorded as 0, selecting nothing
            if not can_select:
                unselectable.add(ref)
    elif candidates or (
        rules.moves(before, {(t.tool, t.artifact or "") for t in report.turns[:-1]})
        and last.turn <= thinker.max_turns
    ):
        out.append(
            Problem(K.MOVES, "the run finished without asking while moves or candidates remained")
        )
    if list(last.selection.items()) != list(selection.items()):
        out.append(
            Problem(
                K.RECORD,
                f"the finish turn records selection {dict(last.selection)}, the model's response "
                f"gave {selection}",
            )
        )
    threshold = report.threshold  # derived from the constructor's argument and the entry
    wanted = [ref for ref, p in selection.items() if p >= threshold and ref not in unselectable]
    got = [ref_of(world, item) for item in answer.iterands]
    if got != wanted:
        out.append(
            Problem(
                K.ANSWER,
                f"the answer is {rules.refs(got)}; the candidates selected at >= "
                f"{threshold} in world order are {rules.refs(wanted)}"
                + (
                    f" (refused, so never selected: {rules.refs(sorted(unselectable))})"
                    if unselectable
                    else ""
                ),
            )
        )
    inside = [ref_of(world, item) for item in answer.iterands if id(item) in rules.given]
    if inside:
        out.append(
            Problem(
                K.ANSWER,
                f"the answer holds {rules.refs(inside)}: the input and its items are never an "
                "answer",
            )
        )
    if not answer_refs:
        out.append(Problem(K.ANSWER, "the answer is not registered in the run's world"))
    if answer.instruction != thinker.objective or answer.iterand_type is not thinker.output_type:
        out.append(
            Problem(
                K.ANSWER,
                "the answer's instruction is not the objective or its type not the output type",
            )
        )
    return out


def _crash_site(report: RunReport) -> str:
    """Where an unexpected failure came from: a tool's move, else the thinker."""
    decisions = len(report.requests)
    if report.answers and len(report.turns) == decisions - 1 and len(report.answers) == decisions:
        given = report.answers[-1]
        chosen = choice_of(given.get("next"))
        if chosen is not None and chosen.choice != FINISH:
            argument = choice_of(given.get(f"{chosen.choice}_input"))
            ref = report.describe_ref(argument.choice) if argument is not None else "?"
            return f"tool {chosen.choice} on {ref} (the move of request {decisions})"
    return "the thinker or the dispatcher"


def _end_problems(
    report: RunReport, expected_errors: tuple[type[BaseException], ...]
) -> list[Problem]:
    thinker = report.thinker
    decisions = len(report.requests)
    if report.hang is not None:
        return [
            Problem(
                K.HANG,
                f"the run did not end within {report.hang.seconds:g} s: {report.hang.during} "
                "did not return (where it waited is below)",
            )
        ]
    if report.runaway:
        return [
            Problem(
                K.TERMINATION,
                f"the run asked for decision {decisions}, past max_turns + 1 = "
                f"{thinker.max_turns + 1}: it does not stop within its budget (the checker "
                "refused that decision and stopped the run; the run so far is below)",
            )
        ]
    if report.error is None:
        return []
    if not isinstance(report.error, expected_errors):
        error = report.error
        return [
            Problem(
                K.CRASH,
                f"the run failed in {_crash_site(report)}: {type(error).__qualname__}: {error} "
                "(its traceback is below)",
            )
        ]
    if len(report.turns) != decisions - 1 or any(t.tool == FINISH for t in report.turns):
        return [
            Problem(
                K.RECORD, "a tool's unreadable failure left a turn behind (or came after finish)"
            )
        ]
    return []


def invariant_problems(
    report: RunReport, *, expected_errors: tuple[type[BaseException], ...] = ()
) -> list[Problem]:
    """Every invariant ``report``'s run broke (empty when it kept them all), each a
    :class:`Problem` (a ``str`` with a ``kind``), the most telling first.

    A run failing with one of ``expected_errors`` (a tool's unreadable failure) is legal when it
    failed on the tool move of its last request, with no turn recorded for that move.
    """
    thinker = report.thinker
    rules = Rules(report)
    world = report.world
    out = _end_problems(report, expected_errors)
    if report.hang is not None:
        return out  # a run cut short: the hang is the finding, the rest is partial
    out += _moved_problems(rules, report)
    if not world or world[0][1] is not report.input:
        out.append(Problem(K.STATE, "the input is not the first artifact of the world"))
    decisions = len(report.requests)
    if decisions > thinker.max_turns + 1 and not report.runaway:
        out.append(
            Problem(
                K.TERMINATION,
                f"{decisions} decisions exceed max_turns + 1 = {thinker.max_turns + 1}",
            )
        )
    # The legal pairs of the world the decisions saw: the answer list, adopted after the last
    # decision, would count as one more input for a list-taking tool.
    pairs = rules.legal_pairs(report.world_before_answer)
    if decisions > pairs + 1:
        out.append(
            Problem(
                K.TERMINATION, f"{decisions} decisions exceed the legal pairs + 1 = {pairs + 1}"
            )
        )
    for number, request in enumerate(report.requests, 1):
        out += request_problems(rules, number, request, report)
    out += _turn_problems(rules, report, world)
    if not report.stopped:
        out += _finish_problems(rules, report, world)
    if report.obs_turns is None:
        if report.turns:
            out.append(Problem(K.RECORD, "OBS_TURNS was not published"))
    else:
        try:
            recorded = parse_turns(report.obs_turns)
        except ValueError as error:
            out.append(Problem(K.RECORD, f"OBS_TURNS does not parse: {error}"))
        else:
            if recorded != report.turns:
                out.append(Problem(K.RECORD, "OBS_TURNS does not equal thinker.turns()"))
    return out


def violation_of(report: RunReport, problems: Sequence[Problem]) -> InvariantViolation:
    """The violation for ``problems`` of ``report``'s run, with the failure's traceback into
    the user's code when the run crashed (and the failure as its ``__cause__``)."""
    details = ""
    error = report.error
    if error is not None and any(p.kind is K.CRASH for p in problems):
        frames = user_frames(traceback.extract_tb(error.__traceback__))
        details = (
            "the failure's traceback (its frames outside harness and asyncio):\n"
            f"{frames}\n{type(error).__qualname__}: {error}"
        )
    raised = InvariantViolation(problems, report, details=details)
    raised.__cause__ = error if details else None
    return raised

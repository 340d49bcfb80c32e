"""The demo's budget can be met, and no turn goes to a move its types could have refused.

A policy built from the answer key (the perfect model: it reads the files of the key and keeps
the planted sentences) must reach recall and precision 1.0 within the default budget; a policy
picking uniformly at random is run for comparison (its figures are printed, not asserted), and
neither of them, nor anything else, ever spends a turn on a file that cannot be read.
"""

from __future__ import annotations

import asyncio

import pytest

from harness.demo import (
    DEMO_MAX_TURNS,
    AnswerKeyPolicy,
    DemoScore,
    PriceDecisionFinder,
    UniformRandomPolicy,
    answer_key,
    answer_statements,
    corpus_path,
    run_demo_with,
    score_answer,
    survey_folder,
)
from harness.record import RunRecord
from harness.thinker import FINISH
from harness.tools import Workflow

RANDOM_SEEDS = range(8)


def score(record: RunRecord) -> DemoScore:
    return score_answer(answer_statements(record), answer_key())


def tool_turns(record: RunRecord) -> list[str]:
    return [turn.tool for turn in record.turns if turn.tool != FINISH]


def test_the_answer_key_policy_finds_every_planted_decision_within_the_default_budget() -> None:
    key = answer_key()
    policy = AnswerKeyPolicy(key)
    run = asyncio.run(run_demo_with(policy))
    record = run.record
    result = score(record)
    assert (result.found, result.planted, result.selected) == (7, 7, 7)
    assert result.recall == 1.0
    assert result.precision == 1.0
    # The listing, then one read per file of the key, then finish: 8 tool turns of 12.
    assert tool_turns(record) == ["list_folder"] + ["read_statements"] * len(key.files)
    assert len(tool_turns(record)) <= DEMO_MAX_TURNS
    assert record.turns[-1].tool == FINISH
    assert record.turns[-1].turn == len(key.files) + 2
    assert not [turn for turn in record.turns if turn.failure is not None]
    assert policy.asked == len(record.calls) == len(record.turns)
    # The answer's sources are the key's files, each statement with its own file.
    assert {source for source, _ in answer_statements(record)} == key.files


def test_the_budget_is_a_real_constraint_and_the_default_leaves_room() -> None:
    # With one turn fewer than the key needs the perfect policy cannot find everything: the
    # budget is a real constraint, and the default leaves room over it.
    key = answer_key()
    needed = 1 + len(key.files)
    assert needed < DEMO_MAX_TURNS
    short = asyncio.run(run_demo_with(AnswerKeyPolicy(key), max_turns=needed - 1)).record
    assert score(short).recall < 1.0
    assert score(short).precision == 1.0  # what it did reach, it kept right
    exact = asyncio.run(run_demo_with(AnswerKeyPolicy(key), max_turns=needed)).record
    assert score(exact).recall == 1.0


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_a_uniformly_random_policy_reports_its_figures_and_never_reads_an_unreadable_file(
    seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    run = asyncio.run(run_demo_with(UniformRandomPolicy(seed)))
    record = run.record
    result = score(record)
    with capsys.disabled():
        turns = len(tool_turns(record))
        print(f"\nrandom policy, seed {seed}: {turns} tool turns; {result.line()}")
    # No figure is asserted; what is asserted is that the types ruled out every unreadable
    # file: whatever a model picks, no tool turn fails and every read was of a text file.
    assert not [turn for turn in record.turns if turn.failure is not None]
    readable = {f.path for f in survey_folder(str(corpus_path())) if f.readable}
    for turn in record.turns:
        if turn.tool == "read_statements":
            assert turn.argument is not None
            line = record.artifacts[str(turn.artifact)]
            assert line.startswith(f"{turn.artifact} (text_file): ")
            assert line.split("): ", 1)[1].rsplit(" (", 1)[0] in readable
    assert len(tool_turns(record)) <= DEMO_MAX_TURNS


def test_no_move_is_ever_offered_on_a_file_that_cannot_be_read() -> None:
    # Every argument distribution of every turn (all candidates the model could pick), for the
    # perfect and a random policy: only text files, never one the survey left out.
    left_out = {f.path for f in survey_folder(str(corpus_path())) if not f.readable}
    assert len(left_out) == 10
    for policy in (AnswerKeyPolicy(answer_key()), UniformRandomPolicy(11)):
        record = asyncio.run(run_demo_with(policy)).record
        offered = set()
        for turn in record.turns:
            for ref in turn.argument or {}:
                offered.add(record.artifacts[ref].split("): ", 1)[1].rsplit(" (", 1)[0])
        assert offered
        assert not offered & left_out


def test_the_demo_thinker_is_a_tool_over_a_folder() -> None:
    thinker = PriceDecisionFinder(Workflow())
    assert thinker.max_turns == DEMO_MAX_TURNS
    assert thinker.selection_threshold == 0.5

"""The journal's rules: a torn last line is dropped, a changed run refuses to resume by name,
a paused run resumes with each kind of approval, a branch forces a move and goes on live."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness import (
    Answer,
    Approval,
    DecisionRequest,
    DecisionThinker,
    DecisionTool,
    Identifiable,
    JobContext,
    ListArtifact,
    PausedResult,
    RunResult,
    branch,
    requires_approval,
    resume_sync,
    run_sync,
    tool_name,
)
from harness.errors import SyncRunInLoopError
from harness.runs import (
    ApprovalRequiredError,
    BranchError,
    JournalError,
    JournalMismatchError,
    PendingApproval,
    read_journal,
)
from harness.runs._typed_json import product_json, product_of
from harness.testing import FakeDecisionModel
from tests.runs import chores
from tests.runs.chores import Chore, Chores, DoChore, Plan, SplitPlan, policy

PLAN = "sweep; risky roof; mop"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def folder(tmp_path: Path) -> Iterator[Path]:
    chores.FOLDER = tmp_path
    yield tmp_path
    chores.FOLDER = Path(".")


def fake() -> FakeDecisionModel:
    return FakeDecisionModel(policy)


def moves(result: RunResult[Any]) -> list[str]:  # any answer type
    return [f"{t.tool} {t.artifact or ''}".strip() for t in result.turns]


# -- the journal file --------------------------------------------------------------------------


def test_a_torn_last_line_is_dropped_and_cut_before_appending(folder: Path) -> None:
    journal = folder / "j"
    whole = run_sync(Chores, Plan("sweep; mop"), model=fake(), journal=journal)
    lines = journal.read_bytes().split(b"\n")
    journal.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:25])  # turn 3 cut mid-write
    read = read_journal(journal)
    assert [e.turn for e in read.entries] == [1, 2]
    again = resume_sync(Chores, journal, model=fake())
    assert again.turns == whole.turns
    assert [e.turn for e in read_journal(journal).entries] == [1, 2, 3, 4]


def test_resume_sync_takes_what_resume_takes_and_refuses_inside_a_loop(folder: Path) -> None:
    journal = folder / "j"
    whole = run_sync(Chores, Plan("sweep; mop"), model=fake(), journal=journal)
    lines = journal.read_bytes().split(b"\n")
    journal.write_bytes(b"\n".join(lines[:3]) + b"\n")  # two turns journalled
    seen: list[object] = []
    again = resume_sync(Chores, journal, model=fake(), on_progress=seen.append)
    assert again.turns == whole.turns
    assert seen  # the progress of the resumed run's top job

    async def inside_a_loop() -> None:
        with pytest.raises(SyncRunInLoopError, match=r"await harness\.resume\(Chores, \.\.\.\)"):
            resume_sync(Chores, journal, model=fake())

    asyncio.run(inside_a_loop())


def test_a_damaged_line_before_the_last_is_refused_by_number(folder: Path) -> None:
    journal = folder / "j"
    run_sync(Chores, Plan("sweep; mop"), model=fake(), journal=journal)
    lines = journal.read_bytes().split(b"\n")
    lines[1] = lines[1][:20]
    journal.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalError, match="line 2 is not a journal entry"):
        read_journal(journal)
    (folder / "other").write_text('{"hello": 1}\n')
    with pytest.raises(JournalError, match="not a harness journal"):
        read_journal(folder / "other")


def test_an_existing_journal_is_not_overwritten(folder: Path) -> None:
    journal = folder / "j"
    run_sync(Chores, Plan("sweep"), model=fake(), journal=journal)
    with pytest.raises(JournalError, match="already there: resume it"):
        run_sync(Chores, Plan("sweep"), model=fake(), journal=journal)


def test_a_product_round_trips_as_typed_data() -> None:
    nested = ListArtifact.of(ListArtifact[Chore], [ListArtifact.of(Chore, [Chore("a")])], "why")
    assert product_of(product_json(nested)) == nested
    assert product_of(product_json(Chore("b"))) == Chore("b")


# -- the fingerprint -----------------------------------------------------------------------------


@tool_name("chores")
class OtherObjective(DecisionThinker[Plan, chores.Done]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=chores.Done,
            key_tool=DoChore,
            palette=(SplitPlan,),
            objective="Do the chores in any order",
            max_turns=20,
        )


@tool_name("split_plan")
class SplitPlanLoudly(DecisionTool[Plan, ListArtifact[Chore]]):
    """Splits a plan into its chores, loudly."""

    async def execute(self, input: Plan, context: JobContext) -> ListArtifact[Chore]:
        return ListArtifact.of(Chore, [Chore(p.strip()) for p in input.text.split(";")])


@tool_name("chores")
class OtherPalette(DecisionThinker[Plan, chores.Done]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=chores.Done,
            key_tool=DoChore,
            palette=(SplitPlanLoudly,),
            objective="Split the plan and do every chore",
            max_turns=20,
        )


def half_journal(folder: Path) -> Path:
    journal = folder / "j"
    run_sync(Chores, Plan("sweep; mop"), model=fake(), journal=journal)
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:3]) + "\n")
    return journal


def test_a_changed_objective_or_palette_is_refused_by_name(folder: Path) -> None:
    journal = half_journal(folder)
    with pytest.raises(JournalMismatchError, match="objective changed from 'Split the plan"):
        resume_sync(OtherObjective, journal, model=fake())
    with pytest.raises(
        JournalMismatchError, match="palette: tool 'split_plan' changed its description"
    ) as caught:
        resume_sync(OtherPalette, journal, model=fake())
    assert "accept_model_change" not in str(caught.value)


def test_a_changed_model_is_refused_unless_accepted_and_the_record_says_so(folder: Path) -> None:
    journal = half_journal(folder)
    other = chores.model("fake")  # a client of another class: another model
    with pytest.raises(JournalMismatchError, match=r"model changed from client \(fake: Fake"):
        resume_sync(Chores, journal, model=other)
    with pytest.raises(JournalMismatchError, match=r"accept_model_change=True"):
        resume_sync(Chores, journal, model=other)
    result = resume_sync(Chores, journal, model=other, accept_model_change=True)
    assert [t.tool for t in result.turns][-1] == "finish"
    assert result.record().entry["journalled_with"] == "client:FakeDecisionModel"
    assert "journalled_with" not in run_sync(Chores, Plan("sweep"), model=fake()).record().entry


# -- approval ------------------------------------------------------------------------------------


def paused(folder: Path) -> tuple[Path, PausedResult[chores.Done]]:
    journal = folder / "careful.journal"
    result = run_sync(chores.CarefulChores, Plan(PLAN), model=fake(), journal=journal)
    assert isinstance(result, PausedResult)
    assert result.pending is not None
    return journal, result


def test_a_move_below_the_bar_pauses_the_run_and_the_journal_keeps_the_question(
    folder: Path,
) -> None:
    journal, result = paused(folder)
    assert result.pending is not None
    assert (result.pending.turn, result.pending.tool, result.pending.artifact) == (
        3,
        "do_chore",
        "chore#2",
    )
    assert result.pending.probability == pytest.approx(0.6)
    assert result.pending.below == 0.8
    assert result.journal == journal
    assert moves(result) == ["split_plan plan#1", "do_chore chore#1"]
    assert read_journal(journal).pending is not None
    with pytest.raises(ApprovalRequiredError, match="paused at turn 3"):
        resume_sync(chores.CarefulChores, journal, model=fake())


@pytest.mark.parametrize(
    ("approval", "third"),
    [
        (Approval.approve(), "do_chore chore#2"),
        (Approval.reject("not on a windy day"), "do_chore chore#2"),
        (Approval.pick("do_chore", "chore#3"), "do_chore chore#3"),
    ],
)
def test_a_paused_run_round_trips_through_a_process_exit_and_resumes(
    folder: Path, approval: Approval, third: str
) -> None:
    env = {**os.environ, "CHORES_DIR": str(folder)}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    journal = folder / "careful.journal"
    done = subprocess.run(
        [sys.executable, "-m", "tests.runs.chores", "careful", "fake", PLAN, str(journal),
         str(folder / "paused.json")],
        env=env, cwd=ROOT, capture_output=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr.decode()
    asked = (folder / "calls.log").read_text().split()
    result = resume_sync(
        chores.CarefulChores, journal, model=chores.model("fake"), approval=approval
    )
    if approval.kind == "pick":  # risky roof is still to do: the model is unsure again
        assert isinstance(result, PausedResult)
        assert result.pending is not None
        assert (result.pending.turn, result.pending.artifact) == (4, "chore#2")
        result = resume_sync(
            chores.CarefulChores, journal, model=chores.model("fake"), approval=Approval.approve()
        )
    assert not isinstance(result, PausedResult)
    after = (folder / "calls.log").read_text().split()[len(asked) :]
    assert not set(after) & {e.data["request"] for e in read_journal(journal).entries[:3]}
    assert moves(result)[2] == third
    kept = [d.chore for d in result.items]
    if approval.kind == "reject":
        assert result.turns[2].failure == "not on a windy day"
        assert kept == ["sweep", "mop"]
    else:
        assert result.turns[2].failure is None
        assert "risky roof" in kept
    assert read_journal(journal).finished()


def test_an_approver_answers_without_a_pause_and_without_a_journal(folder: Path) -> None:
    asked: list[str] = []

    def approver(pending: object) -> Approval:
        asked.append(str(pending))
        return Approval.approve()

    result = run_sync(chores.CarefulChores, Plan(PLAN), model=fake(), approver=approver)
    assert len(asked) == 1
    assert not isinstance(result, PausedResult)
    from harness import RunFailedError

    with pytest.raises(RunFailedError, match="needs a person's approval"):
        run_sync(chores.CarefulChores, Plan(PLAN), model=fake())


def test_a_pick_that_is_not_legal_is_refused_naming_the_legal_moves(folder: Path) -> None:
    journal, _ = paused(folder)
    from harness import RunFailedError

    with pytest.raises(RunFailedError, match="not a legal move; pick one of: do_chore on"):
        resume_sync(
            chores.CarefulChores,
            journal,
            model=fake(),
            approval=Approval.pick("do_chore", "plan#1"),
        )


def test_requires_approval_takes_a_bar_in_0_1() -> None:
    with pytest.raises(ValueError, match=r"number in \(0, 1\]"):
        requires_approval(below=1.5)


# -- branching -----------------------------------------------------------------------------------


def test_a_branch_forces_a_move_at_turn_k_and_goes_on_live(folder: Path) -> None:
    journal = folder / "j"
    original = run_sync(Chores, Plan(PLAN), model=fake(), journal=journal)
    counted = FakeDecisionModel(policy)
    forked = asyncio.run(branch(Chores, journal, at=2, move="do_chore:chore#3", model=counted))
    assert moves(forked.result)[:2] == ["split_plan plan#1", "do_chore chore#3"]
    assert forked.original == original.turns
    assert forked.result.turns[1].next == original.turns[1].next  # the journalled decision
    assert forked.result.turns[0] == original.turns[0]
    text = forked.side_by_side()
    assert "journalled" in text
    assert "branch (2=do_chore:chore#3)" in text
    assert ">" in text.splitlines()[2]
    assert "do_chore on chore#1" in text.splitlines()[2]
    assert "do_chore on chore#3" in text.splitlines()[2]
    second = asyncio.run(branch(Chores, journal, at=3, move="second", model=fake()))
    assert [t.tool for t in second.result.turns] == ["split_plan", "do_chore", "finish"]
    assert [d.chore for d in second.result.items] == ["sweep"]  # the model's second choice
    with pytest.raises(Exception, match="not a legal move there") as caught:
        asyncio.run(branch(Chores, journal, at=2, move="mop", model=fake()))
    assert isinstance(caught.value.__cause__, BranchError)


@requires_approval(below=0.99)
@tool_name("do_chore")
class DoChoreCarefully(DoChore):
    """Does a chore, with a person's approval when the model is not nearly sure."""


@tool_name("chores")
class ChoresWithACarefulTool(DecisionThinker[Plan, chores.Done]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=chores.Done,
            key_tool=DoChoreCarefully,
            palette=(SplitPlan,),
            objective="Split the plan and do every chore",
            max_turns=20,
        )


def test_a_bar_on_a_tool_holds_for_that_tool_only(folder: Path) -> None:
    asked: list[str] = []

    def approver(pending: PendingApproval) -> Approval:
        asked.append(pending.tool)
        return Approval.approve()

    result = run_sync(ChoresWithACarefulTool, Plan("sweep; mop"), model=fake(), approver=approver)
    # turn 2 offered do_chore alone (1.0); turn 3 gave it 0.97: asked; split_plan (0.97) never
    assert asked == ["do_chore"]
    assert [t.next for t in result.turns][2] == {"do_chore": 0.97, "finish": pytest.approx(0.03)}
    assert [t.tool for t in result.turns] == ["split_plan", "do_chore", "do_chore", "finish"]


def test_a_tool_in_a_nested_thinker_gets_a_key_within_its_thinkers(folder: Path) -> None:
    run_sync(chores.ReviewedChores, Plan("sweep; mop"), model=fake(), journal=folder / "j")
    run_id = read_journal(folder / "j").run_id
    keys = [line.split("\t")[0] for line in (folder / "executions.log").read_text().splitlines()]
    assert keys == [
        f"{run_id}/2/review/chore#1/1/inspect/chore#1",
        f"{run_id}/3/do_chore/chore#1",
        f"{run_id}/4/do_chore/chore#2",
    ]


def test_a_branch_from_a_record_answers_the_turns_before_from_it(folder: Path) -> None:
    original = run_sync(Chores, Plan(PLAN), model=fake(), keep_bodies=True)
    path = original.write_record(folder / "run.json")
    asked: list[DecisionRequest] = []

    def counting(request: DecisionRequest) -> Mapping[str, Answer]:
        asked.append(request)
        return policy(request)

    forked = asyncio.run(
        branch(Chores, path, at=2, move="do_chore:chore#3", model=FakeDecisionModel(counting))
    )
    assert forked.original == original.turns
    assert moves(forked.result)[:2] == ["split_plan plan#1", "do_chore chore#3"]
    assert forked.result.turns[1].next == original.turns[1].next  # turn 2 from the record
    assert len(asked) == len(forked.result.turns) - 2  # turns 1 and 2 were not asked
    assert forked.side_by_side().splitlines()[0].split() == [
        "recorded",
        "branch",
        "(2=do_chore:chore#3)",
    ]

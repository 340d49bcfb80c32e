"""What a journal costs a run, and what a resume saves, on the embedded model.

A thinker splits a plan of ``--chores`` chores and does each (a tool with a small side effect
in memory), one decision per turn, on sparrow-decider in-process. Measured in the same process,
alternating, ``--repeat`` times each, and reported as the median with the lowest and highest:

- **turn**: a run's wall time over its turns, without a journal;
- **journal**: the time inside the journal's hook per turn (reading the turn's calls,
  encoding the line, write and flush; the fsync runs in a thread while the next decision is
  asked), the time a tool waited for that fsync, and the whole run with a journal minus
  without it, per turn; each over **turn** (target: hook and wait at most 0.05);
- **resume**: resuming the finished run's journal (every turn replayed: fingerprint, reading,
  products restored, nothing asked) over running it again (target: at most 0.1).

A script, not a test::

    python benchmarks/journal.py [--chores 12] [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import attrs

from harness import (
    Artifact,
    DecisionThinker,
    DecisionTool,
    Identifiable,
    JobContext,
    ListArtifact,
    resume_sync,
    run_sync,
    tool_name,
)
from harness.runs._durable import JournalHooks

EFFECTS: list[str] = []


@attrs.frozen
class Plan(Artifact, alias="plan"):
    """Chores separated by ';'."""

    text: str


@attrs.frozen
class Chore(Artifact, alias="chore"):
    """One chore."""

    text: str


@attrs.frozen
class Done(Artifact, alias="done"):
    """A chore done."""

    chore: str


@tool_name("split_plan")
class SplitPlan(DecisionTool[Plan, ListArtifact[Chore]]):
    """Splits a plan into its chores."""

    async def execute(self, input: Plan, context: JobContext) -> ListArtifact[Chore]:
        return ListArtifact.of(Chore, [Chore(p.strip()) for p in input.text.split(";")])


@tool_name("do_chore")
class DoChore(DecisionTool[Chore, ListArtifact[Done]]):
    """Does a chore."""

    async def execute(self, input: Chore, context: JobContext) -> ListArtifact[Done]:
        EFFECTS.append(input.text)
        return ListArtifact.of(Done, [Done(input.text)])


@tool_name("chores")
class Chores(DecisionThinker[Plan, Done]):
    """Does the chores of a plan."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Done,
            key_tool=DoChore,
            palette=(SplitPlan,),
            objective="Split the plan and do every chore",
            max_turns=64,
        )


HOOK_SECONDS: list[float] = []
_completed = JournalHooks.completed


async def _timed(self: JournalHooks, turn: object) -> None:
    started = time.perf_counter()
    await _completed(self, turn)  # type: ignore[arg-type]  # the hook's own turn
    HOOK_SECONDS.append(time.perf_counter() - started)


JournalHooks.completed = _timed  # type: ignore[method-assign]  # measured, not changed

WAIT_SECONDS: list[float] = []
_synced = JournalHooks.synced


async def _waited(self: JournalHooks) -> None:
    started = time.perf_counter()
    await _synced(self)
    WAIT_SECONDS.append(time.perf_counter() - started)


JournalHooks.synced = _waited  # type: ignore[method-assign]  # measured, not changed


def spread(values: list[float]) -> str:
    """Median [lowest, highest] of ``values``."""
    return f"{statistics.median(values):.4f} [{min(values):.4f}, {max(values):.4f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chores", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    words = ["sweep", "dust", "mop", "water", "iron", "cook", "shop", "wash", "fold", "dry"]
    plan = Plan("; ".join(f"{words[i % len(words)]} {i}" for i in range(args.chores)))
    run_sync(Chores, plan, model="embedded")  # warm: the model loaded, the classes proved
    plain_turn, journal_turn, hook_turn, wait_turn, resume_ratio = [], [], [], [], []
    turns = 0
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            started = time.perf_counter()
            plain = run_sync(Chores, plan, model="embedded")
            plain_seconds = time.perf_counter() - started
            turns = len(plain.turns)
            journal = Path(folder) / f"{index}.journal"
            HOOK_SECONDS.clear()
            WAIT_SECONDS.clear()
            started = time.perf_counter()
            run_sync(Chores, plan, model="embedded", journal=journal)
            journal_seconds = time.perf_counter() - started
            started = time.perf_counter()
            resumed = resume_sync(Chores, journal)
            resume_seconds = time.perf_counter() - started
            assert resumed.turns == plain.turns
            assert resumed.replayed == turns
            per_turn = plain_seconds / turns
            plain_turn.append(per_turn)
            journal_turn.append((journal_seconds - plain_seconds) / turns / per_turn)
            hook_turn.append(sum(HOOK_SECONDS) / len(HOOK_SECONDS) / per_turn)
            wait_turn.append(sum(WAIT_SECONDS) / len(HOOK_SECONDS) / per_turn)
            resume_ratio.append(resume_seconds / plain_seconds)
    print(f"{args.chores} chores, {turns} turns a run, {args.repeat} runs of each, embedded model")
    print("median [lowest, highest] over the runs:")
    print(f"  turn (no journal), seconds:          {spread(plain_turn)}")
    print(f"  journal hook per turn / turn:        {spread(hook_turn)}   target <= 0.05")
    print(f"  waiting for the fsync per turn / turn: {spread(wait_turn)}")
    print(f"  (run with - without journal) / turn: {spread(journal_turn)}   (noisier)")
    print(f"  resume (all replayed) / run again:   {spread(resume_ratio)}   target <= 0.1")


if __name__ == "__main__":
    main()

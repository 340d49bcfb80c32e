"""A long run to kill: a plan split into chores, each chore done with a side effect.

``DoChore`` applies its effect once per idempotency key (a line ``KEY<TAB>CHORE`` in
``effects.log``) and logs every execution (``executions.log``), so a test sees that a tool may
run twice (at-least-once) while its effect lands once. A chore with ``bad`` in it fails readably
(fed back to the model). ``ReviewedChores`` nests a thinker in its palette; ``CarefulChores``
asks a person before a move the model gives less than 0.8.

Run as a script (``python -m tests.runs.chores THINKER MODEL JOURNAL RECORD [resume]``), a
crash is planted with ``CHORES_KILL=where:n`` (``model``: during the n-th model call, ``tool``:
in the n-th chore after its effect, ``journal``: half-way through the n-th journal line,
``between``: right after the n-th journal line): the process kills itself with SIGKILL (with
``CHORES_KILL_ONCE=FILE``, only the first process to get there, leaving FILE behind).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from harness import (
    Answer,
    Artifact,
    Choice,
    DecisionRequest,
    DecisionResponse,
    DecisionThinker,
    DecisionTool,
    Identifiable,
    InvalidInputError,
    JobContext,
    ListArtifact,
    NoulAnswer,
    idempotency_key,
    requires_approval,
    tool_name,
)
from harness.catalog import CatalogEntry
from harness.providers import DecisionClient
from harness.testing import FakeDecisionModel, choose

FOLDER = Path(os.environ.get("CHORES_DIR", "."))


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


@attrs.frozen
class Check(Artifact, alias="check"):
    """A chore reviewed."""

    chore: str
    fine: bool


_counts: dict[str, int] = {}


def _kill_point(where: str) -> None:
    """SIGKILL this process at the planted point (``CHORES_KILL=where:n``)."""
    planted = os.environ.get("CHORES_KILL", "")
    kind, _, count = planted.partition(":")
    if kind != where:
        return
    _counts[where] = _counts.get(where, 0) + 1
    if _counts[where] == int(count):
        once = os.environ.get("CHORES_KILL_ONCE")  # a marker file: only the first process dies
        if once is not None:
            if Path(once).exists():
                return
            Path(once).write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)


def _log(name: str, line: str) -> None:
    with (FOLDER / name).open("a", encoding="utf-8") as file:
        file.write(line + "\n")
        file.flush()
        os.fsync(file.fileno())


@tool_name("split_plan")
class SplitPlan(DecisionTool[Plan, ListArtifact[Chore]]):
    """Splits a plan into its chores."""

    async def execute(self, input: Plan, context: JobContext) -> ListArtifact[Chore]:
        return ListArtifact.of(Chore, [Chore(p.strip()) for p in input.text.split(";")])


@tool_name("do_chore")
class DoChore(DecisionTool[Chore, ListArtifact[Done]]):
    """Does a chore (once per idempotency key)."""

    async def execute(self, input: Chore, context: JobContext) -> ListArtifact[Done]:
        key = idempotency_key(context)
        assert key is not None
        _log("executions.log", f"{key}\t{input.text}")
        if "bad" in input.text:
            raise InvalidInputError("chore", input.text, "cannot be done")
        effects = FOLDER / "effects.log"
        seen = effects.read_text(encoding="utf-8") if effects.exists() else ""
        if f"{key}\t" not in seen:  # the key honoured: the effect lands once
            _log("effects.log", f"{key}\t{input.text}")
        _kill_point("tool")
        return ListArtifact.of(Done, [Done(input.text)])


@tool_name("inspect")
class Inspect(DecisionTool[Chore, ListArtifact[Check]]):
    """Inspects a chore."""

    async def execute(self, input: Chore, context: JobContext) -> ListArtifact[Check]:
        _log("executions.log", f"{idempotency_key(context)}\tinspect {input.text}")
        return ListArtifact.of(Check, [Check(input.text, "bad" not in input.text)])


@tool_name("review")
class Review(DecisionThinker[Chore, Check]):
    """Reviews a chore (a thinker of its own)."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Check, key_tool=Inspect, palette=(), objective="Review it"
        )


@tool_name("chores")
class Chores(DecisionThinker[Plan, Done]):
    """Does every chore of a plan."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Done,
            key_tool=DoChore,
            palette=(SplitPlan,),
            objective="Split the plan and do every chore",
            max_turns=20,
        )


@tool_name("reviewed_chores")
class ReviewedChores(DecisionThinker[Plan, Done]):
    """Reviews and does every chore of a plan."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Done,
            key_tool=DoChore,
            palette=(SplitPlan, Review),
            objective="Split the plan, review the first chore, do every chore",
            max_turns=20,
        )


@requires_approval(below=0.8)
@tool_name("careful_chores")
class CarefulChores(DecisionThinker[Plan, Done]):
    """Does every chore of a plan, asking a person when the model is unsure."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Done,
            key_tool=DoChore,
            palette=(SplitPlan,),
            objective="Split the plan and do every chore",
            max_turns=20,
        )


def policy(request: DecisionRequest) -> Mapping[str, Answer]:
    """Split first; review chore#2 once (when the palette has review); then do each chore in
    world order (``risky`` ones at 0.6); finish selecting everything."""
    answers: dict[str, Answer] = {}
    questions = request.questions
    for qid, question in questions.items():
        if qid.startswith("select_"):
            answers[qid] = NoulAnswer(0.9)
        elif isinstance(question, Choice) and qid != "next":
            answers[qid] = choose(question, next(iter(question.options)))
    move = questions.get("next")
    if not isinstance(move, Choice):
        return answers
    options = move.options
    state = request.state
    done = state.get("done", []) if isinstance(state, dict) else []
    reviewed = any(isinstance(d, str) and d.startswith("review") for d in done)
    if "split_plan" in options:
        answers["next"] = choose(move, "split_plan")
    elif "inspect" in options:
        answers["next"] = choose(move, "inspect")
    elif "review" in options and not reviewed:
        answers["next"] = choose(move, "review")
    elif "do_chore" in options:
        chores = questions.get("do_chore_input")
        assert isinstance(chores, Choice)
        ref = next(iter(chores.options))
        words = _words(request, ref)
        answers["next"] = choose(move, "do_chore", probability=0.6 if "risky" in words else 0.97)
        answers["do_chore_input"] = choose(chores, ref)
    else:
        answers["next"] = choose(move, "finish" if "finish" in options else next(iter(options)))
    return answers


def _words(request: DecisionRequest, ref: str) -> str:
    state = request.state
    lines = state.get("artifacts", []) if isinstance(state, dict) else []
    return next((line for line in lines if isinstance(line, str) and line.startswith(ref)), "")


class CountingModel:
    """A client logging each request it is asked (``calls.log``), killed on the planted call;
    the fake model (``policy``) or the embedded one answers."""

    def __init__(self, inner: DecisionClient, entry: CatalogEntry | None = None) -> None:
        self.inner = inner
        self.entry = entry

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        from harness.runs._typed_json import request_digest

        _log("calls.log", request_digest(request))
        _kill_point("model")
        return await self.inner.decide(request, self.entry or entry, timeout=timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()


def model(name: str) -> CountingModel:
    """``fake`` (the policy above) or ``embedded``, behind the counting client."""
    if name == "embedded":
        from harness.catalog import default_catalog
        from harness.providers import client_for

        entry = default_catalog().entry("embedded")
        return CountingModel(client_for(entry), entry)
    return CountingModel(FakeDecisionModel(policy))


def plant_journal_kill() -> None:
    """Make the journal writer die half-way through, or right after, its n-th line."""
    from harness.runs._journal import JournalWriter

    append = JournalWriter.append

    def dying(self: JournalWriter, entry: Mapping[str, object], *, sync: bool = True) -> None:
        planted = os.environ.get("CHORES_KILL", "")
        kind, _, count = planted.partition(":")
        if kind == "journal":
            _counts["journal"] = _counts.get("journal", 0) + 1
            if _counts["journal"] == int(count):
                import json

                line = json.dumps(entry).encode()
                self._file.write(line[: len(line) // 2])
                self._file.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        append(self, entry, sync=sync)
        _kill_point("between")

    JournalWriter.append = dying  # type: ignore[method-assign]  # a planted crash


THINKERS: dict[str, type[DecisionThinker[Plan, Done]]] = {
    "chores": Chores,
    "reviewed": ReviewedChores,
    "careful": CarefulChores,
}


def main(argv: list[str]) -> int:
    """``THINKER MODEL PLAN JOURNAL RECORD [resume]``: run (or resume) and write the record."""
    from harness import resume, run
    from harness.runs import PausedResult

    thinker_name, model_name, plan, journal, record = argv[:5]
    plant_journal_kill()
    thinker = THINKERS[thinker_name]
    if len(argv) > 5 and argv[5] == "resume":
        result = asyncio.run(resume(thinker, journal, model=model(model_name)))
    else:
        result = asyncio.run(run(thinker, Plan(plan), model=model(model_name), journal=journal))
    result.write_record(record)
    return 3 if isinstance(result, PausedResult) else 0


if __name__ == "__main__":  # the classes by their module's name, as a resume imports them
    from tests.runs.chores import main as main_of_module

    sys.exit(main_of_module(sys.argv[1:]))

"""CONTRACT.md "Thinker": the loop through the dispatcher against the fake model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

import attrs
import pytest

from harness.admission import Admission
from harness.artifacts import LinkArtifact, ListArtifact
from harness.catalog import Catalog
from harness.decision import Answer, Choice, DecisionRequest, NoulAnswer
from harness.errors import ExternalServiceError, InvalidInputError, TransientError
from harness.jobs import Dispatcher, EventKind, JobContext, JobEvent, Pacing
from harness.palette import PaletteError
from harness.providers import FakeDecisionModel
from harness.thinker import (
    DEFAULT_MAX_TURNS,
    DEFAULT_SELECTION_THRESHOLD,
    OBS_TURNS,
    DecisionThinker,
    ThinkerRun,
    parse_turns,
)
from harness.tools import DecisionTool, Identifiable, Workflow, tool_name

from .notes import (
    OBJECTIVE,
    JudgeNote,
    Note,
    SplitNote,
    Triage,
    Verdict,
    fake_catalog,
    pick,
    selection_answers,
    state_of,
    triage_policy,
)

INPUT = "alpha is due; beta can wait"


def dispatcher_for(model: FakeDecisionModel) -> Dispatcher:
    return Dispatcher(fake_catalog(), clients={"fake": model}, pacing=Pacing.immediate())


async def run_thinker(
    thinker: DecisionThinker[Note, Verdict], note: Note, model: FakeDecisionModel
) -> tuple[ListArtifact[Verdict], ThinkerRun[ListArtifact[Verdict]], list[JobEvent]]:
    events: list[JobEvent] = []
    async with dispatcher_for(model) as dispatcher:
        dispatcher.subscribe(events.append)
        job = ThinkerRun(Workflow(), thinker, note)
        answer = await dispatcher.run(job)
    return answer, job, events


async def test_the_run_splits_judges_both_parts_and_finishes_with_the_alpha_verdict() -> None:
    model = FakeDecisionModel(triage_policy)
    thinker = Triage(Workflow())
    answer, job, events = await run_thinker(thinker, Note(INPUT), model)

    assert [t.tool for t in thinker.turns()] == ["split_note", "judge_note", "judge_note", "finish"]
    assert len(model.requests) == 4
    assert [v.note for v in answer] == ["alpha is due"]
    assert answer.instruction == OBJECTIVE
    assert thinker.registry.ref(answer.iterands[0]) == "verdict#1"
    assert answer.iterands[0].alias == "verdict"

    first, second, _, last = model.requests
    first_next = first.questions["next"]
    assert isinstance(first_next, Choice)
    assert list(first_next.options) == ["split_note", "judge_note"]
    assert state_of(first)["done"] == ["nothing yet"]

    judge = second.questions["judge_note_input"]
    split = second.questions["split_note_input"]
    assert isinstance(judge, Choice)
    assert isinstance(split, Choice)
    assert list(judge.options) == ["note#1", "note#2", "note#3"]
    assert list(split.options) == ["note#2", "note#3"]

    last_next = last.questions["next"]
    assert isinstance(last_next, Choice)
    assert "finish" in last_next.options
    selection = thinker.turns()[-1].selection
    assert len(selection) == 2
    assert sum(1 for p in selection.values() if p >= 0.5) == 1

    recorded = parse_turns(job.metadata[OBS_TURNS])
    assert [t.tool for t in recorded] == ["split_note", "judge_note", "judge_note", "finish"]
    assert recorded == thinker.turns()

    progress = [
        e for e in events if e.kind is EventKind.PROGRESS and e.job.job_id == job.identity.job_id
    ]
    assert [e.message for e in progress] == [
        "turn 1: split_note on note#1",
        "turn 2: judge_note on note#2",
        "turn 3: judge_note on note#3",
    ]
    during = parse_turns(progress[1].job.metadata[OBS_TURNS])
    assert [t.turn for t in during][:1] == [1]
    assert all(t.tool != "finish" for t in during)


async def test_defaults_are_32_turns_and_threshold_one_half() -> None:
    thinker = Triage(Workflow())
    assert thinker.max_turns == DEFAULT_MAX_TURNS == 32
    assert thinker.selection_threshold == DEFAULT_SELECTION_THRESHOLD == 0.5


async def test_a_turns_selection_is_a_read_only_mapping_in_insertion_order() -> None:
    thinker = Triage(Workflow())
    await run_thinker(thinker, Note(INPUT), FakeDecisionModel(triage_policy))
    for turn in thinker.turns():
        assert turn.selection is not None
        with pytest.raises(TypeError):
            turn.selection["x"] = 1.0  # type: ignore[index]
    assert list(thinker.turns()[-1].selection) == ["verdict#1", "verdict#2"]


@tool_name("refuse_note")
class RefuseNote(DecisionTool[Note, ListArtifact[Verdict]]):
    """Refuses every note."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise InvalidInputError("note", input.text, "is never acceptable")


class SplitThenRefuse(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Verdict,
            key_tool=RefuseNote,
            palette=(SplitNote,),
            objective=OBJECTIVE,
        )


async def test_a_readable_failure_is_a_fact_of_the_run() -> None:
    asked = [0]

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        asked[0] += 1
        answers = selection_answers(request)
        nxt = request.questions["next"]
        assert isinstance(nxt, Choice)
        for qid, question in request.questions.items():
            if qid.endswith("_input"):
                assert isinstance(question, Choice)
                answers[qid] = pick(question, next(iter(question.options)))
        if asked[0] == 1:
            answers["next"] = pick(nxt, "refuse_note")
        elif "split_note" in nxt.options:
            answers["next"] = pick(nxt, "split_note")
        else:
            answers["next"] = pick(nxt, "refuse_note")
        return answers

    model = FakeDecisionModel(policy)
    thinker = SplitThenRefuse(Workflow())
    await run_thinker(thinker, Note(INPUT), model)
    first = thinker.turns()[0]
    assert first.tool == "refuse_note"
    assert first.failure is not None
    assert "never acceptable" in first.failure
    assert first.result is None
    second_next = model.requests[1].questions["next"]
    assert isinstance(second_next, Choice)
    assert "refuse_note" not in second_next.options
    done = state_of(model.requests[1])["done"]
    assert isinstance(done, list)
    assert done[0].startswith("refuse_note on note#1 failed: ")
    assert done[0].endswith("is never acceptable (correctable)")


async def test_the_turn_budget_ends_with_a_selection_only_request() -> None:
    class Short(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent,
                output_type=Verdict,
                key_tool=JudgeNote,
                palette=(SplitNote,),
                objective=OBJECTIVE,
                max_turns=2,
            )

    model = FakeDecisionModel(triage_policy)
    thinker = Short(Workflow())
    answer, _, _ = await run_thinker(thinker, Note(INPUT), model)
    turns = thinker.turns()
    assert [t.tool for t in turns] == ["split_note", "judge_note", "finish"]
    assert turns[-1].turn == 3
    assert turns[-1].next is None
    assert set(model.requests[-1].questions) == {"select_verdict#1"}
    assert [v.note for v in answer] == ["alpha is due"]


class RefuseOnly(DecisionThinker[Note, Verdict]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Verdict, key_tool=RefuseNote, palette=(), objective=OBJECTIVE
        )


async def test_nothing_of_the_output_type_answers_empty_after_one_decision() -> None:
    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        return {
            "next": pick(request.questions["next"], "refuse_note"),
            "refuse_note_input": pick(request.questions["refuse_note_input"], "note#1"),
        }

    model = FakeDecisionModel(policy)
    thinker = RefuseOnly(Workflow())
    answer, job, _ = await run_thinker(thinker, Note(INPUT), model)
    assert len(answer) == 0
    assert len(model.requests) == 1
    assert [t.tool for t in parse_turns(job.metadata[OBS_TURNS])] == ["refuse_note", "finish"]


async def test_a_transient_failure_with_no_retries_fails_naming_the_budget() -> None:
    model = FakeDecisionModel.scripted([TransientError("HTTP 503: loading", status=503)])
    thinker = Triage(Workflow())
    async with dispatcher_for(model) as dispatcher:
        job = ThinkerRun(Workflow(), thinker, Note(INPUT), upstream_retries=0)
        with pytest.raises(ExternalServiceError, match=r"retry budget \(0\)"):
            await dispatcher.run(job)


def test_the_key_tool_is_folded_in_once() -> None:
    once = DecisionThinker[Note, Verdict](
        Workflow(),
        output_type=Verdict,
        key_tool=JudgeNote,
        palette=(SplitNote,),
        objective=OBJECTIVE,
    )
    twice = DecisionThinker[Note, Verdict](
        Workflow(),
        output_type=Verdict,
        key_tool=JudgeNote,
        palette=(JudgeNote, SplitNote),
        objective=OBJECTIVE,
    )
    assert once.palette == (SplitNote, JudgeNote)
    assert twice.palette == (SplitNote, JudgeNote)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"objective": "  "}, "objective"),
        ({"output_type": None}, "output_type"),
        ({"key_tool": None}, "key_tool"),
        ({"palette": None}, "palette"),
        ({"max_turns": 0}, "max_turns"),
        ({"selection_threshold": 1.5}, "selection_threshold"),
    ],
)
def test_bad_constructor_arguments_are_refused(change: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {
        "output_type": Verdict,
        "key_tool": JudgeNote,
        "palette": (SplitNote,),
        "objective": OBJECTIVE,
    }
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        DecisionThinker[Note, Verdict](Workflow(), **arguments)  # type: ignore[arg-type]


def test_the_thinker_is_a_tool() -> None:
    assert issubclass(Triage, DecisionTool)
    assert isinstance(Triage(Workflow()), DecisionTool)


async def test_a_key_tool_only_run_judges_then_finishes() -> None:
    class KeyOnly(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent, output_type=Verdict, key_tool=JudgeNote, palette=(), objective=OBJECTIVE
            )

    thinker = KeyOnly(Workflow())
    answer, _, _ = await run_thinker(thinker, Note("alpha only"), FakeDecisionModel(triage_policy))
    assert [t.tool for t in thinker.turns()] == ["judge_note", "finish"]
    assert [v.note for v in answer] == ["alpha only"]


class NoteToNote(DecisionThinker[Note, Note]):
    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Note, key_tool=SplitNote, palette=(), objective="Split the note"
        )


async def test_the_input_is_never_an_answer() -> None:
    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        answers: dict[str, Answer] = {
            qid: __import__("harness.decision").decision.NoulAnswer(1.0)
            for qid in request.questions
            if qid.startswith("select_")
        }
        nxt = request.questions.get("next")
        if isinstance(nxt, Choice):
            key = "split_note" if "split_note" in nxt.options else "finish"
            answers["next"] = pick(nxt, key)
            if "split_note_input" in request.questions:
                answers["split_note_input"] = pick(
                    request.questions["split_note_input"],
                    next(iter(request.questions["split_note_input"].options)),  # type: ignore[union-attr]
                )
        return answers

    model = FakeDecisionModel(policy)
    thinker = NoteToNote(Workflow())
    async with dispatcher_for(model) as dispatcher:
        answer = await dispatcher.run(ThinkerRun(Workflow(), thinker, Note(INPUT)))
    assert isinstance(answer, ListArtifact)
    first = model.requests[0]
    first_next = first.questions["next"]
    assert isinstance(first_next, Choice)
    assert "finish" not in first_next.options
    assert not any(q.startswith("select_") for q in first.questions)
    notes = [n for n in answer if isinstance(n, Note)]
    assert len(notes) == len(answer) == 2
    assert all(note.text != INPUT for note in notes)
    assert [n.text for n in notes] == ["alpha is due", "beta can wait"]


@tool_name("explode")
class Explode(DecisionTool[Note, ListArtifact[Verdict]]):
    """Fails with a system error."""

    async def execute(self, input: Note, context: JobContext) -> ListArtifact[Verdict]:
        raise RuntimeError("disk on fire")


async def test_an_unreadable_failure_fails_the_run_and_records_no_turn() -> None:
    class Exploding(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent, output_type=Verdict, key_tool=Explode, palette=(), objective=OBJECTIVE
            )

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        return {
            "next": pick(request.questions["next"], "explode"),
            "explode_input": pick(request.questions["explode_input"], "note#1"),
        }

    thinker = Exploding(Workflow())
    with pytest.raises(RuntimeError, match="disk on fire"):
        await run_thinker(thinker, Note(INPUT), FakeDecisionModel(policy))
    assert thinker.turns() == ()


async def test_a_nested_thinker_runs_and_its_turns_land_on_its_own_job() -> None:
    @tool_name("wrap")
    class Wrap(DecisionTool[Note, Note]):
        """Wraps a note."""

        async def execute(self, input: Note, context: JobContext) -> Note:
            return Note(input.text + "; wrapped")

    class Outer(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent,
                output_type=Verdict,
                key_tool=Triage,
                palette=(Wrap,),
                objective="Run the triage",
            )

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        state = state_of(request)
        if state["objective"] == OBJECTIVE:
            return triage_policy(request)
        answers = selection_answers(request)
        nxt = request.questions["next"]
        assert isinstance(nxt, Choice)
        for qid, question in request.questions.items():
            if qid.endswith("_input"):
                assert isinstance(question, Choice)
                answers[qid] = pick(question, next(iter(question.options)))
        if "triage" in nxt.options:
            answers["next"] = pick(nxt, "triage")
        else:
            answers["next"] = pick(nxt, "finish")
        return answers

    events: list[JobEvent] = []
    model = FakeDecisionModel(policy)
    outer = Outer(Workflow())
    async with dispatcher_for(model) as dispatcher:
        dispatcher.subscribe(events.append, lambda e: e.kind is EventKind.COMPLETED)
        job = ThinkerRun(Workflow(), outer, Note(INPUT))
        answer = await dispatcher.run(job)
    assert isinstance(answer, ListArtifact)
    assert [v.note for v in answer if isinstance(v, Verdict)] == ["alpha is due"]
    assert [t.tool for t in outer.turns()] == ["triage", "finish"]
    nested = [e for e in events if e.job.tool_name == "triage" and OBS_TURNS in e.job.metadata]
    assert len(nested) == 1
    assert [t.tool for t in parse_turns(nested[0].job.metadata[OBS_TURNS])] == [
        "split_note",
        "judge_note",
        "judge_note",
        "finish",
    ]
    assert nested[0].job.parent_id == job.identity.job_id


def test_digest_lines_cover_links_lists_and_formatters() -> None:
    from harness.artifacts import ArtifactRegistry, TextFormatterRegistry, digest_line

    formatters = TextFormatterRegistry()
    formatters.register(Note, lambda n: n.text)
    world = ArtifactRegistry()
    link = LinkArtifact("The spec", "https://example.invalid/spec")
    notes = ListArtifact.of(Note, [Note("a"), Note("b\nc")])
    long = Note("x" * 200)
    lines = [digest_line(world.adopt(a), a, formatters) for a in (link, notes, long)]
    assert lines[0] == "link#1 (link): The spec"
    assert lines[1] == "list#1 (list): a list of 2 note"
    assert lines[2] == "note#3 (note): " + "x" * 160 + "..."
    assert digest_line("note#2", Note("b\nc"), formatters) == "note#2 (note): b c"
    assert all("\n" not in line for line in lines)
    assert json.dumps(lines)


async def test_cancelling_a_run_cancels_its_decision_and_returns_the_permit() -> None:
    started = asyncio.Event()

    async def hang(request: DecisionRequest) -> Mapping[str, Answer]:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    admission = Admission()
    catalog = fake_catalog(max_concurrent=1)
    events: list[JobEvent] = []
    async with Dispatcher(
        catalog, clients={"fake": FakeDecisionModel(hang)}, admission=admission
    ) as dispatcher:
        dispatcher.subscribe(events.append, lambda e: e.kind is EventKind.CANCELLED)
        handle = dispatcher.submit(ThinkerRun(Workflow(), Triage(Workflow()), Note(INPUT)))
        await started.wait()
        assert admission.gate_for(catalog.pinned()).in_use == 1
        handle.cancel()
        with pytest.raises(asyncio.CancelledError):
            await handle.result()
        await asyncio.sleep(0)
        assert admission.gate_for(catalog.pinned()).in_use == 0
    assert {e.job.job_class for e in events} >= {"ThinkerRun", "DecisionCall"}


def test_the_constructor_runs_the_palette_validator() -> None:
    class Unnamed(DecisionTool[Note, Note]):
        async def execute(self, input: Note, context: JobContext) -> Note:
            return input

    class Illegal(DecisionThinker[Note, Verdict]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent,
                output_type=Verdict,
                key_tool=JudgeNote,
                palette=(Unnamed,),  # type: ignore[harness-name]
                objective=OBJECTIVE,
            )

    with pytest.raises(PaletteError, match=r"harness-name: Tool \"Unnamed\" has no @tool_name"):
        Illegal(Workflow())


async def test_a_directly_built_thinker_runs() -> None:
    thinker = DecisionThinker[Note, Verdict](
        Workflow(),
        output_type=Verdict,
        key_tool=JudgeNote,
        palette=(SplitNote,),
        objective=OBJECTIVE,
    )
    answer, _, _ = await run_thinker(thinker, Note(INPUT), FakeDecisionModel(triage_policy))
    assert [v.note for v in answer] == ["alpha is due"]


async def test_progress_says_failed_and_carries_every_turn_so_far() -> None:
    asked = [0]

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        asked[0] += 1
        answers = selection_answers(request)
        if "next" not in request.questions:
            return answers
        nxt = request.questions["next"]
        assert isinstance(nxt, Choice)
        for qid, question in request.questions.items():
            if qid.endswith("_input"):
                assert isinstance(question, Choice)
                answers[qid] = pick(question, next(iter(question.options)))
        wanted = "refuse_note" if asked[0] == 1 else "split_note"
        answers["next"] = pick(nxt, wanted if wanted in nxt.options else next(iter(nxt.options)))
        return answers

    thinker = SplitThenRefuse(Workflow())
    _, job, events = await run_thinker(thinker, Note(INPUT), FakeDecisionModel(policy))
    progress = [
        e for e in events if e.kind is EventKind.PROGRESS and e.job.job_id == job.identity.job_id
    ]
    assert progress[0].message == "turn 1: refuse_note on note#1 failed"
    assert progress[1].message == "turn 2: split_note on note#1"
    for number, event in enumerate(progress, 1):
        so_far = parse_turns(event.job.metadata[OBS_TURNS])
        assert [t.turn for t in so_far] == list(range(1, number + 1))
        assert list(so_far) == list(thinker.turns()[:number])


async def test_the_answer_is_registered_and_the_threshold_is_inclusive() -> None:
    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        answers = dict(triage_policy(request))
        for qid in request.questions:
            if qid.startswith("select_"):
                answers[qid] = NoulAnswer(0.5 if qid == "select_verdict#1" else 0.4999)
        return answers

    thinker = Triage(Workflow())
    answer, _, _ = await run_thinker(thinker, Note(INPUT), FakeDecisionModel(policy))
    assert [v.note for v in answer] == ["alpha is due"]
    assert answer in thinker.registry
    assert thinker.registry.ref(answer).startswith("list#")


@tool_name("nested_triage")
class NestedTriage(DecisionThinker[Note, Verdict]):
    """Runs the triage inside another thinker."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent, output_type=Verdict, key_tool=Triage, palette=(), objective="Run the triage"
        )


async def test_a_nested_thinker_hands_on_the_retry_budget() -> None:
    """The top run's budget of 0 reaches the nested thinker's decisions: one 503 there fails the
    nested run (on the default budget of 3 it would be re-run and succeed), which the outer run
    reads as its tool's readable failure."""
    failed = [False]

    def policy(request: DecisionRequest) -> Mapping[str, Answer]:
        if state_of(request)["objective"] == OBJECTIVE:
            if not failed[0]:
                failed[0] = True
                raise TransientError("HTTP 503: loading", status=503)
            return triage_policy(request)
        nxt = request.questions["next"]
        assert isinstance(nxt, Choice)
        answers = selection_answers(request)
        answers["next"] = pick(nxt, "triage" if "triage" in nxt.options else "finish")
        if "triage_input" in request.questions:
            answers["triage_input"] = pick(request.questions["triage_input"], "note#1")
        return answers

    outer = NestedTriage(Workflow())
    async with dispatcher_for(FakeDecisionModel(policy)) as dispatcher:
        answer = await dispatcher.run(
            ThinkerRun(Workflow(), outer, Note(INPUT), upstream_retries=0)
        )
    assert failed[0]
    assert len(answer) == 0
    first = outer.turns()[0]
    assert first.tool == "triage"
    assert first.failure is not None
    assert "retry budget (0)" in first.failure


def test_a_run_of_the_wrong_input_type_is_refused_naming_the_tool() -> None:
    with pytest.raises(TypeError, match="tool 'triage' takes a Note, not a Verdict"):
        ThinkerRun(Workflow(), Triage(Workflow()), Verdict("x", True))  # type: ignore[misc]


async def test_one_thinker_instance_runs_two_inputs_at_once_each_with_its_own_state() -> None:
    gate = asyncio.Event()

    async def slow(request: DecisionRequest) -> Mapping[str, Answer]:
        await gate.wait()
        return triage_policy(request)

    thinker = Triage(Workflow())
    other = "alpha ships; gamma waits; delta too"
    async with dispatcher_for(FakeDecisionModel(slow)) as dispatcher:
        first_job = ThinkerRun(Workflow(), thinker, Note(INPUT))
        second_job = ThinkerRun(Workflow(), thinker, Note(other))
        first = dispatcher.submit(first_job)
        await asyncio.sleep(0.01)
        second = dispatcher.submit(second_job)
        await asyncio.sleep(0.01)
        gate.set()
        answers = await asyncio.gather(first.result(), second.result())
    assert [v.note for v in answers[0]] == ["alpha is due"]
    assert [v.note for v in answers[1]] == ["alpha ships"]
    first_turns = parse_turns(first_job.metadata[OBS_TURNS])
    second_turns = parse_turns(second_job.metadata[OBS_TURNS])
    assert [t.tool for t in first_turns] == ["split_note", "judge_note", "judge_note", "finish"]
    assert [t.tool for t in second_turns][-1] == "finish"
    assert len(second_turns) == 5  # three parts judged: its own turns, not the first run's


def test_a_subclass_must_pass_the_output_type_it_declares() -> None:
    class Mismatch(DecisionThinker[Note, Note]):
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent,
                output_type=Verdict,  # type: ignore[arg-type]
                key_tool=JudgeNote,  # type: ignore[arg-type]
                palette=(),
                objective=OBJECTIVE,
            )

    with pytest.raises(ValueError, match=r"declares its answer as ListArtifact\[Note\]"):
        Mismatch(Workflow())


async def test_an_entrys_max_options_bounds_each_input_choice() -> None:
    model = FakeDecisionModel(triage_policy)
    entry = fake_catalog().pinned()
    catalog = Catalog([attrs.evolve(entry, max_options=3)], {"decision": entry.id})
    thinker = Triage(Workflow())
    async with Dispatcher(catalog, clients={"fake": model}, pacing=Pacing.immediate()) as d:
        answer = await d.run(ThinkerRun(Workflow(), thinker, Note(INPUT + "; gamma later")))
    second = model.requests[1].questions["judge_note_input"]
    assert isinstance(second, Choice)
    assert list(second.options) == ["note#1", "note#2", "note#3"]  # note#4 waits its turn
    third = model.requests[2].questions["judge_note_input"]
    assert isinstance(third, Choice)
    assert list(third.options) == ["note#1", "note#3", "note#4"]
    assert [t.tool for t in thinker.turns()] == [
        "split_note",
        "judge_note",
        "judge_note",
        "judge_note",
        "finish",
    ]
    assert [v.note for v in answer] == ["alpha is due"]

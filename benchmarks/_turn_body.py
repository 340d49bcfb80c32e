"""A thinker's first-turn request body over a world of a given size: what ``json_body.py`` writes
and reads.

The world is a list of ``Item`` artifacts and the list itself; the thinker (``max_turns = 1``)
has a palette of tools built at run time, every one taking an item, the last its key tool. One
turn runs through the dispatcher against the fake model, which picks the first tool on its first
candidate (a product not of the output type, so the run asks exactly one decision), and the body
the model was sent is returned: the state's digest, the moves and the candidates as questions.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Mapping

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, DecisionRequest, NoulAnswer
from harness.jobs import Dispatcher, JobContext, Pacing
from harness.providers import choose
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionThinker, ThinkerRun
from harness.tools import DecisionTool, Identifiable, Workflow, tool_name


@attrs.frozen
class Item(Artifact, alias="item"):
    """One artifact of the world."""

    text: str


@attrs.frozen
class Mark(Artifact, alias="mark"):
    """What the key tool produces (the thinker's output type)."""

    text: str


@attrs.frozen
class Note(Artifact, alias="note"):
    """What the other tools produce."""

    text: str


Tool = type[DecisionTool[Item, Artifact]]


def make_tool(index: int, output: type[Artifact]) -> Tool:
    """A real tool class built at run time: Item -> ListArtifact[output]."""

    async def execute(self: object, input: Item, context: JobContext) -> ListArtifact[Artifact]:
        return ListArtifact.of(output, [output(f"{input.text} seen by tool {index}")])  # type: ignore[call-arg]  # both take text

    cls = types.new_class(
        f"Tool{index}",
        (DecisionTool[Item, ListArtifact[output]],),  # type: ignore[valid-type]  # built at run time
        exec_body=lambda ns: ns.update(
            execute=execute, __doc__=f"Looks at an item (tool {index})."
        ),
    )
    named: Tool = tool_name(f"tool_{index}")(cls)
    return named


Factory = Callable[[Identifiable], DecisionThinker[ListArtifact[Item], Mark]]


def make_thinker(tools: int) -> Factory:
    """A ``max_turns = 1`` thinker over ``tools`` tools; the last is the key tool."""
    palette = tuple(make_tool(i, Note) for i in range(tools - 1))
    key = make_tool(tools - 1, Mark)

    def init(self: DecisionThinker[ListArtifact[Item], Mark], parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Mark,
            key_tool=key,  # type: ignore[arg-type]  # built at run time
            palette=palette,
            objective="Mark the items worth marking",
            max_turns=1,
        )

    thinker: Factory = types.new_class(
        "Bench",
        (DecisionThinker[ListArtifact[Item], Mark],),
        exec_body=lambda ns: ns.update(__init__=init),
    )
    return thinker


def first_tool(request: DecisionRequest) -> Mapping[str, Answer]:
    """The fake model: the first tool on its first candidate; every selection 0.9."""
    answers: dict[str, Answer] = {}
    for qid, question in request.questions.items():
        if isinstance(question, Choice):
            answers[qid] = choose(question, next(iter(question.options)))
        else:
            answers[qid] = NoulAnswer(0.9)
    return answers


ENTRY = CatalogEntry(
    id="bench",
    provider="fake",
    wire_model_id="bench-model",
    max_context_tokens=1_000_000_000,
    max_concurrent=4,
)


def world_of(size: int) -> ListArtifact[Item]:
    """A list whose adoption makes a world of ``size`` artifacts (the list and its items)."""
    return ListArtifact.of(Item, [Item(f"item number {i} of the world") for i in range(size - 1)])


async def _first_turn(thinker_class: Factory, world: ListArtifact[Item]) -> bytes:
    model = FakeDecisionModel(first_tool)
    catalog = Catalog([ENTRY], {"decision": ENTRY.id})
    async with Dispatcher(catalog, clients={ENTRY.id: model}, pacing=Pacing.immediate()) as d:
        await d.run(ThinkerRun(Workflow(), thinker_class(Workflow()), world))
    assert len(model.requests) == 1, "the run must ask exactly one decision"
    return model.bodies[0]


def first_turn_body(artifacts: int, tools: int = 5) -> bytes:
    """The wire body of the first turn over a world of ``artifacts`` artifacts and a palette of
    ``tools`` tools."""
    return asyncio.run(_first_turn(make_thinker(tools), world_of(artifacts)))

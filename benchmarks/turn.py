"""What one thinker turn costs the framework, by world size and palette size.

For worlds of 10, 100, 1,000 and 10,000 artifacts and palettes of 5 and 20 tools, with the fake
model answering at once, it times the framework's own work per turn split into:

- **request**: listing the legal moves and candidates, building the request (digest lines, the
  questions) and reading the answers back (``DecisionResponse`` readers);
- **pricing**: encoding the wire body and counting it under the entry's tokenizer;
- **rest**: everything else of a run through the dispatcher (the decision jobs, admission, the
  fake model's codec round trip, the record, the tool run, ``OBS_TURNS``, and the closing
  selection-only request that a ``max_turns = 1`` run asks after its one tool turn),

and prints the wire body's bytes and tokens. The baseline is that whole run, measured in the same
process (each part is printed as a share of it). A script, not a test::

    python benchmarks/turn.py [--sizes 10 100 1000 10000] [--tools 5 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import types
from collections.abc import Mapping
from typing import Any

import attrs

from harness.artifacts import Artifact, ArtifactRegistry, ListArtifact
from harness.deciding import DecisionThinker, ThinkerRun
from harness.decision import Answer, Choice, DecisionRequest, DecisionResponse, NoulAnswer
from harness.jobs import Dispatcher, JobContext, Pacing
from harness.llm import choose, wire_body
from harness.models import Catalog, CatalogEntry, tokenizer
from harness.testing import FakeDecisionModel
from harness.tools import DecisionTool, Identifiable, Workflow, tool_name


@attrs.frozen
class Item(Artifact, alias="item"):
    """One artifact of the world."""

    text: str


@attrs.frozen
class Mark(Artifact, alias="mark"):
    """What the tools produce (the thinker's output type)."""

    text: str


def make_tool(index: int) -> type[DecisionTool[Item, ListArtifact[Mark]]]:
    """A real tool class built at run time: Item -> ListArtifact[Mark]."""

    async def execute(self: object, input: Item, context: JobContext) -> ListArtifact[Mark]:
        return ListArtifact.of(Mark, [Mark(f"{input.text} marked by tool {index}")])

    cls = types.new_class(
        f"Tool{index}",
        (DecisionTool[Item, ListArtifact[Mark]],),
        exec_body=lambda ns: ns.update(execute=execute, __doc__=f"Marks an item (tool {index})."),
    )
    return tool_name(f"tool_{index}")(cls)


def make_thinker(tools: list[type[DecisionTool[Item, ListArtifact[Mark]]]]) -> type[Any]:
    """A thinker class over ``tools`` (the last one is the key tool)."""

    def init(self: DecisionThinker[Item, Mark], parent: Identifiable) -> None:
        DecisionThinker.__init__(
            self,
            parent,
            output_type=Mark,
            key_tool=tools[-1],
            palette=tuple(tools[:-1]),
            objective="Mark the items worth marking",
            max_turns=1,
        )

    return types.new_class(
        "Bench",
        (DecisionThinker[ListArtifact[Item], Mark],),
        exec_body=lambda ns: ns.update(__init__=init),
    )


def first_move(request: DecisionRequest) -> Mapping[str, Answer]:
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


async def whole_turn(thinker: DecisionThinker[Any, Mark], world: ListArtifact[Item]) -> float:
    """Seconds for a run of one tool turn and the closing selection-only request."""
    model = FakeDecisionModel(first_move)
    catalog = Catalog([ENTRY], {"decision": ENTRY.id})
    async with Dispatcher(catalog, clients={ENTRY.id: model}, pacing=Pacing.immediate()) as d:
        started = time.perf_counter()
        await d.run(ThinkerRun(Workflow(), thinker, world))
        elapsed = time.perf_counter() - started
    return elapsed


def parts(thinker: DecisionThinker[Any, Mark], world: ListArtifact[Item]) -> tuple[float, ...]:
    """Seconds for building/reading the request and for pricing it, and the body's size."""
    registry = ArtifactRegistry()
    registry.adopt(world)
    started = time.perf_counter()
    moves = thinker._moves(registry, set())
    candidates = thinker._candidates(registry, world)
    request = thinker._request(registry, [], moves, candidates)
    answers = first_move(request)
    response = DecisionResponse(request, answers, 0, "bench-model", None, 0.0, None)
    chosen = response.choice("next").choice
    response.choice(f"{chosen}_input")
    thinker._selection(response, candidates)
    built = time.perf_counter()
    body = wire_body(request, ENTRY)
    tokens = tokenizer(ENTRY.tokenizer).count(body)
    priced = time.perf_counter()
    return built - started, priced - built, float(len(body)), float(tokens)


def main() -> None:
    """Measure every (world size, palette size) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--tools", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(
        f"{'world':>6} {'tools':>5} {'run ms':>9} {'request':>9} {'pricing':>9} {'rest':>9}"
        f" {'body KB':>9} {'tokens':>9}"
    )
    for tools in options.tools:
        thinker_class = make_thinker([make_tool(i) for i in range(tools)])
        for size in options.sizes:
            world = world_of(size)
            turn = min(
                asyncio.run(whole_turn(thinker_class(Workflow()), world))
                for _ in range(options.repeat)
            )
            measured = [parts(thinker_class(Workflow()), world) for _ in range(options.repeat)]
            request = min(m[0] for m in measured)
            pricing = min(m[1] for m in measured)
            body, tokens = measured[0][2], measured[0][3]
            rest = max(0.0, turn - request - pricing)
            print(
                f"{size:>6} {tools:>5} {turn * 1000:>9.2f} {request / turn:>8.0%} "
                f"{pricing / turn:>8.0%} {rest / turn:>8.0%} {body / 1024:>9.1f} {tokens:>9.0f}"
            )


if __name__ == "__main__":
    main()

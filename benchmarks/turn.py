"""What one thinker turn costs the framework, by world size and palette size, against what the
embedded model takes on that turn's own request.

For worlds of 10, 50, 100, 1,000 and 10,000 artifacts and palettes of 5 and 20 tools, one tool
turn runs through the dispatcher against the fake model answering at once (a ``max_turns = 1``
thinker whose model picks a tool producing nothing of the output type, so the run asks exactly
one decision and finishes without asking again). Printed per turn, in milliseconds:

- **turn**: the whole turn, wall time, minus the fake model's own time (its policy and codec);
- **request**: building the request (moves, candidates, digest lines, questions) and reading the
  answers back, measured on the same world outside the run;
- **tok. cold**: counting the wire body under ``cl100k_base`` with an empty count cache (the
  first turn of a process);
- **tok. warm**: counting it after the body of a world one artifact smaller was counted (a later
  turn: what is new is one digest line, its options and the closing parts);
- **rest**: the turn minus request and the warm count (encoding, jobs, admission, the record,
  the tool run, ``OBS_TURNS``);
- **model**: sparrow-decider's own time on the turn's request (its wire state and questions,
  asked directly, best of ``--model-repeat``), and **share**: the turn over the model's time;

and the wire body's kilobytes and tokens, and per size the body with the most tools over the
body with the fewest. Targets: the turn (framework and tokenizer) at most 0.05 of the
model's time at every size measured; at 1,000 artifacts the body with 20 tools at most 1.2 x
the body with 5. ``--scheme`` picks the question scheme (``lean``, the default, or ``verbose``).
A script, not a test::

    python benchmarks/turn.py [--sizes 10 50 100 1000] [--tools 5 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import types
from collections.abc import Callable, Mapping

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.catalog import Catalog, CatalogEntry, load_tokenizer, tokenizer
from harness.decision import Answer, Choice, DecisionRequest, DecisionResponse, NoulAnswer
from harness.jobs import Dispatcher, JobContext, Pacing
from harness.providers import choose
from harness.testing import FakeDecisionModel
from harness.thinker import DecisionThinker, ThinkerRun
from harness.thinker._scheme import QuestionScheme, check_scheme
from harness.thinker._world import RunWorld
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


def make_thinker(tools: int, scheme: QuestionScheme = "lean") -> Factory:
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
            question_scheme=scheme,
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


class TimedModel:
    """The fake model, with the time spent in it (its policy and its codec) added up."""

    def __init__(self) -> None:
        self.inner = FakeDecisionModel(first_tool)
        self.seconds = 0.0

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        started = time.perf_counter()
        try:
            return await self.inner.decide(request, entry, timeout=timeout)
        finally:
            self.seconds += time.perf_counter() - started

    async def aclose(self) -> None:
        await self.inner.aclose()


def world_of(size: int) -> ListArtifact[Item]:
    """A list whose adoption makes a world of ``size`` artifacts (the list and its items)."""
    return ListArtifact.of(Item, [Item(f"item number {i} of the world") for i in range(size - 1)])


async def one_turn(
    thinker_class: Factory,
    world: ListArtifact[Item],
    repeat: int,
) -> tuple[float, bytes]:
    """The best wall time of one turn minus the model's time, and the body the model got."""
    best = float("inf")
    body = b""
    catalog = Catalog([ENTRY], {"decision": ENTRY.id})
    for _ in range(repeat):
        model = TimedModel()
        async with Dispatcher(catalog, clients={ENTRY.id: model}, pacing=Pacing.immediate()) as d:
            thinker = thinker_class(Workflow())
            started = time.perf_counter()
            await d.run(ThinkerRun(Workflow(), thinker, world))
            elapsed = time.perf_counter() - started - model.seconds
        assert len(model.inner.requests) == 1, "the benchmark's run must ask exactly one decision"
        best = min(best, elapsed)
        body = model.inner.bodies[0]
    return best, body


def request_time(
    thinker_class: Factory,
    world: ListArtifact[Item],
    repeat: int,
) -> float:
    """The best time to build the first turn's request and read its answers back."""
    build = read = float("inf")
    for _ in range(repeat):
        thinker = thinker_class(Workflow())
        started = time.perf_counter()
        run_world = RunWorld(world, thinker._providers, Mark, thinker.formatters)
        moves = thinker._moves(run_world)
        candidates = thinker._candidates(run_world)
        request = thinker._request(run_world, [], moves, candidates)
        build = min(build, time.perf_counter() - started)
        answers = first_tool(request)  # the fake model's part: not timed
        started = time.perf_counter()
        response = DecisionResponse(request, answers, 0, "bench-model", None, 0.0, None)
        chosen = response.choice("next").choice
        response.choice(f"{chosen}_input")
        thinker._selection(response, candidates)
        read = min(read, time.perf_counter() - started)
    return build + read


def count_time(body: bytes, smaller: bytes, repeat: int) -> tuple[float, float, int]:
    """The best time to count ``body`` under the entry's tokenizer with an empty count cache,
    and after ``smaller`` (the body of a world one artifact smaller) was counted; the count."""
    cold = warm = float("inf")
    tokens = 0
    for _ in range(repeat):
        fresh = load_tokenizer(ENTRY.tokenizer)
        started = time.perf_counter()
        tokens = fresh.count(body)
        cold = min(cold, time.perf_counter() - started)
        fresh = load_tokenizer(ENTRY.tokenizer)
        fresh.count(smaller)
        started = time.perf_counter()
        fresh.count(body)
        warm = min(warm, time.perf_counter() - started)
    if tokens != tokenizer(ENTRY.tokenizer).count_uncached(body):
        raise SystemExit("the cached count differs from a whole count: the figures are void")
    return cold, warm, tokens


def model_time(body: bytes, repeat: int, most: int) -> tuple[float, bool]:
    """sparrow-decider's best time on the request ``body`` carries (its own state and
    questions, asked directly, in this thread), and whether it is extrapolated: past ``most``
    questions the first ``most`` are asked and the time scaled by the question count (sparrow
    answers each question apart, reading the whole state each time, so its time is close to
    linear in the questions)."""
    import sparrow_decider

    model = sparrow_decider.Decider.load()
    wire = json.loads(body)
    questions = dict(list(wire["questions"].items())[:most])
    scale = len(wire["questions"]) / len(questions)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        model.ask(wire["state"], questions)
        best = min(best, time.perf_counter() - started)
    return best * scale, scale != 1


def main() -> None:
    """Measure every (world size, palette size) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 1000])
    parser.add_argument("--tools", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model-repeat", type=int, default=2)
    parser.add_argument(
        "--model-questions", type=int, default=6, help="questions asked of the model at most"
    )
    parser.add_argument("--scheme", default="lean")
    options = parser.parse_args()
    scheme = check_scheme(options.scheme)
    print(f"question scheme: {scheme}")
    print(
        f"{'world':>6} {'tools':>5} {'turn ms':>8} {'request':>8} {'tok.cold':>8} "
        f"{'tok.warm':>8} {'rest':>7} {'body KB':>8} {'tokens':>9} {'model ms':>9} {'share':>6}"
    )
    sizes: dict[tuple[int, int], int] = {}
    shares: list[float] = []
    for tools in options.tools:
        thinker_class = make_thinker(tools, scheme)
        for size in options.sizes:
            world = world_of(size)
            repeat = max(1, options.repeat if size <= 1000 else 1)
            turn, body = asyncio.run(one_turn(thinker_class, world, repeat))
            _, smaller = asyncio.run(one_turn(thinker_class, world_of(size - 1), 1))
            request = request_time(thinker_class, world, repeat)
            cold, warm, tokens = count_time(body, smaller, repeat)
            rest = max(0.0, turn - request - warm)
            model, scaled = model_time(body, options.model_repeat, options.model_questions)
            share = turn / model
            shares.append(share)
            sizes[size, tools] = len(body)
            print(
                f"{size:>6} {tools:>5} {turn * 1e3:>8.3f} {request * 1e3:>8.3f} "
                f"{cold * 1e3:>8.3f} {warm * 1e3:>8.3f} {rest * 1e3:>7.3f} "
                f"{len(body) / 1024:>8.1f} {tokens:>9} {model * 1e3:>8.1f}{'*' if scaled else ' '} "
                f"{share:>6.3f}"
            )
    fewest, most = min(options.tools), max(options.tools)
    for size in options.sizes:
        if fewest != most:
            ratio = sizes[size, most] / sizes[size, fewest]
            met = "meets" if ratio <= 1.2 or size != 1000 else "misses"
            print(f"body at {size} artifacts, {most} tools / {fewest} tools: {ratio:.2f} ({met})")
    print("* the model asked the first questions only, its time scaled by the question count")
    worst = max(shares)
    print(
        f"turn / model time, worst over the sizes: {worst:.3f} "
        f"({'meets' if worst <= 0.05 else 'misses'} <= 0.05)"
    )


if __name__ == "__main__":
    main()

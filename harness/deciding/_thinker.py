"""The decision thinker: code lists the legal moves, the model only ranks them.

One turn, top to bottom (the seed page is the specification):

1. the world is the run's registry, in the order things came to be;
2. the legal moves are each palette tool (palette order) on each artifact of its input type (world
   order) whose pair has not run; the output candidates are the artifacts of the output type,
   never the input;
3. one request asks everything at once: ``next`` (the tools, plus ``finish`` once a candidate
   exists), ``<tool>_input`` per offered tool, ``select_<ref>`` per candidate;
4. the model's ``next`` either runs a tool on its chosen input (a readable failure is a fact of
   the run, anything else fails it) or finishes with the candidates selected at the threshold.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, Never, TypeVar

import attrs

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    ListArtifact,
    TextFormatterRegistry,
    conforms,
    digest_line,
    digest_words,
)
from harness.deciding._call import DecisionCall
from harness.deciding._tool_run import ToolRun
from harness.deciding._turn import FINISH, OBS_TURNS, DecisionTurn, turns_json
from harness.decision import Choice, DecisionRequest, DecisionResponse, Noul, Question
from harness.errors import LLMReadableError
from harness.palette import thinker_input_of, validate_palette
from harness.tools import ClassToolProvider, DecisionTool, Identifiable, runtime_class

if TYPE_CHECKING:
    from harness.jobs import JobContext

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_SELECTION_THRESHOLD", "DecisionThinker"]

DEFAULT_MAX_TURNS: Final = 32
DEFAULT_SELECTION_THRESHOLD: Final = 0.5

log = logging.getLogger("harness.thinker")

I_contra = TypeVar("I_contra", bound=Artifact, contravariant=True)
O = TypeVar("O", bound=Artifact)  # noqa: E741 - the seed names the output type O


@attrs.frozen
class _Move:
    """An offered tool and its candidate inputs (refs in world order)."""

    provider: ClassToolProvider[Never, Artifact]
    candidates: tuple[str, ...]


class DecisionThinker(DecisionTool[I_contra, ListArtifact[O]], Generic[I_contra, O]):
    """An agent loop over a typed palette, one decision per turn.

    Subclass it with the ``(parent)`` constructor so it is itself a tool::

        @tool_name("triage")
        class Triage(DecisionThinker[Note, Verdict]):
            def __init__(self, parent: Identifiable) -> None:
                super().__init__(parent, output_type=Verdict, key_tool=JudgeNote,
                                 palette=(SplitNote,), objective="Keep the verdicts worth keeping")

    The key tool is folded into the palette after the others, once. The answer is the
    candidates selected at ``selection_threshold`` or above, in world order, as a
    ``ListArtifact[O]`` whose instruction is the objective.
    """

    def __init__(
        self,
        parent: Identifiable,
        *,
        output_type: type[O],
        key_tool: type[DecisionTool[Never, ListArtifact[O]]],
        palette: tuple[type[DecisionTool[Never, Artifact]], ...],
        objective: str,
        max_turns: int = DEFAULT_MAX_TURNS,
        selection_threshold: float = DEFAULT_SELECTION_THRESHOLD,
        formatters: TextFormatterRegistry | None = None,
    ) -> None:
        super().__init__(parent)
        _require(output_type, "output_type", "the artifact class of the answer's items")
        _require(key_tool, "key_tool", "the tool producing ListArtifact[O]")
        _require(palette, "palette", "a tuple of tool classes (it may be empty)")
        if not isinstance(objective, str) or not objective.strip():
            raise ValueError("objective must be a non-blank string: say what the run is for")
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be an integer >= 1, got {max_turns!r}")
        if not 0.0 <= selection_threshold <= 1.0:
            raise ValueError(f"selection_threshold must be in [0, 1], got {selection_threshold!r}")
        _validate(type(self), output_type, key_tool, tuple(palette))
        folded = [cls for cls in palette if cls is not key_tool]
        folded.append(key_tool)  # the key tool comes after the others, once
        self.output_type = output_type
        self.key_tool = key_tool
        self.palette: tuple[type[DecisionTool[Never, Artifact]], ...] = tuple(folded)
        self.objective = objective
        self.max_turns = max_turns
        self.selection_threshold = selection_threshold
        self.formatters = formatters if formatters is not None else TextFormatterRegistry()
        self._providers = tuple(ClassToolProvider(cls) for cls in self.palette)
        self._turns: list[DecisionTurn] = []
        self.registry = ArtifactRegistry()

    def turns(self) -> tuple[DecisionTurn, ...]:
        """The turns of the last run (complete once the run returns)."""
        return tuple(self._turns)

    # -- the loop --------------------------------------------------------------------------

    async def execute(self, input: I_contra, context: JobContext) -> ListArtifact[O]:
        """Run the loop on ``input`` until the model finishes, the moves run out or the budget
        is spent."""
        self.registry = world = ArtifactRegistry()
        self._turns = []
        world.adopt(input)
        spent: set[tuple[str, str]] = set()
        done: list[str] = []
        tools = {p.name: p for p in self._providers}
        while True:
            moves = self._moves(world, spent)
            candidates = self._candidates(world, input)
            number = len(self._turns) + 1
            if not candidates and (not moves or number > self.max_turns):
                return self._finish(context, world, number, None, {}, ())
            if not moves or number > self.max_turns:
                request = self._request(world, done, (), candidates)
                response = await self._decide(context, request)
                selection = self._selection(response, candidates)
                return self._finish(context, world, number, None, selection, candidates)
            request = self._request(world, done, moves, candidates)
            response = await self._decide(context, request)
            chosen = response.choice("next")
            if chosen.choice == FINISH:
                selection = self._selection(response, candidates)
                return self._finish(
                    context, world, number, chosen.probabilities, selection, candidates
                )
            provider = tools[chosen.choice]
            argument = response.choice(f"{provider.name}_input")
            ref = argument.choice
            spent.add((provider.name, ref))
            turn, line = await self._run_tool(context, world, number, provider, ref)
            self._turns.append(
                attrs.evolve(turn, next=chosen.probabilities, argument=argument.probabilities)
            )
            done.append(line)
            self._publish(context)
            context.progress(
                f"turn {number}: {provider.name} on {ref}" + (" failed" if turn.failure else "")
            )

    def _moves(self, world: ArtifactRegistry, spent: set[tuple[str, str]]) -> tuple[_Move, ...]:
        moves = []
        entries = world.world()
        for provider in self._providers:
            takes = provider.input_type
            takes_list = issubclass(runtime_class(takes), ListArtifact)
            refs = tuple(
                ref
                for ref, artifact in entries
                if (provider.name, ref) not in spent
                and (takes_list or not isinstance(artifact, ListArtifact))
                and conforms(artifact, takes)
            )
            if refs:
                moves.append(_Move(provider, refs))
        return tuple(moves)

    def _candidates(self, world: ArtifactRegistry, input: Artifact) -> tuple[str, ...]:
        return tuple(
            ref
            for ref, artifact in world.world()
            if artifact is not input and isinstance(artifact, self.output_type)
        )

    def _request(
        self,
        world: ArtifactRegistry,
        done: Sequence[str],
        moves: Sequence[_Move],
        candidates: Sequence[str],
    ) -> DecisionRequest:
        state = {
            "objective": self.objective,
            "artifacts": [digest_line(ref, a, self.formatters) for ref, a in world.world()],
            "done": list(done) if done else ["nothing yet"],
        }
        questions: dict[str, Question] = {}
        if moves:
            options: dict[str, str | None] = {}
            for move in moves:
                count = len(move.candidates)
                options[move.provider.name] = (
                    f"{move.provider.description} ({count} "
                    f"{'artifact' if count == 1 else 'artifacts'} it could take)"
                )
            if candidates:
                options[FINISH] = "stop here and answer with the artifacts selected below"
            questions["next"] = Choice("Which move brings the objective closer?", options)
            for move in moves:
                questions[f"{move.provider.name}_input"] = Choice(
                    f"If {move.provider.name} runs, which artifact should it take?",
                    {
                        ref: digest_line(ref, world.get(ref), self.formatters)
                        for ref in move.candidates
                    },
                )
        for ref in candidates:
            words = digest_words(world.get(ref), self.formatters)
            questions[f"select_{ref}"] = Noul(
                f"Does {ref} belong in the answer to the objective? {ref}: {words}",
                when_true=f"{ref} belongs in the answer",
                when_false=f"{ref} does not belong in the answer",
            )
        return DecisionRequest(state, questions)

    async def _decide(self, context: JobContext, request: DecisionRequest) -> DecisionResponse:
        call = DecisionCall(context, request, upstream_retries=context.upstream_retries)
        return await context.run(call)

    def _selection(self, response: DecisionResponse, candidates: Sequence[str]) -> dict[str, float]:
        return {ref: response.noul(f"select_{ref}").probability for ref in candidates}

    async def _run_tool(
        self,
        context: JobContext,
        world: ArtifactRegistry,
        number: int,
        provider: ClassToolProvider[Never, Artifact],
        ref: str,
    ) -> tuple[DecisionTurn, str]:
        tool: DecisionTool[Any, Artifact] = provider.create(context)  # typed by the palette rules
        job = ToolRun(
            context,
            tool,
            world.get(ref),
            name=provider.name,
            upstream_retries=context.upstream_retries,
        )
        try:
            product = await context.run(job)
        except LLMReadableError as failure:
            if failure.correctable:
                log.info("%s on %s: %s", provider.name, ref, failure.message)
            else:
                log.warning("%s on %s failed", provider.name, ref, exc_info=failure)
            turn = DecisionTurn(number, None, provider.name, artifact=ref, failure=failure.message)
            return turn, f"{provider.name} on {ref} failed: {failure.message}"
        result = world.adopt(product)
        turn = DecisionTurn(number, None, provider.name, artifact=ref, result=result)
        return turn, f"{provider.name} on {ref} produced {result}"

    def _finish(
        self,
        context: JobContext,
        world: ArtifactRegistry,
        number: int,
        next_: Mapping[str, float] | None,
        selection: dict[str, float],
        candidates: Sequence[str],
    ) -> ListArtifact[O]:
        chosen: list[O] = []
        for ref in candidates:
            artifact = world.get(ref)
            if selection.get(ref, 0.0) >= self.selection_threshold and isinstance(
                artifact, self.output_type
            ):
                chosen.append(artifact)
        answer = ListArtifact(self.output_type, tuple(chosen), self.objective)
        world.adopt(answer)
        self._turns.append(DecisionTurn(number, next_, FINISH, selection=selection))
        self._publish(context)
        return answer

    def _publish(self, context: JobContext) -> None:
        context.metadata[OBS_TURNS] = turns_json(self._turns)


_LEGAL: set[tuple[object, ...]] = set()  # palettes already proved legal, by thinker class


def _validate(thinker: type, output_type: type, key_tool: type, palette: tuple[type, ...]) -> None:
    """The runtime palette validator (the mypy plugin's verdicts, for every type checker),
    once per thinker class and palette."""
    key: tuple[object, ...] = (thinker, output_type, key_tool, palette)
    if key in _LEGAL:
        return
    validate_palette(
        thinker_input=thinker_input_of(thinker),
        output_type=output_type,
        key_tool=key_tool,
        palette=palette,
    )
    if len(_LEGAL) < 4096:
        _LEGAL.add(key)


def _require(value: object, name: str, what: str) -> None:
    if value is None:
        raise ValueError(f"{name} is required: pass {what}")


def parse_turns(text: str) -> tuple[DecisionTurn, ...]:
    """Read ``OBS_TURNS`` back into turns."""
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("OBS_TURNS holds a JSON list of turns")
    return tuple(DecisionTurn.from_json(item) for item in data)

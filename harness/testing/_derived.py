"""What the invariants re-derive from a run's inputs, independently of the thinker's loop.

The legal moves, the output candidates and the legal pairs come from the palette and a world
(:class:`Rules`); the world a request must show comes from the turns before it (the input and
what each earlier move produced, :meth:`Rules.seen_at`), never from the length of the state
the thinker sent; what each move's tool makes of its recorded artifact comes from running it
again (:mod:`harness.testing._rerun`). The checks in ``_request_rules`` and ``_run_rules``
compare the run's record and wire with these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Never

from harness.artifacts import Artifact, ListArtifact, conforms
from harness.decision import Answer, ChoiceAnswer, NoulAnswer, RefusedAnswer
from harness.testing._run_facts import RunReport, given_with
from harness.tools import ClassToolProvider, runtime_class

__all__ = [
    "REFUSED",
    "STATE_KEYS",
    "Rules",
    "SeenWorld",
    "choice_of",
    "given_with",
    "selection_of",
    "takes",
]

SeenWorld = Sequence[tuple[str, Artifact]]
"""The world as one decision saw it: a run's recorded world or a prefix of it (what a request
must show, what the last decision saw before the answer was adopted), ``(ref, artifact)`` pairs
in the order things came to be."""

STATE_KEYS: Final = ("objective", "artifacts", "done")
"""The documented keys of a request's state, in order (ARCHITECTURE.md section 8)."""

REFUSED: Final = 0.0
"""What a refused selection counts as on the record (the documented contract): probability 0,
and it selects nothing, at any threshold."""

MISSING: Final = -1.0
"""What a selection the response did not answer at all counts as: never selected."""


def takes(provider: ClassToolProvider[Never, Artifact], artifact: Artifact) -> bool:
    """Whether ``provider``'s tool takes ``artifact`` (a list only when it takes a list)."""
    takes_list = issubclass(runtime_class(provider.input_type), ListArtifact)
    if isinstance(artifact, ListArtifact) and not takes_list:
        return False
    return conforms(artifact, provider.input_type)


def choice_of(answer: Answer | None) -> ChoiceAnswer | None:
    """``answer`` when it is a choice."""
    return answer if isinstance(answer, ChoiceAnswer) else None


def selection_of(answer: Answer | None) -> tuple[float, bool]:
    """A selection question's answer as the contract reads it: (probability recorded, whether
    it can select). A refusal is recorded as :data:`REFUSED` and never selects."""
    if isinstance(answer, NoulAnswer):
        return answer.probability, True
    if isinstance(answer, RefusedAnswer):
        return REFUSED, False
    return MISSING, False


class Rules:
    """The moves and candidates the spec allows, recomputed from the palette and a world."""

    def __init__(self, report: RunReport) -> None:
        self.report = report
        self.thinker = report.thinker
        self.input = report.input
        self.given = given_with(report.input)
        self.providers = [ClassToolProvider(cls) for cls in report.thinker.palette]

    def moves(self, world: SeenWorld, spent: set[tuple[str, str]]) -> dict[str, list[str]]:
        """Each tool's legal inputs in world order, the spent pairs left out."""
        moves: dict[str, list[str]] = {}
        for provider in self.providers:
            refs = [
                ref for ref, a in world if (provider.name, ref) not in spent and takes(provider, a)
            ]
            if refs:
                moves[provider.name] = refs
        return moves

    def offered(self, refs: Sequence[str]) -> list[str]:
        """What an input choice offers of ``refs``: the first ``max_options`` when the run's
        entry states one (the rest stay legal and come up as these are spent)."""
        limit = self.report.max_options
        return list(refs) if limit is None else list(refs[:limit])

    def candidates(self, world: SeenWorld) -> list[str]:
        """The output candidates: what tools produced of the output type."""
        output = self.thinker.output_type
        return [ref for ref, a in world if id(a) not in self.given and isinstance(a, output)]

    def legal_pairs(self, world: SeenWorld) -> int:
        """How many (tool, artifact) pairs the world holds."""
        return sum(1 for p in self.providers for _, a in world if takes(p, a))

    def seen_at(self, number: int) -> SeenWorld:
        """The world request ``number`` must show: the input and its items, then the product
        (with its items) of every move before it, in the order the world registered them.

        Derived from the turns and the registered world, not from the request's own state: a
        state that leaves out the last lines is short, never "an earlier world"."""
        world = self.report.world
        wanted = set(self.given)
        refs = {ref: a for ref, a in world}
        for turn in self.report.turns[: number - 1]:
            product = refs.get(turn.result or "")
            if product is not None:
                wanted |= given_with(product)
        last = max((i for i, (_, a) in enumerate(world) if id(a) in wanted), default=-1)
        return world[: last + 1]

    def refs(self, refs: Iterable[str]) -> str:
        """Refs as text, the input's marked as such."""
        return self.report.describe_refs(refs)

    def ref(self, ref: str | None) -> str:
        """A ref as text, the input's marked as such."""
        return self.report.describe_ref(ref) if ref is not None else "nothing"

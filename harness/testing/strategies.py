"""Hypothesis strategies for property-testing decision thinkers and palettes.

* :func:`kind_specs` / :func:`artifact_kinds`: artifact type hierarchies, built as real ``attrs``
  frozen classes at run time (subclasses included), each kind with its own alias;
* :func:`scenario_specs` / :func:`scenarios`: a whole run to try: kinds, a legal palette over
  them (every tool reachable from the input, list-making tools, tools that refuse some inputs
  readably or crash on some unreadably), the key tool, the output kind, an input, the thinker's
  ``max_turns`` and threshold, and a policy seed;
* :func:`policies`: fake-model policies whose every answer is a hypothesis draw, so a failing
  run shrinks to the smallest; :func:`seeded_policy` the same answers from a seed.

Sizes are bounded (at most 4 kinds, 4 palette tools, 8 turns, 3 items a list) so a run takes
milliseconds. Check a thinker subclass of your own over them with
:func:`harness.testing.invariants.assert_invariants`::

    @given(scenarios(), policies())
    def test_my_loop(scenario, policy):
        asyncio.run(assert_invariants(scenario.thinker(Workflow()), scenario.input, policy))
"""

from __future__ import annotations

import random
import types
from collections.abc import Sequence
from typing import Any, Final, Never, cast

import attrs
from hypothesis import strategies as st

from harness.artifacts import Artifact, ListArtifact
from harness.testing._policy import CHOICE_PROBABILITIES as CHOICE_PROBABILITIES
from harness.testing._policy import SELECTION_PROBABILITIES as SELECTION_PROBABILITIES
from harness.testing._policy import RandomPolicy as RandomPolicy
from harness.testing._scenario import MAX_ITEMS as MAX_ITEMS
from harness.testing._scenario import SCENARIO_OBJECTIVE as SCENARIO_OBJECTIVE
from harness.testing._scenario import VOCABULARY as VOCABULARY
from harness.testing._scenario import KindSpec as KindSpec
from harness.testing._scenario import PlantedCrash as PlantedCrash
from harness.testing._scenario import ScenarioSpec as ScenarioSpec
from harness.testing._scenario import ToolSpec as ToolSpec
from harness.testing._scenario import TypeSpec as TypeSpec
from harness.testing._scenario import build_kinds as build_kinds
from harness.testing._scenario import build_tool, runtime_type
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable

__all__ = [
    "ALIASES",
    "CHOICE_PROBABILITIES",
    "MAX_ITEMS",
    "SCENARIO_OBJECTIVE",
    "SELECTION_PROBABILITIES",
    "THRESHOLDS",
    "TOOL_NAMES",
    "VOCABULARY",
    "KindSpec",
    "PlantedCrash",
    "RandomPolicy",
    "Scenario",
    "ScenarioSpec",
    "ToolSpec",
    "TypeSpec",
    "artifact_kinds",
    "build_kinds",
    "build_scenario",
    "kind_specs",
    "policies",
    "scenario_specs",
    "scenarios",
    "seeded_policy",
]

ALIASES: Final = ("memo", "ticket", "clause", "figure", "remark", "entry")
"""The aliases generated kinds take (unique within a scenario)."""

TOOL_NAMES: Final = ("split", "judge", "merge", "rank", "extract", "expand", "tag", "sort")
"""The names generated tools take (unique within a palette)."""

THRESHOLDS: Final = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The selection thresholds drawn: the edges a :class:`RandomPolicy`'s answers hit exactly."""


@attrs.frozen(repr=False)
class Scenario:
    """A scenario built: real classes, the input artifact, and what the thinker needs.

    Build the thinker with :meth:`thinker`, the seeded model policy with :meth:`policy`;
    ``spec`` is the data it was built from (JSON with ``spec.to_json()``).
    """

    spec: ScenarioSpec
    kinds: tuple[type[Artifact], ...]
    palette: tuple[type[DecisionTool[Never, Artifact]], ...]
    key_tool: type[DecisionTool[Never, ListArtifact[Artifact]]]
    output_type: type[Artifact]
    input: Artifact

    @property
    def max_turns(self) -> int:
        """The thinker's turn budget."""
        return self.spec.max_turns

    @property
    def threshold(self) -> float:
        """The thinker's selection threshold."""
        return self.spec.threshold

    @property
    def policy_seed(self) -> int:
        """The seed of :meth:`policy`."""
        return self.spec.policy_seed

    def thinker(
        self,
        parent: Identifiable,
        *,
        thinker_class: type[DecisionThinker[Any, Any]] = DecisionThinker,  # any thinker class
    ) -> DecisionThinker[Artifact, Artifact]:
        """A thinker over the scenario's palette: an instance of a subclass of
        ``thinker_class`` (parameterised with the scenario's input and output types when it is
        generic) with the ``(parent)`` constructor, as a user's thinker is."""
        spec = self.spec
        arguments: dict[str, object] = {
            "output_type": self.output_type,
            "key_tool": self.key_tool,
            "palette": self.palette,
            "objective": SCENARIO_OBJECTIVE,
            "max_turns": spec.max_turns,
            "selection_threshold": spec.threshold,
        }
        base: object = thinker_class
        if getattr(thinker_class, "__parameters__", ()):
            base = cast(Any, thinker_class)[
                runtime_type(spec.input_type, self.kinds), self.output_type
            ]

        def __init__(self: DecisionThinker[Any, Any], parent: Identifiable) -> None:
            thinker_class.__init__(self, parent, **arguments)  # type: ignore[arg-type]  # checked by the thinker

        body = {"__init__": __init__, "__module__": __name__, "__qualname__": "ScenarioThinker"}
        cls = types.new_class("ScenarioThinker", (base,), {}, lambda ns: ns.update(body))
        return cast("DecisionThinker[Artifact, Artifact]", cls(parent))

    def policy(self) -> RandomPolicy:
        """A fresh policy answering from the scenario's seed: the same run every time."""
        return seeded_policy(self.spec.policy_seed)

    def __repr__(self) -> str:
        indented = self.spec.describe().replace("\n", "\n  ")
        return f"Scenario(\n  {indented}\n)"


def build_scenario(spec: ScenarioSpec) -> Scenario:
    """The classes, tools and input a spec describes (fresh classes on every call)."""
    kinds = build_kinds(spec.kinds)
    tools: dict[str, type[DecisionTool[Never, Artifact]]] = {}
    for tool in (*spec.palette, spec.key_tool):
        if tool.name not in tools:
            tools[tool.name] = build_tool(tool, kinds)
    make = cast(Any, kinds[spec.input_type.kind])  # a generated kind: text=...
    if spec.input_type.is_list:
        items = [make(text=text) for text in spec.input_texts]
        input_artifact: Artifact = ListArtifact.of(kinds[spec.input_type.kind], items)
    else:
        input_artifact = make(text=spec.input_texts[0] if spec.input_texts else "")
    key_tool = cast("type[DecisionTool[Never, ListArtifact[Artifact]]]", tools[spec.key_tool.name])
    return Scenario(
        spec=spec,
        kinds=kinds,
        palette=tuple(tools[tool.name] for tool in spec.palette),
        key_tool=key_tool,
        output_type=kinds[spec.output_kind],
        input=input_artifact,
    )


def seeded_policy(seed: int) -> RandomPolicy:
    """A policy answering from ``random.Random(seed)``: the same answers in every process."""
    return RandomPolicy(random.Random(seed), label=f"seed {seed}")


def policies() -> st.SearchStrategy[RandomPolicy]:
    """Policies whose every answer (each choice, probability and selection) is a hypothesis
    draw made as the run asks, so shrinking finds the shortest failing run; some of them refuse
    selection questions at random (a legal answer: the candidate is not selected)."""
    return st.builds(
        lambda rng, refusals: RandomPolicy(rng, refusals=refusals),
        st.randoms(use_true_random=False),
        st.booleans(),
    )


def max_options() -> st.SearchStrategy[int | None]:
    """How far a fake entry's ``max_options`` exceeds the least a thinker needs: none stated,
    or 0 to 2 options more than its palette's tools plus finish (the ``next`` choice is never
    cut, so an entry offering fewer cannot serve the thinker at all)."""
    return st.none() | st.integers(min_value=0, max_value=2)


def kind_specs(*, max_kinds: int = 4) -> st.SearchStrategy[tuple[KindSpec, ...]]:
    """Artifact hierarchies: 1 to ``max_kinds`` kinds, each a root or a subclass of an earlier
    one, with distinct aliases."""
    if not 1 <= max_kinds <= len(ALIASES):
        raise ValueError(f"max_kinds must be in 1..{len(ALIASES)}, got {max_kinds}")

    @st.composite
    def draw_kinds(draw: st.DrawFn) -> tuple[KindSpec, ...]:
        count = draw(st.integers(1, max_kinds))
        aliases = draw(st.permutations(ALIASES))[:count]
        kinds = [KindSpec(aliases[0])]
        for index in range(1, count):
            parent = draw(st.none() | st.integers(0, index - 1))
            kinds.append(KindSpec(aliases[index], parent))
        return tuple(kinds)

    return draw_kinds()


def artifact_kinds(*, max_kinds: int = 4) -> st.SearchStrategy[tuple[type[Artifact], ...]]:
    """Hierarchies of real artifact classes (see :func:`kind_specs`)."""
    return kind_specs(max_kinds=max_kinds).map(build_kinds)


def _is_sub(kinds: Sequence[KindSpec], kind: int, of: int) -> bool:
    current: int | None = kind
    while current is not None:
        if current == of:
            return True
        current = kinds[current].parent
    return False


def _fed(kinds: Sequence[KindSpec], reachable: Sequence[TypeSpec]) -> list[TypeSpec]:
    """Every type some reachable type is an instance of (a list only for a list)."""
    return [
        TypeSpec(kind, is_list)
        for kind in range(len(kinds))
        for is_list in (False, True)
        if any(r.is_list == is_list and _is_sub(kinds, r.kind, kind) for r in reachable)
    ]


def _with_iterand(tp: TypeSpec) -> list[TypeSpec]:
    return [tp, TypeSpec(tp.kind)] if tp.is_list else [tp]


_WORDS = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(" ".join)
_TRIGGER = st.sampled_from((None, None, None, *VOCABULARY))


@st.composite
def _tool(
    draw: st.DrawFn,
    kinds: Sequence[KindSpec],
    reachable: Sequence[TypeSpec],
    name: str,
    makes: TypeSpec | None,
    failures: bool,
) -> ToolSpec:
    takes = draw(st.sampled_from(_fed(kinds, reachable)))
    if makes is None:
        makes = TypeSpec(draw(st.integers(0, len(kinds) - 1)), draw(st.booleans()))
    subclasses = [k for k in range(len(kinds)) if _is_sub(kinds, k, makes.kind)]
    return ToolSpec(
        name=name,
        takes=takes,
        makes=makes,
        product_kind=draw(st.sampled_from(subclasses)),
        shift=draw(st.integers(0, len(VOCABULARY) - 1)),
        refuses=draw(_TRIGGER) if failures else None,
        crashes=draw(st.sampled_from((None,) * 8 + VOCABULARY)) if failures else None,
    )


def scenario_specs(
    *,
    max_kinds: int = 4,
    max_tools: int = 4,
    max_turns: int = 8,
    failures: bool = True,
) -> st.SearchStrategy[ScenarioSpec]:
    """Scenarios as data: a hierarchy, a legal palette of up to ``max_tools`` tools (each taking
    a type reachable from the input through the tools before it), a key tool making a list of
    the output kind (sometimes also listed in the palette), an input of any kind or a list of
    one, ``max_turns`` in 1..``max_turns``, a threshold from :data:`THRESHOLDS`, a seed.

    ``failures=False`` draws tools that never refuse nor crash.
    """
    if not 0 <= max_tools < len(TOOL_NAMES):
        raise ValueError(f"max_tools must be in 0..{len(TOOL_NAMES) - 1}, got {max_tools}")
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")

    @st.composite
    def draw_spec(draw: st.DrawFn) -> ScenarioSpec:
        kinds = draw(kind_specs(max_kinds=max_kinds))
        input_type = TypeSpec(draw(st.integers(0, len(kinds) - 1)), draw(st.booleans()))
        names = draw(st.permutations(TOOL_NAMES))
        reachable = _with_iterand(input_type)
        palette: list[ToolSpec] = []
        for index in range(draw(st.integers(0, max_tools))):
            tool = draw(_tool(kinds, reachable, names[index], None, failures))
            palette.append(tool)
            reachable += _with_iterand(tool.makes)
        output_kind = draw(st.integers(0, len(kinds) - 1))
        key = draw(_tool(kinds, reachable, names[-1], TypeSpec(output_kind, True), failures))
        if draw(st.booleans()):
            palette.insert(draw(st.integers(0, len(palette))), key)
        if input_type.is_list:
            texts = tuple(draw(st.lists(_WORDS, max_size=MAX_ITEMS)))
        else:
            texts = (draw(_WORDS),)
        return ScenarioSpec(
            kinds=kinds,
            palette=tuple(palette),
            key_tool=key,
            output_kind=output_kind,
            input_type=input_type,
            input_texts=texts,
            max_turns=draw(st.integers(1, max_turns)),
            threshold=draw(st.sampled_from(THRESHOLDS)),
            policy_seed=draw(st.integers(0, 2**16)),
        )

    return draw_spec()


def scenarios(
    *,
    max_kinds: int = 4,
    max_tools: int = 4,
    max_turns: int = 8,
    failures: bool = True,
) -> st.SearchStrategy[Scenario]:
    """Built scenarios (see :func:`scenario_specs`), with fresh classes for every draw."""
    return scenario_specs(
        max_kinds=max_kinds, max_tools=max_tools, max_turns=max_turns, failures=failures
    ).map(build_scenario)

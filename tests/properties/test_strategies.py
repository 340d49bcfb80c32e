"""The strategies build what they promise: real classes, legal palettes, deterministic tools."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import attrs
import pytest
from hypothesis import given

from harness.artifacts import Artifact, ListArtifact, conforms
from harness.errors import InvalidInputError
from harness.palette import palette_report
from harness.testing._scenario import runtime_type, words_of
from harness.testing.strategies import (
    PlantedCrash,
    Scenario,
    ScenarioSpec,
    artifact_kinds,
    build_scenario,
    scenario_specs,
    scenarios,
)
from harness.tools import ClassToolProvider, Workflow, tool_types


@given(artifact_kinds())
def test_kinds_are_attrs_frozen_artifact_classes_with_distinct_aliases(
    kinds: tuple[type[Artifact], ...],
) -> None:
    assert len({k.alias for k in kinds}) == len(kinds)
    for kind in kinds:
        assert issubclass(kind, Artifact)
        assert attrs.has(kind)
        made = kind(text="alpha")  # type: ignore[call-arg]  # a generated kind
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            made.text = "beta"  # type: ignore[attr-defined]  # frozen


@given(scenario_specs())
def test_a_spec_round_trips_through_json(spec: ScenarioSpec) -> None:
    assert ScenarioSpec.from_json(spec.to_json()) == spec


@given(scenarios())
def test_palettes_are_legal_and_their_types_read_back(scenario: Scenario) -> None:
    spec = scenario.spec
    for tool, tool_spec in zip(scenario.palette, spec.palette, strict=True):
        takes, makes = tool_types(tool)
        assert takes == runtime_type(tool_spec.takes, scenario.kinds)
        assert makes == runtime_type(tool_spec.makes, scenario.kinds)
        assert ClassToolProvider(tool).name == tool_spec.name
    assert tool_types(scenario.key_tool)[1] == cast(Any, ListArtifact)[scenario.output_type]
    report = palette_report(
        thinker_input=runtime_type(spec.input_type, scenario.kinds),
        output_type=scenario.output_type,
        key_tool=scenario.key_tool,
        palette=scenario.palette,
        objective="Keep what matters",
    )
    assert report.legal, [v.render() for v in report.verdicts]


@given(scenarios())
def test_tools_are_deterministic_and_fail_only_on_their_trigger_words(scenario: Scenario) -> None:
    tools = {ClassToolProvider(cls).name: cls for cls in (*scenario.palette, scenario.key_tool)}
    specs = {s.name: s for s in (*scenario.spec.palette, scenario.spec.key_tool)}
    for name, cls in tools.items():
        provider = ClassToolProvider(cls)
        if not conforms(scenario.input, provider.input_type):
            continue
        words = words_of(scenario.input)
        tool = provider.create(Workflow())
        spec = specs[name]
        if spec.crashes in words:
            with pytest.raises(
                PlantedCrash, match=f"crashed on an input mentioning '{spec.crashes}'"
            ):
                asyncio.run(tool.execute(scenario.input, None))  # type: ignore[arg-type]  # generated tools ignore the context
            continue
        if spec.refuses in words:
            with pytest.raises(
                InvalidInputError, match=f"refuses anything mentioning '{spec.refuses}'"
            ):
                asyncio.run(tool.execute(scenario.input, None))  # type: ignore[arg-type]  # as above
            continue
        first = asyncio.run(tool.execute(scenario.input, None))  # type: ignore[arg-type]  # as above
        again = asyncio.run(tool.execute(scenario.input, None))  # type: ignore[arg-type]  # as above
        assert first == again
        assert first is not again
        assert conforms(first, provider.output_type)


def test_a_generated_scenario_builds_its_thinker_as_a_tool() -> None:
    spec = ScenarioSpec.from_json(
        '{"kinds":[{"alias":"memo","parent":null}],"palette":[],"key_tool":{"name":"tag",'
        '"takes":{"kind":0,"is_list":false},"makes":{"kind":0,"is_list":true},"product_kind":0,'
        '"shift":1,"refuses":null,"crashes":null},"output_kind":0,"input_type":{"kind":0,'
        '"is_list":false},"input_texts":["alpha"],"max_turns":2,"threshold":0.5,"policy_seed":0}'
    )
    scenario = build_scenario(spec)
    thinker = scenario.thinker(Workflow())
    assert tool_types(type(thinker)) == (
        scenario.kinds[0],
        cast(Any, ListArtifact)[scenario.kinds[0]],
    )
    assert thinker.max_turns == 2
    assert thinker.selection_threshold == 0.5
    assert "tool tag" in repr(scenario) or "key tool tag" in repr(scenario)

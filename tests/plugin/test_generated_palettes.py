"""A bounded run of the palette-module generator (``tests/plugin/palette_generator.py``).

Each example is a batch of generated modules: one mypy run with the plugin over all of them,
then the runtime validator over each. The run fails on an internal error, on a disagreement
where the plugin decides, on a certain plugin error the runtime does not give, on a palette the
runtime refuses and the plugin passes, and on a "cannot prove" in a module written only in forms
a type checker can read. Derandomised under ``HYPOTHESIS_PROFILE=ci`` (the suite's profile);
the long run is the generator's own script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.plugin.palette_generator import ModuleSpec, check_batch, describe, module_specs

BATCH = 25
BATCHES = 4


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated_palettes")


@settings(
    max_examples=BATCHES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failing batch is shown, not shrunk
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(specs=st.lists(module_specs(), min_size=BATCH, max_size=BATCH))
def test_generated_palettes_get_the_runtimes_verdicts(
    specs: list[ModuleSpec], workdir: Path
) -> None:
    number = len(list(workdir.glob("b*")))
    root = workdir / f"b{number}"
    batch = check_batch(specs, root, number, workdir / "cache")
    assert batch.crash is None, batch.crash
    failing = [describe(outcome, root) for outcome in batch.outcomes if outcome.problem]
    assert not failing, "\n\n".join(failing[:3])
    assert len(batch.outcomes) == BATCH

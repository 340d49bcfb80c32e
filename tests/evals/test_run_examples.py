"""A thinker's labelled runs as the source of ``select`` examples: an eval keeps what each
selection read, ``harness examples`` draws from the named split only, and an eval of the cases
the examples came from is refused. The guide's triage example on the embedded model (fast and
deterministic), over the shipped labelled notes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from harness.catalog import load_catalog, state_key, state_text
from harness.cli import main
from harness.decision import systemone
from harness.demo.triage import JudgeNote, Note, Triage, TriageVerdict
from harness.evals import (
    Dataset,
    DrawnSplitError,
    evaluate,
    fit_run_examples,
)
from harness.evals._selections import SELECTIONS_FILE, runs_pack
from harness.evals.data import data_path
from scripts.triage_notes import NOTES, needs_action

TRIAGE = "harness.demo.triage:Triage"


def notes(tmp_path: Path, dev: int = 6, test: int = 4) -> Path:
    """The first ``dev`` dev notes and ``test`` test notes of the shipped file."""
    lines = data_path("runs-triage.jsonl").read_text(encoding="utf-8").splitlines()
    dev_lines = [line for line in lines if '"dev"' in line][:dev]
    test_lines = [line for line in lines if '"test"' in line][:test]
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(line + "\n" for line in dev_lines + test_lines), encoding="utf-8")
    return path


def embedded_catalog(tmp_path: Path, examples: str | None = None) -> Path:
    text = (
        '[pins]\ndecision = "local"\n\n[[entries]]\nid = "local"\nprovider = "embedded"\n'
        'wire_model_id = "sparrow-decider"\nmax_context_tokens = 32768\nmax_concurrent = 2\n'
    )
    if examples is not None:
        text += f'\n[entries.examples]\nfile = "{examples}"\n'
    path = tmp_path / ("examples.toml" if examples else "plain.toml")
    path.write_text(text, encoding="utf-8")
    return path


# -- the labelled notes ------------------------------------------------------------------------


def test_the_triage_notes_expect_the_urgent_parts_as_the_tool_judges_them() -> None:
    dataset = Dataset.load(data_path("runs-triage.jsonl"), Note, TriageVerdict)
    assert len(dataset) == NOTES
    assert sum("dev" in c.tags for c in dataset) == sum("test" in c.tags for c in dataset) == 24
    tool = cast("Any", JudgeNote)  # the tool's rule, run as the thinker runs it
    urgent_parts = calm_parts = 0
    for case in dataset:
        parts = case.input.text.split("; ")
        assert 2 <= len(parts) <= 4
        judged = [asyncio.run(tool.execute(None, Note(part), None)).iterands[0] for part in parts]
        assert [v.urgent for v in judged] == [needs_action(part) for part in parts]
        # the expected answer is the verdict of every urgent part, never the whole note's
        assert list(case.expected) == [v for v in judged if v.urgent]
        assert TriageVerdict(case.input.text, True) not in case.expected
        urgent_parts += sum(v.urgent for v in judged)
        calm_parts += sum(not v.urgent for v in judged)
    assert urgent_parts > 40
    assert calm_parts > 40


# -- the eval keeps what each selection read ---------------------------------------------------


def test_an_eval_keeps_each_finishing_selection_request(tmp_path: Path) -> None:
    dataset = Dataset.load(notes(tmp_path), Note, TriageVerdict)
    report = evaluate(Triage, dataset, model="embedded", out=tmp_path / "runs", resamples=20)
    kept = [
        json.loads(line)
        for line in (tmp_path / "runs" / SELECTIONS_FILE).read_text("utf-8").splitlines()
    ]
    finished = [case for case in report.cases if case.candidates]
    assert finished
    assert [line["case"] for line in kept] == [case.name for case in finished]
    for line, case in zip(kept, finished, strict=True):
        request, _ = systemone.decode_request({**line["request"], "model": "-"})
        # one select question per candidate the answer was taken from, and nothing else
        assert sorted(request.questions) == sorted(f"select_{c.ref}" for c in case.candidates)
        note = next(c for c in dataset if c.name == case.name).input
        state = request.state
        assert isinstance(state, dict)
        assert json.dumps(note.text)[1:-1] in str(state["artifacts"][0])
        assert line["input"] == state_key({"text": note.text})


def test_examples_are_drawn_from_the_named_split_of_the_runs_only(tmp_path: Path) -> None:
    dataset = Dataset.load(notes(tmp_path), Note, TriageVerdict)
    evaluate(Triage, dataset, model="embedded", out=tmp_path / "runs", resamples=20)
    source = runs_pack(tmp_path / "runs")
    dev_states = {state_text(d.request.state) for d in source.pack if "dev" in d.tags}
    test_states = {state_text(d.request.state) for d in source.pack if "test" in d.tags}
    assert dev_states
    assert test_states
    fitted = fit_run_examples(tmp_path / "runs", model="embedded", k=2, resamples=20)
    shown = fitted.examples.for_role("select")
    assert len(shown) == 2
    assert {example.answer for example in shown} == {"yes", "no"}  # balanced
    assert {example.state for example in shown} <= dev_states
    assert fitted.examples.source is not None
    assert fitted.examples.source.split == "dev"
    # the pool names every dev input and dev state, no test one
    dev_inputs = {state_key({"text": c.input.text}) for c in dataset if "dev" in c.tags}
    test_inputs = {state_key({"text": c.input.text}) for c in dataset if "test" in c.tags}
    assert dev_inputs <= fitted.examples.pool
    assert not test_inputs & fitted.examples.pool
    assert {state_key(s) for s in dev_states} <= fitted.examples.pool
    assert not {state_key(s) for s in test_states} & fitted.examples.pool


def test_an_eval_of_the_cases_the_examples_came_from_is_refused(tmp_path: Path) -> None:
    dataset = Dataset.load(notes(tmp_path), Note, TriageVerdict)
    evaluate(Triage, dataset, model="embedded", out=tmp_path / "runs", resamples=20)
    fitted = fit_run_examples(tmp_path / "runs", model="embedded", k=2, resamples=20)
    from harness.catalog import write_examples

    write_examples(fitted.examples, tmp_path / "examples.json")
    catalog = load_catalog(embedded_catalog(tmp_path, "examples.json"))
    dev, test = dataset.tagged("dev"), dataset.tagged("test")
    with pytest.raises(DrawnSplitError, match=r"6 of notes\[dev\]'s cases come from that split"):
        evaluate(Triage, dev, catalog=catalog, out=tmp_path / "dev", resamples=20)
    assert not (tmp_path / "dev" / "results.jsonl").exists()  # refused before anything ran
    with pytest.raises(DrawnSplitError, match="1 of mixed's cases"):
        evaluate(Triage, test.with_cases([*test, dev.cases[0]], "mixed"), catalog=catalog)
    report = evaluate(Triage, test, catalog=catalog, out=tmp_path / "test", resamples=20)
    assert len(report.cases) == 4


def test_no_selection_is_kept_under_a_client_the_eval_does_not_hold(tmp_path: Path) -> None:
    from harness import override
    from harness.providers import EmbeddedDecisionClient

    dataset = Dataset.load(notes(tmp_path, dev=2, test=0), Note, TriageVerdict)
    with override(model=EmbeddedDecisionClient()):
        evaluate(Triage, dataset, model="embedded", out=tmp_path / "runs", resamples=20)
    assert not (tmp_path / "runs" / SELECTIONS_FILE).exists()
    with pytest.raises(Exception, match="the eval kept no selection"):
        runs_pack(tmp_path / "runs")


# -- the command line --------------------------------------------------------------------------


def test_the_command_draws_from_an_eval_folder_and_from_cases_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = notes(tmp_path)
    plain = embedded_catalog(tmp_path)
    assert (
        main(["eval", TRIAGE, str(cases), "--model", "embedded", "--out", str(tmp_path / "r")]) == 0
    )
    capsys.readouterr()
    out = tmp_path / "from-folder.json"
    assert main(["examples", str(tmp_path / "r"), "--model", "embedded", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert (
        "examples drawn from notes runs (harness.demo.triage:Triage on embedded), split dev" in said
    )
    assert "select: 2 examples" in said
    code = main(
        [
            "examples",
            str(cases),
            "--thinker",
            TRIAGE,
            "--catalog",
            str(plain),
            "--runs",
            str(tmp_path / "ran"),
            "--out",
            str(tmp_path / "from-cases.json"),
        ]
    )
    assert code == 0
    capsys.readouterr()
    # only the dev cases ran
    assert len((tmp_path / "ran" / "results.jsonl").read_text("utf-8").splitlines()) == 6
    first = json.loads(out.read_text("utf-8"))
    second = json.loads((tmp_path / "from-cases.json").read_text("utf-8"))
    assert first["select"] == second["select"]  # the same runs, the same draw
    # the entry showing them refuses an eval of the dev notes, in one line
    (tmp_path / "examples.json").write_text(out.read_text("utf-8"), encoding="utf-8")
    shown = embedded_catalog(tmp_path, "examples.json")
    assert main(["eval", TRIAGE, str(cases), "--catalog", str(shown)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "6 of notes's cases come from that split" in err
    assert "evaluate on the held-out split: harness eval ... --split test" in err
    # the held-out split by its tag, as the refusal says
    held = ["eval", TRIAGE, str(cases), "--catalog", str(shown), "--out", str(tmp_path / "held")]
    assert main([*held, "--split", "test", "--resamples", "20"]) == 0
    printed = capsys.readouterr().out
    assert "4 cases of notes[test] (split test)" in printed
    assert main([*held, "--split", "tset"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"harness eval: error: --split tset: no case of {cases} is tagged 'tset' (its tags: dev, "
        "test, triage); did you mean 'test'?"
    ]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--k", "0"], "--k must be at least 1"),
        (["--candidates", "0"], "--candidates must be at least 1"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--as-role", "noul=select"], "--as-role renames a pack's roles"),
    ],
)
def test_bad_options_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    (tmp_path / "runs").mkdir()
    assert main(["examples", str(tmp_path / "runs"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert said in err


def test_a_folder_without_kept_selections_is_refused_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs").mkdir()
    assert main(["examples", str(tmp_path / "runs")]) == 2
    assert "no report.json: give the folder of a finished `harness eval`" in capsys.readouterr().err


# -- the figures' script -----------------------------------------------------------------------


def test_the_triage_figures_script_reports_every_eval_and_pair_held_out(tmp_path: Path) -> None:
    from scripts.triage_figures import markdown, triage_figures

    catalog = load_catalog(embedded_catalog(tmp_path))
    found = triage_figures(catalog, "local", tmp_path / "figures", resamples=50)
    figures = cast("dict[str, dict[str, dict[str, Any]]]", found["figures"])
    names = ["embedded", "zero-shot", "zero-shot-threshold", "k-shot", "k-shot-calibrated"]
    assert list(figures) == names
    for name, shown in figures.items():
        assert shown["select.auc"]["n"] >= shown["select.auc (parts)"]["n"] > 0, name
    pairs = cast("dict[str, dict[str, dict[str, Any]]]", found["pairs"])
    assert len(pairs) == 10
    # the embedded model reads no examples: zero-shot and k-shot answer alike, one by one
    same = pairs["zero-shot vs k-shot"]["selections"]
    assert same["paired"] == figures["k-shot"]["select.auc"]["n"]
    assert same["only_first_right"] == same["only_second_right"] == 0
    # the examples came from the dev runs, the k-shot eval ran on test (not refused)
    drawn = json.loads((tmp_path / "figures" / "examples-triage.json").read_text("utf-8"))
    assert drawn["drawn_from"]["split"] == "dev"
    assert len((tmp_path / "figures" / "k-shot" / "results.jsonl").read_text().splitlines()) == 24
    table = markdown(found)
    assert table[0] == "| figure | " + " | ".join(names) + " |"
    # the calibration and its threshold were fitted on the dev selections, with the examples
    fitted = (tmp_path / "figures" / "calibration-triage.toml").read_text("utf-8")
    assert "split dev" in fitted
    assert "selection_threshold" in fitted
    assert any(line.startswith("| `select.auc (parts)` |") for line in table)

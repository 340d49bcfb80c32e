"""Datasets, evals on the fake model, fitted thresholds, gates, comparisons, JUnit and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.cli import main
from harness.evals import (
    Dataset,
    DatasetError,
    DecisionPack,
    EvalError,
    EvalReport,
    assert_eval,
    check_gates,
    compare,
    evaluate,
    fit_threshold,
    load_report,
    write_junit,
)
from harness.testing import FakeDecisionModel
from tests.evals.thinkers import KeepSentences, Note, Sentence, refund_policy

HERE = Path(__file__).parent
CASES = HERE / "cases.jsonl"
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def dataset() -> Dataset[Note, Sentence]:
    return Dataset.load(CASES, Note, Sentence)


@pytest.fixture(scope="module")
def report(
    dataset: Dataset[Note, Sentence], tmp_path_factory: pytest.TempPathFactory
) -> EvalReport:
    out = tmp_path_factory.mktemp("eval")
    return evaluate(
        KeepSentences, dataset, model=FakeDecisionModel(refund_policy()), out=out, resamples=200
    )


def test_a_dataset_loads_typed_cases(dataset: Dataset[Note, Sentence]) -> None:
    assert len(dataset) == 6
    first = dataset.cases[0]
    assert first.input == Note("I want a refund. The box was fine.")
    assert first.expected == (Sentence("I want a refund"),)
    assert first.tags == ("refund",)
    assert len(dataset.tagged("refund")) == 4
    dev, held = dataset.split(0.5, seed=1)
    assert {c.name for c in dev.cases} | {c.name for c in held.cases} == {
        c.name for c in dataset.cases
    }
    assert not {c.name for c in dev.cases} & {c.name for c in held.cases}
    assert dataset.split(0.5, seed=1)[0].cases == dev.cases  # deterministic


def test_every_bad_line_is_named_by_number_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"name": "ok", "input": {"text": "a"}, "expected": []}\n'
        '{"name": "x", "input": {}, "expected": []}\n'
        "\n"
        '{"name": "y", "input": {"text": "a"}, "expected": [{"text": 3}]}\n'
        "not json\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match=r"line 5: not JSON"):
        Dataset.load(bad, Note, Sentence)
    bad.write_text(bad.read_text().replace("not json\n", '{"input": {"text": "b"}}\n'))
    with pytest.raises(DatasetError) as error:
        Dataset.load(bad, Note, Sentence)
    message = str(error.value)
    assert "3 case(s)" in message
    assert "line 2: input is not a valid Note" in message
    assert "input.text" in message
    assert "line 4: expected[0] is not a valid Sentence" in message
    assert "expected[0].text" in message
    assert "line 5: name must be a non-empty string" in message


def test_yaml_datasets_load_the_same_cases(
    tmp_path: Path, dataset: Dataset[Note, Sentence]
) -> None:
    import yaml  # type: ignore[import-untyped]  # PyYAML ships no type information

    rows = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump(rows), encoding="utf-8")
    assert Dataset.load(path, Note, Sentence).cases == dataset.cases
    path.write_text("- name: a\n  input: {text: 1}\n  expected: []\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"entry 1: input is not a valid Note"):
        Dataset.load(path, Note, Sentence)


def test_select_labels_follow_from_the_expected_set(report: EvalReport) -> None:
    case = report.case("refund-twice")
    assert case.status == "completed"
    assert [c.expected for c in case.candidates] == [True, False, True]
    assert [d.label for d in case.decisions] == [0, 1, 0]  # 0: "yes" is right
    assert all(d.question.startswith("select_sentence#") for d in case.decisions)
    hidden = report.case("hidden-ask")  # the policy misses "Money back please"
    assert hidden.counts() == (0, 1, 1)
    assert report.metric("recall").value == pytest.approx(4 / 5)
    assert report.metric("precision").value == pytest.approx(4 / 5)
    assert report.metric("exact_match").value == pytest.approx(5 / 6)
    assert report.baselines["answer_key"]["recall"].value == pytest.approx(1.0)
    assert report.threshold == 0.5


def test_report_json_is_stable_and_reads_back(report: EvalReport, tmp_path: Path) -> None:
    text = report.dumps()
    assert "timings" not in text
    assert json.loads(text) == json.loads(report.dumps())
    path = report.write_json(tmp_path / "r.json")
    again = load_report(path)
    assert again.dumps() == text
    assert "metric_seconds" in json.loads(path.read_text())["timings"]


def test_an_undefined_figure_is_never_a_silent_zero(report: EvalReport) -> None:
    no_answers = [c for c in report.cases if c.name in ("no-refund", "question")]
    from harness.evals import score

    only_negatives = score(no_answers, subject="t", dataset="d", model="m", resamples=50)
    recall = only_negatives.metric("recall")
    assert recall.value is None
    assert recall.undefined is not None
    assert "no item was expected" in recall.undefined
    with pytest.raises(AssertionError, match=r"FAILED \(undefined: no item was expected\)"):
        assert_eval(only_negatives, min_recall=0.5)


def test_a_fitted_threshold_lands_at_the_known_optimum(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    # refund sentences at 0.7, others at 0.4: the best threshold is above 0.4, at most 0.7
    model = FakeDecisionModel(refund_policy(yes_if=0.7, yes_else=0.4))
    # (the hard case, where the words mislead the policy, is left out: its optimum is known)
    dev = dataset.with_cases(
        (c for c in dataset if c.name in ("refund-plain", "no-refund", "mixed")), "dev"
    )
    held = dataset.with_cases(
        (c for c in dataset if c.name in ("refund-twice", "question")), "held"
    )
    dev_report = evaluate(
        KeepSentences, dev, model=model, out=tmp_path / "dev", split="dev", resamples=50
    )
    fitted = fit_threshold(dev_report, rule="f1")
    assert fitted.value == pytest.approx(0.7)
    assert fitted.fitted_on == dev.name
    held_report = evaluate(
        KeepSentences, held, model=model, out=tmp_path / "held", split="held-out", resamples=50
    )
    on_held = fitted.on(held_report)
    assert on_held.held_out["precision"].value == pytest.approx(1.0)
    assert on_held.held_out_split == held.name
    strict = fit_threshold(dev_report, rule="precision", target=0.2)
    assert strict.value == pytest.approx(0.7)  # 0.4 lets the wrong ones in
    with pytest.raises(ValueError, match="no threshold reaches"):
        fit_threshold(dev_report, rule="precision", target=0.99)


def test_gates_and_assert_eval(report: EvalReport) -> None:
    assert_eval(report, min_recall=0.5, max_ece=0.9)
    with pytest.raises(AssertionError) as error:
        assert_eval(report, min_recall=0.95, min_precision=0.1)
    message = str(error.value)
    assert "failed 1 of 2 gate(s)" in message
    assert "min_recall: recall 0.800" in message
    assert "FAILED" in message
    assert len(message.splitlines()) == 2
    with pytest.raises(ValueError, match="unknown gate"):
        check_gates(report, min_recal=0.5)


def test_the_junit_file_names_each_failed_gate(report: EvalReport, tmp_path: Path) -> None:
    gates = check_gates(report, min_recall=0.95, max_ece=0.9, min_f1=0.99)
    path = write_junit(tmp_path / "junit.xml", report, gates)
    root = ET.parse(path).getroot()
    cases = root.findall("testcase")
    assert len(cases) == len(report.cases) + 3
    failed_gates = {
        c.get("name")
        for c in cases
        if c.get("classname") == "eval.gate" and c.find("failure") is not None
    }
    assert failed_gates == {"min_recall", "min_f1"}
    failed_cases = {
        c.get("name")
        for c in cases
        if c.get("classname") == "eval.case" and c.find("failure") is not None
    }
    assert failed_cases == {"hidden-ask"}
    assert root.get("failures") == "3"


def test_compare_finds_flips_changes_and_mcnemar(
    dataset: Dataset[Note, Sentence], report: EvalReport, tmp_path: Path
) -> None:
    worse = evaluate(
        KeepSentences,
        dataset,
        model=FakeDecisionModel(refund_policy(yes_if=0.45, yes_else=0.2)),
        out=tmp_path / "worse",
        resamples=50,
    )
    comparison = compare(report, worse)
    assert comparison.only_a_right == 3  # the three refund cases answered exactly, then nothing
    assert comparison.only_b_right == 0
    assert comparison.mcnemar_p == pytest.approx(0.25)  # 2 * (1/2)^3
    assert len(comparison.flips) == 5  # every refund sentence flipped from yes to no
    assert {c.case for c in comparison.changes} == {
        "refund-plain",
        "refund-twice",
        "mixed",
        "hidden-ask",
    }
    assert set(comparison.near) == {"refund-plain", "refund-twice", "mixed", "hidden-ask"}  # 0.45
    assert_eval(worse, comparison=comparison, max_flips=5)
    with pytest.raises(AssertionError, match="max_flips: 5 decision"):
        assert_eval(worse, comparison=comparison, max_flips=4)


def test_decision_packs_load_and_check_labels(tmp_path: Path) -> None:
    path = tmp_path / "pack.jsonl"
    request = {
        "state": {"ticket": "refund please"},
        "questions": {
            "refund": {"type": "noul", "instructions": "Refund it?"},
            "team": {
                "type": "choice",
                "instructions": "Which team?",
                "criteria": {"billing": "money", "ops": "delivery"},
            },
        },
    }
    path.write_text(
        json.dumps({"name": "a", "request": request, "labels": {"refund": True, "team": "billing"}})
        + "\n"
        + json.dumps({"name": "b", "request": request, "labels": {"team": "sales"}})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match=r"line 2: labels.team: a choice's label is one of"):
        DecisionPack.load(path)
    path.write_text(path.read_text().splitlines()[0] + "\n", encoding="utf-8")
    pack = DecisionPack.load(path)
    assert pack.decisions[0].labels == {"refund": True, "team": "billing"}


def test_the_cli_runs_an_eval_gates_it_and_compares(tmp_path: Path) -> None:
    env_code = (
        "import sys; from harness.cli import main; from harness.testing import override, "
        "FakeDecisionModel; from tests.evals.thinkers import refund_policy\n"
        "with override(model=FakeDecisionModel(refund_policy())):\n"
        "    sys.exit(main(sys.argv[1:]))"
    )
    out = tmp_path / "a"
    junit = tmp_path / "j.xml"
    args = [
        "eval",
        "tests.evals.thinkers:KeepSentences",
        str(CASES),
        "--out",
        str(out),
        "--resamples",
        "50",
        "--min-recall",
        "0.9",
        "--junit",
        str(junit),
    ]
    done = subprocess.run(
        [sys.executable, "-c", env_code, *args], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr  # recall 0.8 < 0.9
    assert "min_recall: recall 0.800" in done.stdout
    assert "FAILED" in done.stdout
    assert (out / "report.json").exists()
    assert (out / "report.html").exists()
    assert ET.parse(junit).getroot().get("failures") == "2"
    compared = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "eval",
            "compare",
            str(out),
            str(out),
            "--max-flips",
            "0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert compared.returncode == 0, compared.stderr
    assert "0 decision(s) flipped" in compared.stdout
    assert "p = 1.0000" in compared.stdout


def test_cli_usage_mistakes_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["eval", "no_such_module:X", str(CASES), "--out", str(tmp_path)]) == 2
    assert "cannot import module 'no_such_module'" in capsys.readouterr().err
    assert main(["eval", "compare", str(tmp_path / "missing.json")]) == 2
    assert "needs two reports" in capsys.readouterr().err
    assert main(["eval", "compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert "no eval report" in capsys.readouterr().err


async def test_a_synchronous_eval_in_a_running_loop_names_the_async_form(
    dataset: Dataset[Note, Sentence],
) -> None:
    from harness.errors import SyncRunInLoopError
    from harness.evals import evaluate_async

    with pytest.raises(SyncRunInLoopError, match="await evaluate_async"):
        evaluate(KeepSentences, dataset, model=FakeDecisionModel(refund_policy()))
    report = await evaluate_async(
        KeepSentences, dataset, model=FakeDecisionModel(refund_policy()), resamples=50
    )
    assert report.metric("recall").value == pytest.approx(4 / 5)


def test_a_thinker_defined_in_a_script_runs_on_the_local_engine(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    from harness.thinker import DecisionThinker
    from harness.tools import Identifiable
    from tests.evals.thinkers import SplitSentences

    class Local(DecisionThinker[Note, Sentence]):  # defined in a function: not importable
        def __init__(self, parent: Identifiable) -> None:
            super().__init__(
                parent, output_type=Sentence, key_tool=SplitSentences, palette=(), objective="keep"
            )

    report = evaluate(Local, dataset, model=FakeDecisionModel(refund_policy()), resamples=50)
    assert report.subject.endswith("Local")
    assert report.metric("recall").value == pytest.approx(4 / 5)
    with pytest.raises(EvalError, match="on Ray each worker imports the thinker"):
        evaluate(Local, dataset, model="embedded", ray="local", out=tmp_path)


def test_cli_bad_dataset_lines_exit_2_naming_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "a", "input": {"words": "x"}, "expected": []}\n', encoding="utf-8")
    code = main(["eval", "tests.evals.thinkers:KeepSentences", str(bad), "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "line 1: input: unknown field 'words' for Note: expected one of text" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_key_compares_items_by_the_named_fields() -> None:
    from harness.cli._eval import _key

    key = _key("text")
    assert key(Sentence("a")) == ("a",)
    assert _key(None) is None
    dataset = Dataset.load(CASES, Note, Sentence, key=key)
    assert dataset.keys([Sentence("x"), Sentence("x"), Sentence("y")]) == ['["x"]', '["y"]']
    assert dataset.key_of(Sentence("I want a refund")) == ("I want a refund",)


def test_a_failed_run_is_left_out_of_the_figures_and_fails_the_eval(
    dataset: Dataset[Note, Sentence], tmp_path: Path
) -> None:
    from harness.decision import Answer, DecisionRequest

    base = refund_policy()

    def flaky(request: DecisionRequest) -> dict[str, Answer]:
        if "Money back" in str(request.state) or "parcel" in str(request.state):
            raise RuntimeError("the model fell over")
        return base(request)

    report = evaluate(
        KeepSentences, dataset, model=FakeDecisionModel(flaky), out=tmp_path, resamples=50
    )
    assert {c.name for c in report.failed} == {"hidden-ask", "question"}
    assert report.case("hidden-ask").error is not None
    # the figures are the completed cases': "question" expects nothing, and its failed run is
    # not a right answer (exact match 4 of 4 completed, not 5 of 6)
    assert report.metric("exact_match").value == pytest.approx(1.0)
    assert report.metric("exact_match").n == 4
    assert report.metric("recall").value == pytest.approx(1.0)
    line = report.failed_line()
    assert line is not None
    assert line.startswith("2 of 6 cases did not complete (left out of the figures); the first,")
    assert "the model fell over" in line
    (gate,) = check_gates(report, max_failed=0)
    assert not gate.passed
    (allowed,) = check_gates(report, max_failed=2)
    assert allowed.passed
    with pytest.raises(AssertionError, match="2 of 6 cases did not complete"):
        assert_eval(report)
    junit = ET.parse(write_junit(tmp_path / "j.xml", report)).getroot()
    failed_cases = [c for c in junit.findall("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failed_cases} == {"hidden-ask", "question"}


def test_an_eval_where_no_run_completed_exits_1_naming_the_first_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from harness.decision import Answer, DecisionRequest
    from harness.testing import override

    def broken(request: DecisionRequest) -> dict[str, Answer]:
        raise RuntimeError("no model file at models/nope.gguf")

    args = ["eval", "tests.evals.thinkers:KeepSentences", str(CASES), "--resamples", "20"]
    with override(model=FakeDecisionModel(broken)):
        code = main([*args, "--out", str(tmp_path / "a"), "--max-failed", "100"])
    out = capsys.readouterr().out
    assert code == 1
    assert "6 of 6 cases did not complete (left out of the figures); the first," in out
    assert "no model file at models/nope.gguf" in out
    assert "no case completed" in out
    assert "undefined: no cases" in out  # exact match: no figure, never a share of failures
    with override(model=FakeDecisionModel(broken)):
        code = main([*args, "--out", str(tmp_path / "b"), "--json"])
    assert code == 1
    assert "6 of 6 cases did not complete" in capsys.readouterr().err


def test_a_failed_case_fails_the_eval_unless_max_failed_allows_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from harness.decision import Answer, DecisionRequest
    from harness.testing import override

    base = refund_policy()

    def flaky(request: DecisionRequest) -> dict[str, Answer]:
        if "Money back" in str(request.state):
            raise RuntimeError("the model fell over")
        return base(request)

    args = ["eval", "tests.evals.thinkers:KeepSentences", str(CASES), "--resamples", "20"]
    args += ["--out", str(tmp_path)]
    with override(model=FakeDecisionModel(flaky)):
        assert main(args) == 1
        assert "max_failed: 1 of 6 cases did not complete <= 0: FAILED" in capsys.readouterr().out
        assert main([*args, "--max-failed", "1"]) == 0
        assert "max_failed: 1 of 6 cases did not complete <= 1: ok" in capsys.readouterr().out
        assert main([*args, "--max-failed", "-1"]) == 2


def test_a_thinker_eval_counts_where_its_choices_sat_and_warns_when_always_first(
    tmp_path: Path,
) -> None:
    from harness.demo.triage import Note as TriageNote
    from harness.demo.triage import Triage, TriageVerdict
    from harness.evals import render_report_text

    rows = [
        {"name": f"n{i}", "input": {"text": f"pay bill {i}; water plant {i}; call bank {i}"}}
        for i in range(5)
    ]
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps({**r, "expected": []}) + "\n" for r in rows), "utf-8")
    notes = Dataset.load(path, TriageNote, TriageVerdict)
    # the fake model's default answer to a choice is its first option
    report = evaluate(Triage, notes, model=FakeDecisionModel(), out=tmp_path / "e", resamples=20)
    placed = [p for case in report.cases for p in case.placed]
    assert {p.role for p in placed} == {"next", "split_note_input", "judge_note_input"}
    assert all(p.chosen == 0 and p.right is None for p in placed)  # no label on a run's choices
    chosen = report.metric("split_note_input.first_chosen")
    assert (chosen.value, chosen.n) == (1.0, 10)
    chance = report.metric("split_note_input.first_by_chance").value
    assert chance is not None
    assert chance < 0.5
    text = render_report_text(report)
    assert "first option by choice role (chosen, against right or by chance):" in text
    assert (
        "warning: split_note_input: the first option was chosen in 10 of 10 choices (1.00), "
        "where it would be chosen by chance in"
    ) in text
    assert "warning: next:" not in text  # the tools' order is the palette's, not the data's
    assert "split_note_input.first_chosen" not in text.split("intervals:")[0]  # not in the table

"""Solved examples fitted on labelled decisions: drawn from the dev split only, balanced and
seeded, chosen by a search on a scored part of the dev split, stored with the entry (inline or in
a JSON file), and an eval on the split they came from refused."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import attrs
import pytest

from harness import override
from harness.catalog import (
    Catalog,
    CatalogEntry,
    CatalogError,
    ExampleSet,
    SolvedExample,
    examples_from_table,
    load_catalog,
    write_examples,
)
from harness.cli import main
from harness.decision import Answer, Choice, DecisionRequest, DecisionResponse, Noul
from harness.evals import (
    DatasetError,
    DecisionPack,
    draw_labeled,
    evaluate_pack,
    fit_examples,
)
from harness.evals._draws import part_of
from harness.evals._examples import DrawnSplitError, FittedChoice
from harness.testing import choose, yes

TEAMS = {"billing": "money", "ops": "delivery", "tech": "the app", "sales": "buying more"}


def decision(
    number: int, split: str, *, refund: bool, team: str, extra: str = ""
) -> dict[str, object]:
    return {
        "name": f"t{number}",
        "tags": [split],
        "request": {
            "state": {"ticket": f"ticket {number}: {'refund' if refund else 'no money'}{extra}"},
            "questions": {
                "refund": {"type": "noul", "instructions": "Does the customer want a refund?"},
                "team": {"type": "choice", "instructions": "Which team?", "criteria": TEAMS},
            },
        },
        "labels": {"refund": refund, "team": team},
    }


def rows(count: int = 40) -> list[dict[str, object]]:
    teams = list(TEAMS)
    return [
        decision(n, "dev" if n // 4 % 2 == 0 else "test", refund=n % 3 == 0, team=teams[n % 4])
        for n in range(count)
    ]


def pack_of(found: list[dict[str, object]], tmp_path: Path, name: str = "tickets") -> DecisionPack:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in found), encoding="utf-8")
    return DecisionPack.load(path)


def fake_catalog(tmp_path: Path | None = None) -> Catalog:
    entry = CatalogEntry.fake("local")
    return Catalog([entry], {"decision": "local"}, source="test catalog")


class ExampleReader:
    """A scripted local model: right on every question when the entry shows the golden example
    (any role), at chance (always no, the first option) otherwise; it counts its calls."""

    def __init__(self, golden: str) -> None:
        self.golden = golden
        self.calls = 0

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        self.calls += 1
        shown = entry.examples is not None and any(
            self.golden in example.state
            for found in entry.examples.by_role.values()
            for example in found
        )
        text = json.dumps(request.state)
        answers: dict[str, Answer] = {}
        for question_id, question in request.questions.items():
            if isinstance(question, Noul):
                truth = "no money" not in text
                answers[question_id] = yes(0.9 if truth == shown else 0.1)
            elif isinstance(question, Choice):
                number = int(text.split("ticket ")[1].split(":")[0])
                right = list(TEAMS)[number % 4]
                answers[question_id] = choose(
                    question, right if shown else "billing", probability=0.7
                )
        return DecisionResponse(request, answers, model="reader")

    async def aclose(self) -> None:
        pass


# -- drawing -------------------------------------------------------------------------------


def test_the_labelled_draw_is_seeded_deterministic_and_balanced(tmp_path: Path) -> None:
    pack = pack_of(rows(), tmp_path)
    dev = [d for d in pack if "dev" in d.tags]
    first = draw_labeled(dev, 4, seed=3)
    assert first == draw_labeled(dev, 4, seed=3)  # the same seed, the same examples
    assert any(draw_labeled(dev, 4, seed=s) != first for s in range(4, 12))  # seeds differ
    assert set(first) == {"noul", "choice"}
    assert Counter(e.answer for e in first["noul"]) == {"yes": 2, "no": 2}
    assert Counter(e.answer for e in first["choice"]) == dict.fromkeys(TEAMS, 1)
    # odd k: the answers differ by one at most; no state twice while others are left
    for seed in range(6):
        drawn = draw_labeled(dev, 3, seed=seed)["noul"]
        counts = Counter(e.answer for e in drawn)
        assert sorted(counts.values()) == [1, 2]
        assert len({e.state for e in drawn}) == 3


def test_a_balanced_draw_takes_what_there_is_when_an_answer_is_rare(tmp_path: Path) -> None:
    found = [decision(n, "dev", refund=n == 1, team="ops") for n in range(1, 9)]
    drawn = draw_labeled(list(pack_of(found, tmp_path)), 4, seed=0)
    assert Counter(e.answer for e in drawn["noul"]) == {"yes": 1, "no": 3}
    assert [e.answer for e in drawn["choice"]] == ["ops"] * 4


def test_examples_are_drawn_only_from_the_named_split(tmp_path: Path) -> None:
    planted = decision(999, "test", refund=True, team="sales", extra=" PLANTED")
    pack = pack_of([*rows(), planted], tmp_path)
    for seed in range(25):
        for method in ("labeled",):
            fitted = fit_examples(pack, catalog=fake_catalog(), k=6, seed=seed, method=method)
            states = [e.state for found in fitted.examples.by_role.values() for e in found]
            assert states
            assert not any("PLANTED" in s for s in states)
            assert all(json.loads(s)["ticket"].split(":")[0] for s in states)
            numbers = {int(json.loads(s)["ticket"].split()[1].rstrip(":")) for s in states}
            assert all(n // 4 % 2 == 0 for n in numbers)  # the dev split's tickets
    reader = ExampleReader("ticket 1:")
    with override(model=reader):
        searched = fit_examples(
            pack, catalog=fake_catalog(), k=4, method="search", candidates=5, resamples=50
        )
    for choice in searched.choices:
        assert choice.examples is not None
        assert not any(
            "PLANTED" in e.state for found in choice.examples.by_role.values() for e in found
        )
    assert searched.examples.source is not None
    assert searched.examples.source.split == "dev"


def test_a_split_with_no_decision_is_refused_by_name(tmp_path: Path) -> None:
    pack = pack_of(rows(), tmp_path)
    with pytest.raises(ValueError, match="no decision is tagged 'train'"):
        fit_examples(pack, catalog=fake_catalog(), split="train")
    with pytest.raises(ValueError, match="held_out is the split the examples are drawn from"):
        fit_examples(pack, catalog=fake_catalog(), held_out="dev")


# -- the search ------------------------------------------------------------------------------


def test_the_search_picks_the_set_of_best_dev_part_score(tmp_path: Path) -> None:
    pack = pack_of(rows(60), tmp_path)
    dev = [d for d in pack if "dev" in d.tags]
    drawn_part = [d for d in dev if part_of(d, 0) >= 0.5]
    found = next(d for d in drawn_part if d.labels["refund"] is True)
    golden = json.dumps(found.request.state).split('"ticket": "')[1].split(":")[0] + ":"
    reader = ExampleReader(golden)
    with override(model=reader):
        fitted = fit_examples(
            pack,
            catalog=fake_catalog(),
            k=2,
            method="search",
            candidates=8,
            held_out="test",
            resamples=50,
        )
    candidates = [c for c in fitted.choices if c.name.startswith("candidate")]
    assert len(candidates) == 8
    with_golden = [
        any(golden in e.state for found in c.examples.by_role.values() for e in found)  # type: ignore[union-attr]  # a candidate has examples
        for c in candidates
    ]
    assert any(with_golden)
    assert not all(with_golden)
    scores = [c.dev_score for c in candidates]
    best = max(s for s in scores if s is not None)
    (chosen,) = [c for c in candidates if c.chosen]
    assert chosen.dev_score == best
    assert chosen is candidates[scores.index(best)]  # ties: the earlier set
    assert with_golden[candidates.index(chosen)]
    assert fitted.examples.by_role == chosen.examples.by_role  # type: ignore[union-attr]  # chosen
    # every choice reported on the held-out split, zero-shot first, each figure an interval
    assert fitted.choices[0].name == "zero-shot"
    assert fitted.choices[0].examples is None
    zero = fitted.choices[0].held_out
    assert zero is not None
    assert chosen.held_out is not None
    assert chosen.held_out.metric("refund.accuracy").value == 1.0
    assert zero.metric("refund.accuracy").value == 0.0
    assert zero.metric("refund.accuracy").n == 28  # every test decision
    text = "\n".join(fitted.lines())
    assert "held-out refund.accuracy 1.000" in text
    assert "(chosen)" in text


def test_an_undefined_dev_part_score_is_said_and_never_picked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    teams = list(TEAMS)
    no_refund = [
        decision(n, "dev" if n // 4 % 2 == 0 else "test", refund=False, team=teams[n % 4])
        for n in range(40)
    ]
    pack = pack_of(no_refund, tmp_path)
    with override(model=ExampleReader("ticket 2:")):
        with pytest.raises(DatasetError) as refused:
            fit_examples(pack, catalog=fake_catalog(), k=2, method="search", candidates=3)
        assert "no candidate set can be picked by discrimination: noul AUC is undefined: the " in (
            str(refused.value)
        )
        assert "decisions are all 'no'" in str(refused.value)
        assert "--metric accuracy" in str(refused.value)
        by_accuracy = fit_examples(
            pack,
            catalog=fake_catalog(),
            k=2,
            method="search",
            candidates=3,
            metric="accuracy",
            resamples=20,
        )
        assert all(c.dev_score is not None for c in by_accuracy.choices)
        code = main(["examples", str(tmp_path / "tickets.jsonl"), "--method", "search"])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "noul AUC is undefined" in line
    assert "0.500" not in line
    shown = FittedChoice("candidate 1 (seed 0)", None, None, undefined="noul AUC is undefined: x")
    assert shown.lines() == [
        "candidate 1 (seed 0): dev-part score undefined: noul AUC is undefined: x"
    ]


def test_the_search_is_deterministic(tmp_path: Path) -> None:
    pack = pack_of(rows(), tmp_path)

    def run() -> ExampleSet:
        with override(model=ExampleReader("ticket 2:")):
            return fit_examples(
                pack, catalog=fake_catalog(), k=2, method="search", candidates=3, resamples=20
            ).examples

    assert run() == run()


def test_a_labelled_fit_asks_no_model(tmp_path: Path) -> None:
    reader = ExampleReader("nothing")
    with override(model=reader):
        fit_examples(pack_of(rows(), tmp_path), catalog=fake_catalog(), k=2)
    assert reader.calls == 0


# -- refusing the drawn split ---------------------------------------------------------------


def test_an_eval_on_the_split_the_examples_came_from_is_refused(tmp_path: Path) -> None:
    pack = pack_of(rows(), tmp_path)
    fitted = fit_examples(pack, catalog=fake_catalog(), k=2)
    entry = attrs.evolve(CatalogEntry.fake("local"), examples=fitted.examples)
    catalog = Catalog([entry], {"decision": "local"})
    dev = DecisionPack([d for d in pack if "dev" in d.tags], name="dev")
    test = DecisionPack([d for d in pack if "test" in d.tags], name="test")
    with override(model=ExampleReader("x")):
        with pytest.raises(DrawnSplitError, match=r"20 of dev's decisions come from that split"):
            evaluate_pack(dev, catalog=catalog, resamples=20)
        one = DecisionPack([*test.decisions[:3], dev.decisions[5]], name="mixed")
        with pytest.raises(DrawnSplitError, match="1 of mixed's"):
            evaluate_pack(one, catalog=catalog, resamples=20)
        report = evaluate_pack(test, catalog=catalog, resamples=20)
    assert len(report.cases) == 20


def test_the_command_line_refuses_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack_path = tmp_path / "tickets.jsonl"
    pack_path.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    catalog_path = tmp_path / "catalog.toml"
    catalog_path.write_text(
        '[pins]\ndecision = "local"\n\n[[entries]]\nid = "local"\nprovider = "embedded"\n'
        'wire_model_id = "sparrow-decider"\nmax_context_tokens = 32768\nmax_concurrent = 1\n\n'
        '[entries.examples]\nfile = "examples.json"\n',
        encoding="utf-8",
    )
    code = main(
        [
            "examples",
            str(pack_path),
            "--catalog",
            str(catalog_path),
            "--out",
            str(tmp_path / "examples.json"),
            "--k",
            "2",
        ]
    )
    # the catalog names a file that does not exist yet: refused, then written by --out
    assert code == 2
    assert "examples file examples.json cannot be read" in capsys.readouterr().err
    plain = tmp_path / "plain.toml"
    plain.write_text(
        catalog_path.read_text(encoding="utf-8").split("\n[entries.examples]")[0], encoding="utf-8"
    )
    code = main(
        [
            "examples",
            str(pack_path),
            "--catalog",
            str(plain),
            "--out",
            str(tmp_path / "examples.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "examples drawn from tickets, split dev (20 decisions)" in out
    assert main(["eval", "pack", str(pack_path), "--catalog", str(catalog_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "drawn from tickets, split dev" in err
    assert "evaluate on the held-out split" in err


# -- the catalog's table and file -------------------------------------------------------------

ENTRY = """
[[entries]]
id = "local"
provider = "fake"
wire_model_id = "m"
max_context_tokens = 1000
max_concurrent = 1
"""


def test_the_examples_file_round_trips_and_the_catalog_reads_it(tmp_path: Path) -> None:
    pack = pack_of(rows(), tmp_path)
    fitted = fit_examples(pack, catalog=fake_catalog(), k=2, seed=4)
    written = write_examples(fitted.examples, tmp_path / "examples.json")
    assert written.read_text(encoding="utf-8") == write_examples(
        fitted.examples, tmp_path / "again.json"
    ).read_text(encoding="utf-8")  # stable bytes
    data = json.loads(written.read_text(encoding="utf-8"))
    assert data["drawn_from"] == {
        "dataset": "tickets",
        "split": "dev",
        "digest": fitted.examples.source.digest,  # type: ignore[union-attr]  # fitted: known
        "method": "labeled",
        "k": 2,
        "seed": 4,
        "decisions": 20,
    }
    assert len(data["pool"]) == 20
    (tmp_path / "catalog.toml").write_text(
        ENTRY + '\n[entries.examples]\nfile = "examples.json"\n', encoding="utf-8"
    )
    entry = load_catalog(tmp_path / "catalog.toml").entry("local")
    assert entry.examples == fitted.examples
    assert entry.examples.for_role("noul") == fitted.examples.by_role["noul"]
    assert entry.examples.for_role("select") == ()


def test_an_inline_examples_table_parses(tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_text(
        ENTRY
        + """
[entries.examples]
drawn_from = { dataset = "notes", split = "dev", k = 1 }

[[entries.examples.select]]
state = "verdict: urgent"
question = { type = "noul", instructions = "Keep it?" }
answer = "yes"

[[entries.examples.choice]]
state = "a parcel is late"
question = { type = "choice", instructions = "Which team?", criteria = { ops = "x", tech = "y" } }
answer = "ops"
""",
        encoding="utf-8",
    )
    examples = load_catalog(tmp_path / "catalog.toml").entry("local").examples
    assert examples is not None
    assert examples.drawn_from == "notes, split dev, labeled k=1 seed=0"
    (select,) = examples.for_role("select")
    assert select == SolvedExample("verdict: urgent", Noul("Keep it?"), "yes")
    assert examples.for_role("choice")[0].answer == "ops"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("not json", "examples file examples.json is not valid JSON"),
        (
            '{"drawn_from": {"dataset": "d"}, "noul": [{"state": "s", "question": '
            '{"type": "noul", "instructions": "Q?"}, "answer": "maybe"}]}',
            "examples.noul[0].answer: a noul's answer is 'yes' or 'no', not 'maybe'",
        ),
        ('{"drawn_from": {"dataset": "d"}, "verdict": []}', "unknown examples key 'verdict'"),
        ('{"noul": []}', "examples.drawn_from is required"),
        (
            '{"drawn_from": {"dataset": "d"}, "select": [{"state": "s", "question": '
            '{"type": "choice", "instructions": "Q?", "criteria": {"a": "x"}}, "answer": "a"}]}',
            "examples.select holds a choice question: role 'select' takes noul questions",
        ),
        (
            '{"drawn_from": {"dataset": "d"}, "noul": [{"state": "s", "question": '
            '{"type": "noul"}, "answer": "yes"}]}',
            "examples.noul[0].question:",
        ),
        (
            '{"format": "harness-examples", "version": 9, "drawn_from": {"dataset": "d"}}',
            "version 9; this harness reads 'harness-examples' version 1: fit them again",
        ),
    ],
)
def test_a_bad_examples_file_is_one_line_naming_the_entry(
    tmp_path: Path, body: str, problem: str
) -> None:
    (tmp_path / "examples.json").write_text(body, encoding="utf-8")
    (tmp_path / "catalog.toml").write_text(
        ENTRY + '\n[entries.examples]\nfile = "examples.json"\n', encoding="utf-8"
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog(tmp_path / "catalog.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert "catalog entry 'local'" in message
    assert "examples file examples.json" in message
    assert problem in message


def test_a_missing_file_and_a_mixed_table_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(ENTRY + '\n[entries.examples]\nfile = "gone.json"\n', encoding="utf-8")
    with pytest.raises(
        CatalogError,
        match=r"catalog entry 'local': examples file gone.json "
        r"cannot be read \(FileNotFoundError\)",
    ):
        load_catalog(path)
    path.write_text(
        ENTRY + '\n[entries.examples]\nfile = "x.json"\ndrawn_from = "d"\n', encoding="utf-8"
    )
    with pytest.raises(CatalogError, match=r"examples\.file must be the only key"):
        load_catalog(path)
    with pytest.raises(CatalogError, match="examples must be an ExampleSet, not dict"):
        CatalogEntry(
            id="x",
            provider="fake",
            wire_model_id="m",
            max_context_tokens=10,
            max_concurrent=1,
            examples={"noul": []},  # type: ignore[arg-type]  # the wrong type, on purpose
        )
    with pytest.raises(CatalogError, match="where: examples must be a table"):
        examples_from_table([], "where")


# -- the calibration, fitted with the examples, for any entry ---------------------------------


class Skewed:
    """A scripted local model whose yes/no is ranked right but far too sure of no."""

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        text = json.dumps(request.state)
        number = int(text.split("ticket ")[1].split(":")[0])
        answers: dict[str, Answer] = {}
        for question_id, question in request.questions.items():
            if isinstance(question, Noul):
                truth = "no money" not in text
                answers[question_id] = yes((0.3 if truth else 0.02) + (number % 5) / 100)
            elif isinstance(question, Choice):
                answers[question_id] = choose(question, list(TEAMS)[number % 4], probability=0.4)
        return DecisionResponse(request, answers, model="skewed")

    async def aclose(self) -> None:
        pass


def test_the_calibration_is_fitted_with_the_examples_and_applied_per_role(
    tmp_path: Path,
) -> None:
    from harness.catalog import PlattMap, TemperatureMap
    from harness.evals import write_calibration

    pack = pack_of(rows(60), tmp_path)
    with override(model=Skewed()):
        fitted = fit_examples(pack, catalog=fake_catalog(), k=2, calibrate=True, resamples=20)
    calibration = fitted.calibration
    assert calibration is not None
    assert calibration.fitted_on is not None
    assert "split dev" in calibration.fitted_on
    assert isinstance(calibration.roles["noul"], PlattMap)
    assert isinstance(calibration.roles["choice"], TemperatureMap)
    assert calibration.roles["choice"].temperature < 1  # right at 0.4: sharpened
    # fitted on the dev decisions no example shows: 32 dev tickets less the examples' states
    shown = {e.state for found in fitted.examples.by_role.values() for e in found}
    assert f"({32 - len(shown)} decisions)" in calibration.fitted_on
    write_examples(fitted.examples, tmp_path / "examples.json")
    write_calibration(calibration, tmp_path / "calibration.toml")
    (tmp_path / "catalog.toml").write_text(
        '[pins]\ndecision = "local"\n'
        + ENTRY
        + '\n[entries.examples]\nfile = "examples.json"\n'
        + '\n[entries.calibration]\nfile = "calibration.toml"\n',
        encoding="utf-8",
    )
    catalog = load_catalog(tmp_path / "catalog.toml")
    test = DecisionPack([d for d in pack if "test" in d.tags], name="test")
    with override(model=Skewed()):
        raw = evaluate_pack(test, catalog=fake_catalog(), resamples=20)
        mapped = evaluate_pack(test, catalog=catalog, resamples=20)
    platt = calibration.roles["noul"]
    by_case = {d.case: d for d in raw.decisions if d.role == "refund"}
    for decision in mapped.decisions:
        before = by_case.get(decision.case) if decision.role == "refund" else None
        if before is not None:
            assert decision.probabilities[0] == pytest.approx(
                platt.probability(before.probabilities[0])
            )
    assert mapped.metric("refund.brier").value < raw.metric("refund.brier").value  # type: ignore[operator]  # both defined


def test_a_calibration_mapped_offline_scores_as_the_calibrated_entry_answers(
    tmp_path: Path,
) -> None:
    from scripts.local_examples import mapped

    pack = pack_of(rows(60), tmp_path)
    with override(model=Skewed()):
        fitted = fit_examples(pack, catalog=fake_catalog(), k=2, calibrate=True, resamples=20)
        assert fitted.calibration is not None
        entry = attrs.evolve(CatalogEntry.fake("local"), calibration=fitted.calibration)
        test = DecisionPack([d for d in pack if "test" in d.tags], name="test")
        raw = evaluate_pack(test, catalog=fake_catalog(), resamples=50)
        asked = evaluate_pack(test, catalog=Catalog([entry], {"decision": "local"}), resamples=50)
    offline = mapped(raw, fitted.calibration)
    for name, estimate in asked.metrics.items():
        assert offline.metrics[name].value == pytest.approx(estimate.value), name
        assert offline.metrics[name].low == pytest.approx(estimate.low), name


def test_the_shipped_gemma_examples_come_from_the_dev_split_and_load(tmp_path: Path) -> None:
    from harness.catalog import state_key
    from harness.evals.data import data_path

    folder = Path(data_path("decisions.jsonl")).parent / "gemma"
    shipped = DecisionPack.load(data_path("decisions.jsonl"))
    test_states = {state_key(d.request.state) for d in shipped if "test" in d.tags}
    dev_states = {state_key(d.request.state) for d in shipped if "dev" in d.tags}
    files = sorted(folder.glob("examples-*.json"))
    assert files
    for path in files:
        table = json.loads(path.read_text(encoding="utf-8"))
        examples = examples_from_table(table, path.name)
        assert examples.source is not None
        assert examples.source.split == "dev"
        assert examples.pool
        assert examples.pool <= dev_states
        assert not examples.pool & test_states
        for found in examples.by_role.values():
            assert {state_key(e.state) for e in found} <= examples.pool
        calibration = folder / path.name.replace("examples-", "calibration-").replace(
            ".json", ".toml"
        )
        (tmp_path / "catalog.toml").write_text(
            ENTRY
            + f'\n[entries.examples]\nfile = "{path}"\n'
            + (
                f'\n[entries.calibration]\nfile = "{calibration}"\n' if calibration.exists() else ""
            ),
            encoding="utf-8",
        )
        assert load_catalog(tmp_path / "catalog.toml").entry("local").examples == examples

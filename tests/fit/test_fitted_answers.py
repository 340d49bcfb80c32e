"""What a fitted decider answers: properties over generated requests, the base model for what no
head reads, the same answers in every process, and refusals of data that cannot be fitted."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.catalog import entry_for_model
from harness.decision import (
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    Noul,
    NoulAnswer,
    Score,
    ScoreAnswer,
)
from harness.evals import DecisionPack, DrawnSplitError, evaluate_pack
from harness.fit import FitOutcome, fit_decider, read_source
from harness.providers import FittedError, client_for

from .conftest import TRIAGE_PACK

WORDS = st.text(alphabet="abcdefghij klmnop,.", min_size=0, max_size=60)


def _ask(outcome: FitOutcome, request: DecisionRequest) -> dict[str, object]:
    entry = entry_for_model(f"fitted:{outcome.path}")
    assert entry is not None

    async def go() -> dict[str, object]:
        client = client_for(entry)
        try:
            response = await client.decide(request, entry)
        finally:
            await client.aclose()
        return {"answers": dict(response.answers), "reading": response.reading}

    return asyncio.run(go())


def _triage_request(lines: list[str], refs: list[str]) -> DecisionRequest:
    state = {"objective": "keep the parts that need action", "artifacts": lines, "done": ["x"]}
    return DecisionRequest(
        state,
        {
            f"select_{ref}": Noul(f"Does {ref} belong in the answer to the objective?")
            for ref in refs
        },
    )


URGENT = 'verdict#7 (verdict): {"note":"renew the gym card right now","urgent":true}'


@given(others=st.lists(WORDS, max_size=12))
def test_a_selection_does_not_depend_on_the_other_artifacts(
    triage_fit: FitOutcome, others: list[str]
) -> None:
    alone = _ask(triage_fit, _triage_request([URGENT], ["verdict#7"]))
    crowd = [f"note#{i + 20} (note): {text}" for i, text in enumerate(others)]
    among = _ask(triage_fit, _triage_request([*crowd, URGENT, *crowd], ["verdict#7"]))
    p_alone = alone["answers"]["select_verdict#7"]  # type: ignore[index]  # the answers dict
    p_among = among["answers"]["select_verdict#7"]  # type: ignore[index]
    assert isinstance(p_alone, NoulAnswer)
    assert isinstance(p_among, NoulAnswer)
    assert p_alone.probability == p_among.probability


def test_a_selection_reads_its_verdict(triage_fit: FitOutcome) -> None:
    calm = 'verdict#8 (verdict): {"note":"no rush to send the invoice","urgent":false}'
    found = _ask(triage_fit, _triage_request([URGENT, calm], ["verdict#7", "verdict#8"]))
    answers = found["answers"]
    assert answers["select_verdict#7"].probability > 0.9  # type: ignore[index]
    assert answers["select_verdict#8"].probability < 0.1  # type: ignore[index]
    by = found["reading"]["answered_by"]  # type: ignore[index]
    assert by["select_verdict#7"].startswith("fitted select@")


TEAM = Choice(
    "Which team should handle this support ticket?",
    {
        "billing": "charges, invoices and prices",
        "technical": "the product does not work as it should",
        "account": "logins, passwords and who may use the account",
        "shipping": "parcels, delivery and addresses",
    },
)
URGENCY = Score("How urgent is this ticket?", ["low", "medium", "high"])


@given(ticket=WORDS)
def test_choice_and_score_probabilities_sum_to_one(packs_fit: FitOutcome, ticket: str) -> None:
    request = DecisionRequest({"ticket": ticket}, {"team": TEAM, "urgency": URGENCY})
    answers = _ask(packs_fit, request)["answers"]
    team, urgency = answers["team"], answers["urgency"]  # type: ignore[index]
    assert isinstance(team, ChoiceAnswer)
    assert isinstance(urgency, ScoreAnswer)
    assert sum(team.probabilities.values()) == pytest.approx(1.0, abs=1e-9)
    assert team.probabilities[team.choice] == max(team.probabilities.values())
    assert sum(urgency.probabilities) == pytest.approx(1.0, abs=1e-9)
    assert 0.0 <= urgency.score <= 2.0


def test_a_question_no_head_reads_goes_to_the_base_model(packs_fit: FitOutcome) -> None:
    request = DecisionRequest(
        {"ticket": "my parcel never came"},
        {
            "team": TEAM,
            "weather": Noul("Is it raining where the customer lives?"),
            "only": Choice("Which?", ["the one"]),
        },
    )
    found = _ask(packs_fit, request)
    by = found["reading"]["answered_by"]  # type: ignore[index]
    assert by["team"].startswith("fitted choice:Which team should handle")
    assert by["weather"] == "base embedded"
    assert by["only"] == "local (one option)"
    assert found["reading"]["base_model"] == "sparrow-nano-general-v1.1"  # type: ignore[index]


def test_answers_are_the_same_in_other_processes_and_hash_seeds(triage_fit: FitOutcome) -> None:
    script = (
        "import asyncio, json, sys\n"
        "from harness.catalog import entry_for_model\n"
        "from harness.decision import DecisionRequest, Noul\n"
        "from harness.providers import client_for\n"
        "entry = entry_for_model('fitted:' + sys.argv[1])\n"
        "lines = json.loads(sys.argv[2])\n"
        "refs = [line.split(' ')[0] for line in lines]\n"
        "request = DecisionRequest({'objective': 'o', 'artifacts': lines},"
        " {'select_' + r: Noul('Does ' + r + ' belong?') for r in refs})\n"
        "async def go():\n"
        "    client = client_for(entry)\n"
        "    response = await client.decide(request, entry)\n"
        "    await client.aclose()\n"
        "    return {q: a.probability for q, a in response.answers.items()}\n"
        "print(json.dumps(asyncio.run(go()), sort_keys=True))\n"
    )
    lines = [URGENT, 'verdict#9 (verdict): {"note":"maybe later","urgent":false}']
    seen = set()
    for seed in ("0", "1", "12345"):
        done = subprocess.run(
            [sys.executable, "-c", script, str(triage_fit.path), json.dumps(lines)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        seen.add(done.stdout)
    assert len(seen) == 1, seen


def _pack(path: Path, labels: list[bool], tags: list[str]) -> Path:
    lines = []
    for i, (label, tag) in enumerate(zip(labels, tags, strict=True)):
        request = {
            "state": {"ticket": f"ticket number {i} about {'money' if label else 'parcels'}"},
            "questions": {"refund": {"type": "noul", "instructions": "Refund?"}},
        }
        lines.append(
            json.dumps(
                {"name": f"d{i}", "tags": [tag], "request": request, "labels": {"refund": label}}
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_head_with_one_class_is_refused_by_name(tmp_path: Path) -> None:
    pack = _pack(tmp_path / "p.jsonl", [False] * 8 + [True, False], ["dev"] * 8 + ["test"] * 2)
    with pytest.raises(FittedError, match="every label is false") as error:
        fit_decider([read_source(str(pack))], tmp_path / "m.json", encoder="tfidf")
    assert "noul:Refund?" in str(error.value)
    assert not (tmp_path / "m.json").exists()


def test_no_decision_to_fit_on_is_refused_by_name(tmp_path: Path) -> None:
    pack = _pack(tmp_path / "p.jsonl", [True, False], ["test", "test"])
    with pytest.raises(FittedError, match="no decision to fit on: tag the training decisions"):
        fit_decider([read_source(str(pack))], tmp_path / "m.json", encoder="tfidf")


def test_an_eval_on_the_decisions_fitted_on_is_refused(triage_fit: FitOutcome) -> None:
    pack = DecisionPack.load(TRIAGE_PACK)
    with pytest.raises(DrawnSplitError, match="was fitted on 70 of"):
        evaluate_pack(pack, model=f"fitted:{triage_fit.path}", resamples=100)
    held = DecisionPack((d for d in pack if "test" in d.tags), name="held")
    report = evaluate_pack(held, model=f"fitted:{triage_fit.path}", resamples=100)
    assert report.metric("select.auc").value is not None
    assert report.metric("select.auc").value > 0.9  # type: ignore[operator]  # checked above

"""The demo decides the same wherever its folder is: nothing the model reads names a place on
disk, only paths relative to the listed folder."""

from __future__ import annotations

import pathlib
import shutil
from collections.abc import Mapping

from harness.catalog import Catalog, CatalogEntry
from harness.decision import Answer, Choice, DecisionRequest
from harness.demo import corpus_path, run_demo
from harness.providers import FakeDecisionModel, choose, yes
from harness.record import RunRecord

PREFERENCE = ("read_statements", "list_folder", "finish")
"""The fake model's moves, most wanted first: it reads documents into statements as it goes."""


def eager_reader(request: DecisionRequest) -> Mapping[str, Answer]:
    """Read what is listed, list the folder; first candidate; select all."""
    answers: dict[str, Answer] = {}
    for question_id, question in request.questions.items():
        if isinstance(question, Choice):
            options = list(question.options)
            if question_id == "next":
                key = next(move for move in PREFERENCE if move in options)
            else:
                key = options[0]
            answers[question_id] = choose(question, key)
        else:
            answers[question_id] = yes(0.9)
    return answers


async def demo_on(folder: pathlib.Path) -> tuple[RunRecord, FakeDecisionModel]:
    entry = CatalogEntry(
        id="fake",
        provider="fake",
        wire_model_id="fake-decider",
        max_context_tokens=1_000_000,
        max_concurrent=1,
    )
    model = FakeDecisionModel(eager_reader)
    run = await run_demo(
        folder,
        max_turns=8,
        catalog=Catalog([entry], {"decision": "fake"}),
        clients={"fake": model},
    )
    return run.record, model


async def test_the_model_reads_the_same_bytes_wherever_the_folder_is(
    tmp_path: pathlib.Path,
) -> None:
    short = tmp_path / "a" / "corpus"
    deep = tmp_path / "b" / "a-much-longer-folder-name" / "installed" / "site-packages" / "corpus"
    shutil.copytree(corpus_path(), short)
    shutil.copytree(corpus_path(), deep)
    first, first_model = await demo_on(short)
    second, second_model = await demo_on(deep)
    shipped, shipped_model = await demo_on(corpus_path())
    # The run read, split and answered: the comparison covers every kind of digest line.
    assert {"list_folder", "read_statements"} <= {t.tool for t in first.turns}
    assert first.answer
    # Byte for byte the same requests, so the same decisions, wherever the folder sits.
    assert first_model.bodies == second_model.bodies == shipped_model.bodies
    assert first.turns == second.turns == shipped.turns
    assert first.artifacts == second.artifacts == shipped.artifacts
    assert [a.value for a in first.answer] == [a.value for a in second.answer]
    # And no digest (nor any other byte the model read) names where the folder is.
    places = {str(tmp_path), str(corpus_path()), str(corpus_path().parent)}
    for body in first_model.bodies + second_model.bodies + shipped_model.bodies:
        text = body.decode("utf-8")
        assert not [place for place in places if place in text]
    for line in first.artifacts.values():
        words = line.split(": ", 1)[1]
        assert not words.startswith(("/", ".../")), line
    assert first.artifacts["folder#1"] == "folder#1 (folder): corpus"

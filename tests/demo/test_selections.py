"""The demo's labelled selections: the training folder, both answer keys and both packs that
``python -m scripts.demo_selections`` makes from what the demo thinker asks at its finish."""

from __future__ import annotations

import json
import re
import sqlite3
import zipfile
from collections import Counter
from pathlib import Path

import attrs
import pytest

from harness.artifacts import DIGEST_CHARS
from harness.decision import Noul
from harness.demo import AnswerKey, answer_key, split_into_statements, survey_folder
from harness.evals import DecisionPack
from scripts import demo_selections
from scripts.demo_selections import (
    FOLDERS,
    MAX_PACK_BYTES,
    PackFolder,
    first_difference,
    main,
    read_key,
)

TRAINING, DEMO = FOLDERS
PRICE_TALK = re.compile(r"\b(?:GBP|USD|SEK|EUR|pence|prices?|costs?|\d+%)(?:\W|$)", re.IGNORECASE)
"""A statement that talks about a price: an amount, a percentage or the word."""


def statements_by_file(folder: PackFolder) -> dict[str, list[str]]:
    """Every text file the demo's listing offers, with the statements the splitter cuts."""
    return {
        file.path: split_into_statements((folder.corpus / file.path).read_text("utf-8-sig"))
        for file in survey_folder(str(folder.corpus))
        if file.readable
    }


def asked(folder: PackFolder) -> tuple[DecisionPack, dict[str, list[tuple[str, str, bool]]]]:
    """The folder's pack and, per file, ``(question id, statement, label)`` of each question,
    the statement read from the digest line the question's ref has in the state."""
    pack = DecisionPack.load(folder.pack)
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for decision in pack:
        state = decision.request.state
        assert isinstance(state, dict)
        lines = dict(str(line).split(" (", 1) for line in state["artifacts"])
        source = decision.name.removeprefix(f"{folder.name}/")
        for question_id in decision.request.questions:
            ref = question_id.removeprefix("select_")
            kind, _, text = lines[ref].partition("): ")
            assert kind == "statement", (decision.name, ref)
            label = decision.labels[question_id]
            assert isinstance(label, bool)
            found.setdefault(source, []).append((question_id, text, label))
    return pack, found


def test_the_packs_are_what_the_demo_thinker_asks_now(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0
    assert capsys.readouterr().err == ""


def test_check_fails_naming_the_first_decision_that_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = DEMO.pack.read_bytes().decode().splitlines(keepends=True)
    edited = json.loads(shipped[2])
    first_label = next(iter(edited["labels"]))
    edited["labels"][first_label] = not edited["labels"][first_label]
    stale = tmp_path / "selections.jsonl"
    stale.write_text("".join([*shipped[:2], json.dumps(edited) + "\n", *shipped[3:]]))
    monkeypatch.setattr(demo_selections, "FOLDERS", (attrs.evolve(DEMO, pack=stale),))
    assert main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"line 3 ({edited['name']}) differs" in err
    assert "--write" in err
    # what first_difference says of a missing, a short and an identical pack
    whole = "".join(shipped).encode()
    assert first_difference(whole, None) == "is missing"
    assert first_difference(whole, "".join(shipped[:-1]).encode()) == (
        f"has {len(shipped) - 1} lines, not {len(shipped)}"
    )
    assert first_difference(whole, whole) is None


def test_the_key_reader_reads_the_demos_key_as_the_demo_does() -> None:
    assert read_key(DEMO.key) == answer_key()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_every_planted_sentence_is_a_statement_labelled_true_exactly_once(
    folder: PackFolder,
) -> None:
    key = read_key(folder.key)
    files = statements_by_file(folder)
    for planted in key.decisions:
        assert planted.sentence in files[planted.file], planted
        # the model reads every planted sentence whole: no digest cuts it
        assert len(planted.sentence) <= DIGEST_CHARS, planted
    _, found = asked(folder)
    true = Counter(
        (source, text)
        for source, questions in found.items()
        for _, text, label in questions
        if label
    )
    assert true == Counter((planted.file, planted.sentence) for planted in key.decisions)
    assert all(count == 1 for count in true.values())


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda folder: folder.name)
def test_every_statement_of_every_text_file_is_asked_once_over_one_finishing_state(
    folder: PackFolder,
) -> None:
    pack, found = asked(folder)
    files = statements_by_file(folder)
    with_statements = {path: texts for path, texts in files.items() if texts}
    assert {path: [text for _, text, _ in questions] for path, questions in found.items()} == (
        with_statements
    )
    question_ids = [qid for questions in found.values() for qid, _, _ in questions]
    assert len(question_ids) == len(set(question_ids)) == sum(map(len, files.values()))
    states = {json.dumps(decision.request.state, sort_keys=True) for decision in pack}
    assert len(states) == 1  # every decision holds the thinker's one finishing state
    state = pack.decisions[0].request.state
    assert isinstance(state, dict)
    assert state["objective"] == read_key(folder.key).objective
    reads = [line for line in state["done"] if str(line).startswith("read_statements on ")]
    assert len(reads) == len(files)  # the scripted run read every text file
    for decision in pack:
        assert decision.tags == (folder.split, "demo", "select")
        for question_id, question in decision.request.questions.items():
            ref = question_id.removeprefix("select_")
            assert isinstance(question, Noul)
            assert question.instructions == f"Does {ref} belong in the answer to the objective?"


def test_the_packs_are_split_by_folder_and_stay_small() -> None:
    assert (TRAINING.split, DEMO.split) == ("train", "test")
    for folder in FOLDERS:
        assert folder.pack.stat().st_size < MAX_PACK_BYTES
        tags = {tag for decision in DecisionPack.load(folder.pack) for tag in decision.tags}
        assert tags == {folder.split, "demo", "select"}


def test_the_training_folder_shares_no_statement_with_the_demos_folder() -> None:
    training = {text for texts in statements_by_file(TRAINING).values() for text in texts}
    demo = {text for texts in statements_by_file(DEMO).values() for text in texts}
    assert not training & demo
    assert not read_key(TRAINING.key).sentences & demo
    assert not read_key(DEMO.key).sentences & training
    shared_files = {
        path.relative_to(TRAINING.corpus) for path in TRAINING.corpus.rglob("*") if path.is_file()
    } & {path.relative_to(DEMO.corpus) for path in DEMO.corpus.rglob("*") if path.is_file()}
    assert {str(path) for path in shared_files} <= {"README.md", "CHANGELOG.md"}


def test_the_training_folder_plants_a_dozen_decisions_among_many_hard_negatives() -> None:
    key: AnswerKey = read_key(TRAINING.key)
    assert 10 <= len(key.decisions) <= 14
    assert len(key.files) >= 10  # in minutes, emails, notes, policies, support, code, data, chat
    negatives = [
        text
        for texts in statements_by_file(TRAINING).values()
        for text in texts
        if text not in key.sentences and PRICE_TALK.search(text)
    ]
    assert len(negatives) >= 3 * len(key.decisions)


def test_the_training_folder_holds_every_kind_of_file_the_listing_leaves_out() -> None:
    files = [path for path in TRAINING.corpus.rglob("*") if path.is_file()]
    assert 28 <= len(files) <= 40
    assert sum(path.stat().st_size for path in files) < 200_000
    kinds = Counter(file.kind for file in survey_folder(str(TRAINING.corpus)))
    assert set(kinds) == {"text", "code", "data", "office", "pdf", "image", "binary", "empty"}
    assert kinds["empty"] == 1
    assert kinds["text"] >= 15
    root = TRAINING.corpus
    for office in ("finance/pricing-resolution-2028-01.docx", "finance/price-book-2028.xlsx"):
        with zipfile.ZipFile(root / office) as archive:
            assert archive.testzip() is None
            assert "[Content_Types].xml" in archive.namelist()
    pdf = (root / "finance/q4-2027-report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.4")
    assert pdf.rstrip().endswith(b"%%EOF")
    assert int(pdf.rsplit(b"startxref", 1)[1].split()[0]) == pdf.index(b"xref\n")
    png = (root / "assets/fernhollow-logo.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert png.endswith(b"IEND\xaeB`\x82")
    jpeg = (root / "assets/field-photo.jpg").read_bytes()
    assert jpeg.startswith(b"\xff\xd8\xff")
    assert jpeg.endswith(b"\xff\xd9")
    with sqlite3.connect(f"file:{root / 'archive/readings-2027.db'}?mode=ro", uri=True) as db:
        assert db.execute("SELECT count(*) FROM readings").fetchone() == (3,)
    with pytest.raises(UnicodeDecodeError):
        (root / "archive/invoices-2019.txt").read_bytes().decode("utf-8")

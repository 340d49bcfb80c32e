"""The demo's selections as labelled decisions: what the demo thinker asks about every statement
of a folder when it finishes, labelled by the folder's answer key.

Two folders hold the demo's task (find the statements that decide a price change and say from
when it applies), each with its answer key: the demo's own (``harness/demo/corpus``, Larkspur
Cloud) and a training folder (``harness/demo/training/corpus``, Fernhollow Instruments: another
company, its own planted decisions and hard negatives). A decider is fitted on the training
folder's pack (tag ``train``) and reported on the demo's (tag ``test``); the demo's folder is
never fitted on.

How a pack is made: the real demo thinker (:func:`harness.demo.run_demo`, through the same
dispatcher and record as ``harness demo``) runs on the folder with a scripted model that lists
the folder, reads every text file in listed order and says yes to every selection. Once every
file is read no move is left, and the thinker's last request asks one ``select_<ref>`` question
per statement of the folder, over a state holding every digest line. That request is split by
file and each statement labelled ``true`` exactly when the key holds it (its file and sentence).
Which statement a ref is comes from the run's own answer (every statement, in world order), and
each one's digest line is checked to be in the state.

**One decision per text file, not per statement.** The finishing state holds every digest line
of the folder: about 19 kB for the demo's (210 lines, 160 statements) and 24 kB for the training
folder's (253 lines, 193 statements). One decision per statement, each with that whole state,
would make packs of 3.1 MB and 4.7 MB, most of it the same state again and again. Each decision
here is the thinker's finishing request cut to one file's selection questions: the state is the
one the thinker sent, unchanged, and each question is its own (id, instructions, criteria), with
one label per question. A model answering a decision reads exactly what the thinker's model
reads about those statements (a decider that reads only a statement's own digest line and the
objective finds them there too); the packs are about 0.44 MB and 0.67 MB (:data:`MAX_PACK_BYTES`
refuses one over 3 MB). A file without statements (CSV and JSON data) gives no decision. Each
decision is named ``<folder>/<file>`` (``demo/...``, ``training/...``) and tagged with its
split, ``demo`` and ``select``; its labels are by ``select_<ref>``, so statements of one file,
which are read together, stay in one decision when a pack is resampled by decision.

The requests are the thinker's own, so a pack changes when what the thinker asks changes (its
question scheme, the digest formatters, the statement splitter, a folder's files):
``python -m scripts.demo_selections --check`` (run by ``tests/demo``) then fails naming the first
difference until ``--write`` makes the packs again.
"""

from __future__ import annotations

import argparse
import asyncio

# the stdlib's json: lines with json's default separators, like the shipped data files
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

from harness.artifacts import digest_line
from harness.decision import Answer, Choice, DecisionRequest, NoulAnswer, Question, systemone
from harness.demo import (
    POLICY_ENTRY,
    AnswerKey,
    PlantedDecision,
    Statement,
    answer_statements,
    corpus_path,
    demo_formatters,
    policy_catalog,
    run_demo,
    survey_folder,
)
from harness.providers import FakeDecisionModel, choose

__all__ = [
    "FOLDERS",
    "MAX_PACK_BYTES",
    "PackFolder",
    "first_difference",
    "main",
    "pack_bytes",
    "pack_lines",
    "read_everything",
    "read_key",
]

DEMO: Final = corpus_path().parent
"""The ``harness/demo`` package folder."""

MAX_PACK_BYTES: Final = 3_000_000
"""A pack larger than this is refused: it ships in the wheel."""

LIST: Final = "list_folder"
READ: Final = "read_statements"
FINISH: Final = "finish"


@attrs.frozen
class PackFolder:
    """A folder of the demo's task: its name in decision names, where it is, its answer key,
    where its pack is written and the split its decisions are tagged with."""

    name: str
    corpus: Path
    key: Path
    pack: Path
    split: str


FOLDERS: Final = (
    PackFolder(
        "training",
        DEMO / "training" / "corpus",
        DEMO / "training" / "answer_key.json",
        DEMO / "training" / "selections.jsonl",
        "train",
    ),
    PackFolder(
        "demo", DEMO / "corpus", DEMO / "answer_key.json", DEMO / "selections.jsonl", "test"
    ),
)
"""The training folder (fitted on) and the demo's own folder (only ever reported on)."""


def read_key(path: Path) -> AnswerKey:
    """The answer key at ``path`` (the format of ``harness/demo/answer_key.json``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    decisions = tuple(
        PlantedDecision(str(item["file"]), str(item["sentence"])) for item in data["decisions"]
    )
    return AnswerKey(str(data["objective"]), decisions)


def read_everything(request: DecisionRequest) -> Mapping[str, Answer]:
    """The scripted model: list the folder, read the first unread text file (listed order)
    while one is left, then finish; yes (1.0) to every selection, so the run's answer holds
    every statement in world order."""
    questions = request.questions
    answers: dict[str, Answer] = {
        qid: NoulAnswer(1.0) for qid in questions if qid.startswith("select_")
    }
    nxt = questions.get("next")
    if not isinstance(nxt, Choice):
        return answers  # a selection-only request: nothing is left to read
    for qid, question in questions.items():
        if qid.endswith("_input") and isinstance(question, Choice):
            answers[qid] = choose(question, next(iter(question.options)))
    move = LIST if LIST in nxt.options else READ if READ in nxt.options else FINISH
    answers["next"] = choose(nxt, move)
    return answers


def _state_lines(request: DecisionRequest, field: str) -> list[str]:
    """The lines of the thinker's state under ``field`` (``artifacts``, ``done``)."""
    state = request.state
    lines = state.get(field) if isinstance(state, Mapping) else None
    return [str(line) for line in lines] if isinstance(lines, list) else []


async def _finishing_request(
    folder: Path,
) -> tuple[DecisionRequest, list[tuple[str, str]]]:
    """The thinker's last request on ``folder`` under :func:`read_everything`, and the run's
    answer (``(source, text)`` of every statement, in world order)."""
    readable = sum(1 for file in survey_folder(str(folder)) if file.readable)
    model = FakeDecisionModel(read_everything)
    run = await run_demo(
        folder,
        max_turns=1 + readable,  # the listing, then every text file
        catalog=policy_catalog(),
        clients={POLICY_ENTRY: model},
    )
    last = model.requests[-1]
    if "next" in last.questions:
        raise AssertionError(f"the scripted run of {folder} finished with moves left")
    reads = [line for line in _state_lines(last, "done") if line.startswith(f"{READ} on ")]
    failed = [line for line in reads if " failed: " in line]
    if len(reads) != readable or failed:
        raise AssertionError(f"the scripted run of {folder} read {len(reads)} of {readable}")
    return last, answer_statements(run.record)


def pack_lines(folder: PackFolder) -> list[dict[str, object]]:
    """The pack's lines for ``folder``: a decision per text file with statements, in listed
    order, asking the thinker's finishing questions about that file's statements."""
    key = read_key(folder.key)
    request, statements = asyncio.run(_finishing_request(folder.corpus))
    selections = [qid for qid in request.questions if qid.startswith("select_")]
    if len(selections) != len(statements):
        raise AssertionError(f"{len(selections)} selections for {len(statements)} statements")
    lines_seen = set(_state_lines(request, "artifacts"))
    formatters = demo_formatters()
    by_file: dict[str, dict[str, Question]] = {}
    labels: dict[str, dict[str, bool]] = {}
    for qid, (source, text) in zip(selections, statements, strict=True):
        ref = qid.removeprefix("select_")
        if digest_line(ref, Statement(source, text), formatters) not in lines_seen:
            raise AssertionError(f"{ref} is not {source}: {text!r} in the state")
        by_file.setdefault(source, {})[qid] = request.questions[qid]
        labels.setdefault(source, {})[qid] = key.holds(source, text)
    lines: list[dict[str, object]] = []
    for source, questions in by_file.items():
        one = DecisionRequest(request.state, questions)
        lines.append(
            {
                "name": f"{folder.name}/{source}",
                "tags": [folder.split, "demo", "select"],
                "request": systemone.encode_request(one, None),
                "labels": labels[source],
            }
        )
    return lines


def pack_bytes(folder: PackFolder) -> bytes:
    """The pack file of ``folder``: one JSON line per decision (refused past
    :data:`MAX_PACK_BYTES`)."""
    lines = pack_lines(folder)
    content = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    if len(content) > MAX_PACK_BYTES:
        raise AssertionError(f"{folder.pack.name} would be {len(content)} bytes")
    return content


def first_difference(expected: bytes, found: bytes | None) -> str | None:
    """Where ``found`` (a pack on disk, ``None`` when missing) first differs from
    ``expected``: ``"is missing"``, ``"line 3 (demo/CHANGELOG.md) differs"``, ``"has 4 lines,
    not 5"``; ``None`` when they are the same."""
    if found is None:
        return "is missing"
    if found == expected:
        return None
    want = expected.decode().splitlines()
    have = found.decode(errors="replace").splitlines()
    for number, (line, other) in enumerate(zip(want, have, strict=False), 1):
        if line != other:
            name = json.loads(line)["name"]
            return f"line {number} ({name}) differs"
    if len(want) != len(have):
        return f"has {len(have)} lines, not {len(want)}"
    return "differs in its line endings"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(DEMO.parents[1]))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    """``--write`` the packs, or ``--check`` that they are what the thinker asks now."""
    parser = argparse.ArgumentParser(prog="python -m scripts.demo_selections")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="make the packs again")
    mode.add_argument("--check", action="store_true", help="fail when a pack differs")
    args = parser.parse_args(argv)
    for folder in FOLDERS:
        content = pack_bytes(folder)
        if args.write:
            folder.pack.write_bytes(content)
            print(f"wrote {_shown(folder.pack)} ({len(content)} bytes)")
            continue
        found = folder.pack.read_bytes() if folder.pack.is_file() else None
        problem = first_difference(content, found)
        if problem is not None:
            print(
                f"{_shown(folder.pack)} {problem}: run python -m scripts.demo_selections --write",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

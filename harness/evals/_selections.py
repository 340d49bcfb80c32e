"""What each selection of an eval's runs read, kept in the eval's folder, and read back as
labelled decisions (the source ``harness examples`` draws a thinker's ``select`` examples from).

A thinker's answer keeps the candidates its finishing turn selected, each with its probability;
the request that turn asked (the run's state and a ``select_<ref>`` question per candidate) is
kept here, in ``<out>/selections.jsonl``, one line a case::

    {"line": 3, "case": "triage-03", "input": "3f0c9a...",
     "request": {"state": {...}, "questions": {"select_verdict#1": {...}, ...}}}

``input`` is a digest of the case's input (:func:`harness.catalog.state_key` of its JSON), so
examples drawn from these runs name the inputs they came from and an eval of the same cases is
refused (:class:`harness.evals.DrawnSplitError`). ``request`` holds the finishing request's state
and its selection questions only, as a System One body writes them.

The eval's own client answers through :class:`SelectionKeeper`, which keeps the last few
requests asking a selection per run input (the state's first artifact line); each case's line
is the last of those whose first artifact is the case's input (as the case's record shows it)
and whose selection questions are the candidates its record's finishing turn selected. A case
with no record, no finishing turn or under a client the eval does not hold
(``harness.override``, a cassette, Ray workers) keeps no line.

:func:`runs_pack` reads an eval folder's lines back as a :class:`DecisionPack`: each selection
labelled by the case's expected answer (``true`` when the candidate's key is expected), tagged
with its case's tags (its split).
"""

from __future__ import annotations

import json  # the stdlib: selection lines with json's default separators, as the folder holds
import os
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import attrs

from harness.catalog import CatalogEntry, state_key
from harness.decision import DecisionRequest, DecisionResponse, JsonValue, RequestValidationError
from harness.decision import systemone as _systemone
from harness.decision._internal import load_json
from harness.evals._folder import EvalError, read_results
from harness.evals._pack import DecisionPack, LabelledDecision
from harness.evals._report import load_report
from harness.evals._rows import DatasetError
from harness.providers import DecisionClient

__all__ = [
    "SELECTIONS_FILE",
    "RunsSource",
    "SelectionKeeper",
    "input_key",
    "keep_selections",
    "runs_pack",
]

SELECTIONS_FILE: Final = "selections.jsonl"
SELECT_PREFIX: Final = "select_"


def input_key(value: JsonValue) -> str:
    """The digest of a case's input (its JSON) that drawn examples keep in their pool."""
    return state_key(value)


KEPT_PER_INPUT: Final = 8
"""Requests kept per input (the last ones asked): a run's finishing request is its last, so a few
cover runs of equal inputs in flight at once, and memory stays bounded by the cases."""


class SelectionKeeper:
    """A :class:`~harness.providers.DecisionClient` that answers through ``inner`` and keeps
    the last requests asking a ``select_`` question, by the run's input (the state's first
    artifact line), in the order asked."""

    def __init__(self, inner: DecisionClient) -> None:
        self.inner = inner
        self.asked: dict[str, deque[DecisionRequest]] = {}

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        response = await self.inner.decide(request, entry, timeout=timeout)
        if any(question.startswith(SELECT_PREFIX) for question in request.questions):
            first = _first_artifact(request.state)
            if first is not None:
                kept = self.asked.setdefault(first, deque(maxlen=KEPT_PER_INPUT))
                kept.append(request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def _first_artifact(state: JsonValue) -> str | None:
    if isinstance(state, Mapping):
        artifacts = state.get("artifacts")
        if isinstance(artifacts, list) and artifacts and isinstance(artifacts[0], str):
            return artifacts[0]
    return None


def _record_facts(path: Path) -> tuple[str, frozenset[str]] | None:
    """The input's line and the refs the finishing turn selected, from a case's record."""
    try:
        data = load_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    artifacts = data.get("artifacts") if isinstance(data, dict) else None
    turns = data.get("turns") if isinstance(data, dict) else None
    if not isinstance(artifacts, dict) or not artifacts or not isinstance(turns, list):
        return None
    finishing = [t for t in turns if isinstance(t, dict) and isinstance(t.get("selection"), dict)]
    if not finishing:
        return None
    first = next(iter(artifacts.values()))
    return str(first), frozenset(finishing[-1]["selection"])


def _selection_request(request: DecisionRequest) -> dict[str, JsonValue]:
    asked = {q: question for q, question in request.questions.items() if q.startswith("select_")}
    return _systemone.encode_request(DecisionRequest(request.state, asked), None)


def keep_selections(
    folder: Path,
    by_input: Mapping[str, Sequence[DecisionRequest]],
    lines: Mapping[int, Mapping[str, object]],
    cases: Sequence[tuple[str, JsonValue]],
) -> int:
    """Add to ``folder``'s selections file a line for each case of ``lines`` (result lines by
    number) that has none yet and whose finishing request is among ``by_input`` (the requests
    a :class:`SelectionKeeper` kept); ``cases`` gives each line's case name and input JSON.
    Returns the lines added."""
    path = folder / SELECTIONS_FILE
    done = set(read_selections(path))
    added = []
    for number, line in sorted(lines.items()):
        record = line.get("record")
        if number in done or not isinstance(record, str) or not 1 <= number <= len(cases):
            continue
        facts = _record_facts(Path(record))
        if facts is None:
            continue
        first, refs = facts
        wanted = {f"{SELECT_PREFIX}{ref}" for ref in refs}
        found = [r for r in by_input.get(first, ()) if set(r.questions) >= wanted and wanted]
        if not found:
            continue
        request = found[-1]
        name, value = cases[number - 1]
        kept = DecisionRequest(
            request.state, {q: request.questions[q] for q in request.questions if q in wanted}
        )
        added.append(
            json.dumps(
                {
                    "line": number,
                    "case": name,
                    "input": input_key(value),
                    "request": _selection_request(kept),
                },
                ensure_ascii=False,  # the state's keys in their order: the prompt's
            )
        )
    if added:
        with path.open("a", encoding="utf-8") as file:
            file.writelines(text + "\n" for text in added)
    return len(added)


def read_selections(path: Path) -> dict[int, dict[str, object]]:
    """The selections file's lines by case line number (none when it is missing)."""
    return read_results(path)  # the same shape as the results: one JSON object a case line


@attrs.frozen
class RunsSource:
    """An eval folder's selections as labelled decisions: the pack (each selection a decision,
    tagged with its case's tags), the input digests of each split's cases, and what ran."""

    pack: DecisionPack
    inputs: Mapping[str, frozenset[str]]
    subject: str
    model: str

    def inputs_of(self, split: str) -> frozenset[str]:
        """The input digests of the cases tagged ``split``."""
        return self.inputs.get(split, frozenset())


def runs_pack(folder: str | os.PathLike[str]) -> RunsSource:
    """The selections an eval kept in ``folder`` as a :class:`DecisionPack`: each selection's
    request (the run's state and one ``select_<ref>`` question) labelled ``true`` when the
    candidate is expected by the case, ``false`` otherwise, tagged with the case's tags. A
    folder with no report or no kept selection is refused, naming the fix."""
    where = Path(folder)
    if not (where / "report.json").is_file():
        raise DatasetError(
            f"{where}: no report.json: give the folder of a finished `harness eval` (its --out)"
        )
    report = load_report(where)
    kept = read_selections(where / SELECTIONS_FILE)
    if not kept:
        raise DatasetError(
            f"{where}: the eval kept no selection ({SELECTIONS_FILE} is missing or empty): run "
            "`harness eval` again into a new folder with this harness, locally (not on Ray) and "
            "with the model named by --model"
        )
    by_name = {case.name: case for case in report.cases}
    decisions: list[LabelledDecision] = []
    inputs: dict[str, set[str]] = {}
    for number, line in sorted(kept.items()):
        case = by_name.get(str(line.get("case")))
        if case is None:
            continue
        for tag in case.tags:
            inputs.setdefault(tag, set()).add(str(line.get("input")))
        try:
            request, _ = _systemone.decode_request({**_object(line["request"]), "model": "-"})
        except (RequestValidationError, KeyError) as error:
            raise DatasetError(f"{where / SELECTIONS_FILE}: line {number}: {error}") from None
        expected = {c.ref: c.expected for c in case.candidates}
        for question_id, question in request.questions.items():
            ref = question_id.removeprefix(SELECT_PREFIX)
            if ref not in expected:
                continue
            decisions.append(
                LabelledDecision(
                    f"{case.name}/{ref}",
                    DecisionRequest(request.state, {question_id: question}),
                    {question_id: expected[ref]},
                    case.tags,
                )
            )
    if not decisions:
        raise EvalError(f"{where}: no kept selection belongs to a case of its report")
    name = f"{report.dataset} runs ({report.subject} on {report.model})"
    return RunsSource(
        DecisionPack(decisions, name=name),
        {tag: frozenset(keys) for tag, keys in inputs.items()},
        report.subject,
        report.model,
    )


def _object(value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        raise KeyError("request is not an object")
    return dict(value)

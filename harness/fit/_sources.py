"""What ``harness fit`` learns from: labelled decisions, read from any of the files harness keeps.

* a **decision pack** (``.jsonl`` / ``.yaml``, :class:`harness.evals.DecisionPack`): each
  labelled question as it is;
* the folder of a finished **eval** (``harness eval --out``): the selections it kept, each
  labelled by its case's expected answer, tagged with its case's split;
* a **dataset** with a thinker (``--thinker MODULE:CLASS``): the thinker is run on it through an
  eval (as ``harness examples`` runs it), then read as that eval's folder;
* a **cassette** or a **run record** kept with its bodies (distillation): each recorded request
  labelled by the recorded model's answers, whose probabilities are the soft targets. Records
  carry no split: such decisions are split by a digest of their request (see ``_split.py``).

Each source is named in the fitted file with the SHA-256 of its bytes (of ``report.json`` and
``selections.jsonl`` for an eval folder), so a file says exactly what it was fitted on.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from harness.decision import (
    ChoiceAnswer,
    JsonValue,
    NoulAnswer,
    RequestValidationError,
    ScoreAnswer,
)
from harness.decision import systemone as systemone_codec
from harness.decision._internal import load_json
from harness.evals import DatasetError, DecisionPack, LabelledDecision
from harness.providers import FittedError
from harness.replay import Cassette, CassetteError, cassette_from_record_json, load_cassette

__all__ = ["Labelled", "Source", "all_decisions", "read_source"]


@attrs.frozen
class Labelled:
    """A labelled decision and, for a teacher's, its probabilities per question (the soft
    targets: by option key, by level, or ``yes`` for a yes/no)."""

    decision: LabelledDecision
    soft: Mapping[str, Mapping[str, float]] | None = None


@attrs.frozen
class Source:
    """One source read: where, what kind, its digest, its decisions, and for a teacher's
    records the teacher (the served model)."""

    path: str
    kind: str
    sha256: str
    decisions: tuple[Labelled, ...]
    teacher: str | None = None

    def about(self) -> dict[str, object]:
        """The source as the fitted file names it."""
        found: dict[str, object] = {
            "path": self.path,
            "kind": self.kind,
            "sha256": self.sha256,
            "decisions": len(self.decisions),
        }
        if self.teacher is not None:
            found["teacher"] = self.teacher
        return found


def _digest(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def read_source(
    path: str,
    *,
    thinker: str | None = None,
    model: str | None = None,
    catalog: object = None,
    concurrency: int = 8,
) -> Source:
    """The labelled decisions of ``path`` (see the module's notes); anything unreadable is
    refused naming the file and the fix (:class:`~harness.evals.DatasetError`,
    :class:`~harness.providers.FittedError`)."""
    where = Path(path)
    if thinker is not None:
        return _dataset(where, thinker, model, catalog, concurrency)
    if where.is_dir():
        return _eval_folder(where)
    if not where.is_file():
        raise DatasetError(
            f"{path}: no such file or folder: give a decision pack (.jsonl/.yaml), an eval's "
            "folder, a dataset with --thinker, or a cassette or record (.json)"
        )
    if where.suffix == ".json":
        return _recorded(where)
    pack = DecisionPack.load(where)
    return Source(path, "pack", _digest(where), tuple(Labelled(d) for d in pack))


def _eval_folder(where: Path) -> Source:
    from harness.evals import runs_pack

    found = runs_pack(where)
    return Source(
        str(where),
        "eval folder",
        _digest(where / "report.json", where / "selections.jsonl"),
        tuple(Labelled(d) for d in found.pack),
    )


def _dataset(
    where: Path, thinker: str, model: str | None, catalog: object, concurrency: int
) -> Source:
    from harness.catalog import Catalog
    from harness.evals import evaluate, selections_dataset

    dataset = selections_dataset(thinker, where)
    with tempfile.TemporaryDirectory(prefix="harness-fit-") as runs:
        evaluate(
            thinker,
            dataset,
            model=model,
            catalog=catalog if isinstance(catalog, Catalog) else None,
            out=runs,
            concurrency=concurrency,
        )
        folder = _eval_folder(Path(runs))
    return attrs.evolve(folder, path=f"{where} ({thinker})", kind="dataset", sha256=_digest(where))


def _recorded(where: Path) -> Source:
    try:
        data = load_json(where.read_bytes())
    except ValueError as error:
        raise DatasetError(
            f"{where}: not JSON ({error}): give a cassette or a run record"
        ) from None
    kind = data.get("format") if isinstance(data, Mapping) else None
    try:
        if kind == "harness-cassette":
            cassette = load_cassette(where)
            what = "cassette"
        elif kind == "harness-record":
            assert isinstance(data, Mapping)
            cassette = cassette_from_record_json(data, str(where))
            what = "record"
        else:
            raise DatasetError(
                f"{where}: a .json source is a cassette or a run record (its format is "
                f"{kind!r}): give a decision pack as .jsonl or .yaml"
            )
    except CassetteError as error:
        raise DatasetError(str(error)) from None
    decisions, teacher = _taught(cassette, where)
    return Source(str(where), what, _digest(where), decisions, teacher)


def _taught(cassette: Cassette, where: Path) -> tuple[tuple[Labelled, ...], str | None]:
    """Each recorded request labelled by the recorded answers (soft targets kept)."""
    found: list[Labelled] = []
    teachers: set[str] = set()
    for index, interaction in enumerate(cassette.interactions):
        try:
            request, _ = systemone_codec.decode_request(dict(interaction.request))
        except RequestValidationError as error:
            raise DatasetError(f"{where}: interaction {index}: {error}") from None
        response = interaction.reply.response(request)
        if response.model:
            teachers.add(response.model)
        labels: dict[str, str | bool] = {}
        soft: dict[str, dict[str, float]] = {}
        for qid, answer in response.answers.items():
            if isinstance(answer, NoulAnswer):
                labels[qid] = answer.probability >= 0.5
                soft[qid] = {"yes": answer.probability}
            elif isinstance(answer, ChoiceAnswer):
                labels[qid] = answer.choice
                soft[qid] = dict(answer.probabilities)
            elif isinstance(answer, ScoreAnswer):
                top = max(range(len(answer.levels)), key=lambda k: answer.probabilities[k])
                labels[qid] = answer.levels[top]
                soft[qid] = dict(zip(answer.levels, answer.probabilities, strict=True))
        if not labels:
            continue
        name = f"{where.name}#{index}:{_request_digest(interaction.request)}"
        found.append(Labelled(LabelledDecision(name, request, labels), soft))
    if not found:
        raise FittedError(
            f"{where}: holds no answered request to learn from: record the model on real "
            "requests first (pytest --harness-record=new, harness run --record --bodies)"
        )
    teacher = ", ".join(sorted(teachers)) if teachers else None
    return tuple(found), teacher


def _request_digest(body: Mapping[str, JsonValue]) -> str:
    from harness.decision._internal import json_bytes

    return hashlib.sha256(json_bytes(dict(body))).hexdigest()[:12]


def all_decisions(sources: Sequence[Source]) -> list[Labelled]:
    """Every source's decisions, in order; two of the same name are refused by name."""
    seen: dict[str, str] = {}
    found: list[Labelled] = []
    for source in sources:
        for item in source.decisions:
            name = item.decision.name
            if name in seen:
                raise FittedError(
                    f"decision {name!r} is in both {seen[name]} and {source.path}: give each "
                    "source once (or rename the decisions of one)"
                )
            seen[name] = source.path
            found.append(item)
    return found

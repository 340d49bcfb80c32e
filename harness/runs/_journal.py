"""The journal of a durable run: a header, then one JSON line per completed turn.

The file is JSON Lines. The first line is the header::

    {"format": "harness-journal", "version": 1, "run_id": "...", "keep_bodies": false,
     "fingerprint": {"thinker": ..., "palette": [...], "objective": ..., "question_scheme": ...,
                     "threshold": ..., "max_turns": ..., "model": {...}},
     "input": {"class": "module:Class", "value": {...}}}

Each later line is a turn (``"kind": "turn"``: the request's digest, the response's answers, the
decision calls made in the turn, the move, the approval, the product as typed data through the
artifacts' cattrs converter, or the readable failure), or a pause (``"kind": "pending"``: a turn
whose decision waits for a person). Each line is written and flushed before the next turn
starts, and fsynced in a thread while the next decision is asked (on disk before the next tool
runs); a last line cut short by a crash is dropped on read (and cut off the file before anything
is appended to it).
"""

from __future__ import annotations

import asyncio
import hashlib
import json  # the stdlib: the state digest below hashes its default text (", "), not orjson's
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, get_args, get_origin

import attrs

from harness.artifacts import Artifact, ListArtifact, artifact_converter
from harness.decision import (
    Answer,
    ChoiceAnswer,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    RefusedAnswer,
    ScoreAnswer,
)
from harness.decision._internal import json_bytes, load_json
from harness.errors import HarnessError
from harness.jobs import ModelCall
from harness.replay._internal import FileFormat
from harness.runs._target import import_object

__all__ = [
    "JOURNAL_FILE",
    "JournalEntry",
    "JournalError",
    "JournalWriter",
    "JournalledRun",
    "read_journal",
]


class JournalError(HarnessError, ValueError):
    """A journal that cannot be read or written: names the file, the line and what is wrong."""


JOURNAL_FILE: Final = FileFormat(
    "journal",
    JournalError,
    written_by="the file written by run(..., journal=PATH) or --journal FILE",
    rewrite="start the run again with a new journal",
)

Json = dict[str, object]


def request_digest(request: DecisionRequest) -> str:
    """A digest of what the model is asked (the state and the questions)."""
    text = json.dumps(request.state, sort_keys=True, ensure_ascii=False) + repr(
        list(request.questions.items())
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def answer_json(answer: Answer) -> Json:
    """An answer as JSON, exactly (every probability as written)."""
    if isinstance(answer, ChoiceAnswer):
        return {
            "kind": "choice",
            "choice": answer.choice,
            "probabilities": dict(answer.probabilities),
            "confidence": answer.confidence,
        }
    if isinstance(answer, NoulAnswer):
        return {"kind": "noul", "probability": answer.probability}
    if isinstance(answer, ScoreAnswer):
        return {
            "kind": "score",
            "score": answer.score,
            "levels": list(answer.levels),
            "probabilities": list(answer.probabilities),
            "confidence": answer.confidence,
        }
    return {"kind": "refused", "reason": answer.reason}


def answer_of(data: Mapping[str, object]) -> Answer:
    """Read :func:`answer_json`'s shape back."""
    kind = data.get("kind")
    if kind == "choice":
        probabilities = data["probabilities"]
        assert isinstance(probabilities, Mapping)
        return ChoiceAnswer(
            str(data["choice"]),
            {str(k): float(v) for k, v in probabilities.items()},
            _float(data["confidence"]),
        )
    if kind == "noul":
        return NoulAnswer(_float(data["probability"]))
    if kind == "score":
        levels, probabilities = data["levels"], data["probabilities"]
        assert isinstance(levels, list)
        assert isinstance(probabilities, list)
        return ScoreAnswer(
            _float(data["score"]),
            tuple(str(x) for x in levels),
            tuple(float(x) for x in probabilities),
            _float(data["confidence"]),
        )
    if kind == "refused":
        reason = data.get("reason")
        return RefusedAnswer(reason if isinstance(reason, str) else None)
    raise ValueError(f"not an answer: kind {kind!r}")


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def call_json(call: ModelCall, body: object, reply: object = None) -> Json:
    """One model call as the journal keeps it (and its wire body when the run keeps them)."""
    data: Json = {
        "entry_id": call.entry_id,
        "provider": call.provider,
        "success": call.success,
        "answers": {qid: answer_json(a) for qid, a in call.answers.items()},
        "reason": call.reason,
        "input_tokens": call.input_tokens,
        "counted_input_tokens": call.counted_input_tokens,
        "latency": call.latency,
        "model": call.model,
        "request_id": call.request_id,
        "cost": call.cost,
        "output_tokens": call.output_tokens,
        "counted_by": call.counted_by,
    }
    if body is not None:
        data["body"] = body
    if reply is not None:
        data["reply"] = reply
    return data


def call_of(data: Mapping[str, object]) -> tuple[ModelCall, object, object]:
    """Read :func:`call_json`'s shape back: the call, its body and reply (``None`` when not
    kept)."""
    answers = data.get("answers")
    assert isinstance(answers, Mapping)
    cost = data.get("cost")
    call = ModelCall(
        entry_id=str(data["entry_id"]),
        provider=str(data["provider"]),
        success=bool(data["success"]),
        answers={str(k): answer_of(v) for k, v in answers.items()},
        reason=_text_or_none(data.get("reason")),
        input_tokens=_int_or_none(data.get("input_tokens")),
        counted_input_tokens=_int_or_none(data.get("counted_input_tokens")),
        latency=_float(data["latency"]),
        model=_text_or_none(data.get("model")),
        request_id=_text_or_none(data.get("request_id")),
        cost=None if cost is None else _float(cost),
        output_tokens=_int_or_none(data.get("output_tokens")) or 0,
        counted_by=_text_or_none(data.get("counted_by")),
    )
    return call, data.get("body"), data.get("reply")


def response_json(response: DecisionResponse) -> Json:
    """The answered response of a turn's decision (its request is rebuilt on replay)."""
    return {
        "answers": {qid: answer_json(a) for qid, a in response.answers.items()},
        "input_tokens": response.input_tokens,
        "model": response.model,
        "request_id": response.request_id,
        "latency": response.latency,
    }


def response_of(request: DecisionRequest, data: Mapping[str, object]) -> DecisionResponse:
    """Read :func:`response_json`'s shape back as the answer to ``request``."""
    answers = data["answers"]
    assert isinstance(answers, Mapping)
    return DecisionResponse(
        request=request,
        answers={str(k): answer_of(v) for k, v in answers.items()},
        input_tokens=_int_or_none(data.get("input_tokens")),
        model=_text_or_none(data.get("model")),
        request_id=_text_or_none(data.get("request_id")),
        latency=_float(data.get("latency", 0.0)),
    )


def class_path(cls: type) -> str:
    """``module:QualName`` of a class (what the journal names a class by)."""
    return f"{cls.__module__}:{cls.__qualname__}"


Classes = Mapping[str, type]
"""Classes by ``module:QualName``, found before importing (see :func:`known_classes`)."""


def known_classes(roots: Sequence[object]) -> dict[str, type]:
    """The artifact classes ``roots`` name (classes or parameterised lists, their parameters)
    and all their subclasses, by ``module:QualName``: the classes a run's products can be of,
    found without importing (a class made at run time, or in ``__main__``, included)."""
    found: dict[str, type] = {}
    stack = list(roots)
    while stack:
        tp = stack.pop()
        stack.extend(get_args(tp))
        origin = get_origin(tp) or tp
        if isinstance(origin, type) and class_path(origin) not in found:
            found[class_path(origin)] = origin
            stack.extend(origin.__subclasses__())
    return found


def import_class(path: str, classes: Classes | None = None) -> type:
    """The class ``module:QualName`` names (from ``classes`` first, else imported by the one
    importer, :func:`~harness.runs.import_object`: a mistake is a :class:`TargetError` row)."""
    if classes is not None and path in classes:
        return classes[path]
    found = import_object(
        path, check=lambda value: isinstance(value, type), what="a class", candidates=False
    )
    assert isinstance(found, type)
    return found


def type_spec(tp: object) -> Json:
    """An artifact type as JSON: its class, and its parameters (``ListArtifact[Note]``)."""
    origin = get_origin(tp) or tp
    assert isinstance(origin, type)
    return {"class": class_path(origin), "args": [type_spec(a) for a in get_args(tp)]}


def type_of(spec: Mapping[str, object], classes: Classes | None = None) -> Any:  # an alias
    """Read :func:`type_spec`'s shape back (a class, or a parameterised alias)."""
    cls: Any = import_class(str(spec["class"]), classes)
    args = [type_of(a, classes) for a in spec.get("args") or ()]  # type: ignore[attr-defined]  # a JSON list
    if args:
        return cls[tuple(args)] if len(args) > 1 else cls[args[0]]
    return cls


def product_json(product: Artifact) -> Json:
    """A tool's product as typed data: its class and its cattrs form (a list: its iterand type
    and each item's own)."""
    if isinstance(product, ListArtifact):
        return {
            "list": type_spec(product.iterand_type),
            "items": [product_json(item) for item in product.iterands],
            "instruction": product.instruction,
        }
    return {"class": class_path(type(product)), "value": artifact_converter.unstructure(product)}


def product_of(data: Mapping[str, object], classes: Classes | None = None) -> Artifact:
    """Read :func:`product_json`'s shape back (classes from ``classes`` first)."""
    spec = data.get("list")
    if isinstance(spec, Mapping):
        items = data.get("items")
        assert isinstance(items, list)
        instruction = data.get("instruction")
        return ListArtifact(
            type_of(spec, classes),
            tuple(product_of(item, classes) for item in items),
            instruction if isinstance(instruction, str) else None,
        )
    cls = import_class(str(data["class"]), classes)
    if not issubclass(cls, Artifact):
        raise TypeError(f"{data['class']} is not an Artifact class")
    return artifact_converter.structure(data.get("value"), cls)


@attrs.frozen
class JournalEntry:
    """One line after the header: a completed turn, or a turn paused for a person."""

    kind: str  # "turn" or "pending"
    turn: int
    data: Mapping[str, object]


@attrs.frozen
class JournalledRun:
    """A journal as read: the header and the entries (a torn last line dropped)."""

    path: Path
    header: Mapping[str, object]
    entries: tuple[JournalEntry, ...]
    good_bytes: int
    """The length of the file up to the end of the last whole line."""

    @property
    def run_id(self) -> str:
        """The run's id (the root of its idempotency keys)."""
        return str(self.header["run_id"])

    @property
    def fingerprint(self) -> Mapping[str, object]:
        """What the run depends on (see the module's notes)."""
        found = self.header["fingerprint"]
        assert isinstance(found, Mapping)
        return found

    @property
    def keep_bodies(self) -> bool:
        """Whether the run keeps each request's wire body."""
        return bool(self.header.get("keep_bodies"))

    @property
    def pending(self) -> JournalEntry | None:
        """The pause the journal ends on, if it ends on one."""
        if self.entries and self.entries[-1].kind == "pending":
            return self.entries[-1]
        return None

    def by_turn(self) -> dict[int, list[JournalEntry]]:
        """The entries of each turn (a pause, then the turn it became), by turn number."""
        found: dict[int, list[JournalEntry]] = {}
        for entry in self.entries:
            found.setdefault(entry.turn, []).append(entry)
        return found

    def finished(self) -> bool:
        """Whether the run's finishing turn is journalled."""
        return any(e.kind == "turn" and e.data.get("tool") == "finish" for e in self.entries)


def read_journal(path: str | os.PathLike[str]) -> JournalledRun:
    """Read a journal; a torn last line is dropped, any other bad line refused by number."""
    source = Path(path)
    try:
        raw = source.read_bytes()
    except FileNotFoundError:
        raise JournalError(
            f"{source}: no such journal; start the run with --journal {source} first"
        ) from None
    except OSError as error:
        raise JournalError(f"{source}: cannot read the journal: {error.strerror}") from None
    lines = raw.split(b"\n")
    whole = lines[:-1]  # the part after the last newline is torn (or empty)
    good = len(raw) - len(lines[-1])
    parsed: list[Json] = []
    for number, line in enumerate(whole, 1):
        try:
            value = load_json(line)
            if not isinstance(value, dict):
                raise ValueError("not an object")
        except ValueError:
            if number == len(whole) and number > 1:  # a last line cut mid-write: dropped
                good -= len(line) + 1
                break
            raise JournalError(
                f"{source}: line {number} is not a journal entry (a JSON object); the file is "
                "damaged: start the run again with a new journal"
            ) from None
        parsed.append(value)
    JOURNAL_FILE.check_header(
        str(source), parsed[0] if parsed else {}, place="its first line's 'format'"
    )
    entries = []
    for data in parsed[1:]:
        kind, turn = data.get("kind"), data.get("turn")
        if kind not in ("turn", "pending") or not isinstance(turn, int):
            raise JournalError(f"{source}: an entry without a kind and a turn number: damaged")
        entries.append(JournalEntry(str(kind), turn, data))
    return JournalledRun(source, parsed[0], tuple(entries), good)


class JournalWriter:
    """Appends entries to a journal: :meth:`append` writes, flushes and fsyncs a line;
    :meth:`append_turn` fsyncs it in a thread, :meth:`synced` waits for that."""

    def __init__(self, path: Path, file: IO[bytes]) -> None:
        self.path = path
        self._file = file
        self._syncing: asyncio.Task[None] | None = None

    @classmethod
    def create(cls, path: str | os.PathLike[str], header: Mapping[str, object]) -> JournalWriter:
        """A new journal at ``path`` (an existing non-empty file is refused: resume it)."""
        target = Path(path)
        if target.exists() and target.stat().st_size > 0:
            raise JournalError(
                f"{target}: a journal is already there: resume it (harness.resume(...), "
                f"--resume {target}) or pass a new path"
            )
        if not target.parent.is_dir():
            raise JournalError(f"{target}: the folder {target.parent} does not exist")
        writer = cls(target, target.open("wb"))
        writer.append(
            {**JOURNAL_FILE.header(), **dict(header)}  # first line
        )
        return writer

    @classmethod
    def reopen(cls, journal: JournalledRun) -> JournalWriter:
        """Append to ``journal`` again, its torn last line (if any) cut off first."""
        file = journal.path.open("r+b")
        file.truncate(journal.good_bytes)
        file.seek(journal.good_bytes)
        return cls(journal.path, file)

    def append(self, entry: Mapping[str, object], *, sync: bool = True) -> None:
        """Write one line and flush it to the system (it survives the process); with ``sync``
        also fsync it (it survives the machine) before returning."""
        self._file.write(json_bytes(entry) + b"\n")
        self._file.flush()
        if sync:
            os.fsync(self._file.fileno())

    async def append_turn(self, entry: Mapping[str, object]) -> None:
        """Write one line now and fsync it in a thread while the next decision is asked;
        :meth:`synced` waits for it (before the next tool runs, before the next line)."""
        await self.synced()
        self.append(entry, sync=False)
        self._syncing = asyncio.create_task(asyncio.to_thread(os.fsync, self._file.fileno()))

    async def synced(self) -> None:
        """Wait until every line written is on disk."""
        syncing, self._syncing = self._syncing, None
        if syncing is not None:
            await syncing

    async def aclose(self) -> None:
        """Wait for the last fsync, then close the file."""
        try:
            await self.synced()
        finally:
            self._file.close()


def type_name(tp: object) -> str:
    """A stable name for an artifact type (a class, or a parameterised ``ListArtifact``)."""
    args: Sequence[object] = getattr(tp, "__args__", ())
    origin = getattr(tp, "__origin__", tp)
    name = getattr(origin, "__qualname__", repr(origin))
    alias = getattr(origin, "alias", None)
    shown = f"{name}({alias})" if isinstance(alias, str) else str(name)
    if args:
        return shown + "[" + ", ".join(type_name(a) for a in args) + "]"
    return shown

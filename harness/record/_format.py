"""The record file of a run: what ``harness demo`` and ``harness run`` write, ``harness record``
reads.

A record is one JSON object::

    {
      "format": "harness-record", "version": 1,
      "command": "demo", "thinker": "find_price_decisions",
      "objective": "...", "entry": {"id": "embedded", "provider": "embedded",
                                    "wire_model_id": "sparrow-decider"},
      "input": {"alias": "folder", "value": {...}},
      "artifacts": {"folder#1": "folder#1 (folder): ...", ...},
      "turns": [<DecisionTurn.to_json()>, ...],
      "answer": [{"ref": "statement#4", "alias": "statement", "probability": 0.71,
                  "value": {...}}, ...],
      "calls": [{"success": true, "latency": 0.002, "model": "...", "input_tokens": null,
                 "counted_input_tokens": 812, "cost": null, "reason": null,
                 "reading": {"method": "chat-labels", "upstream_calls": 1,
                             "mass": {"next": 0.97}, ...}?,
                 "body": {...}?, "reply": {...}?}, ...],
      "timing": {"wall_seconds": 1.2, "model_seconds": 0.3},
      "threshold": 0.5,
      "settings": {"max_turns": 32, "selection_threshold": 0.5, "question_scheme": "lean"},
      "score": "found 4 of 7 planted decisions; ...",
      "failure": null
    }

``artifacts`` maps every ref of the run's world to its digest line (what the model read), so a
record reads on its own. ``calls`` are the decision calls in the order they were made; ``body``
(the request's wire body) is there only when asked for, and then ``reply`` too (what the model
answered, as a cassette holds it: see :mod:`harness.replay._cassette`), so ``harness replay``
can re-run the record offline; each call's tokens and latency are its
decision job's record (:class:`harness.jobs.ModelCall`), and so is its ``reading``: how a logprob
provider read the answers (``method``, each question's probability ``mass`` on its options, the
``upstream_calls`` the decision took, ``orderings``, ``hierarchy``, ``bounded``), there only for
a call that has one (a record without it reads as ``null``: the file's version stays 1).
``failure`` is ``null`` for a run that answered, else ``"<error type>: <message>"``: a failed
run's record holds the turns and calls made before it failed, and no answer (a record without
the key reads as ``null``).
``settings`` are the thinker's settings a replay needs to take the same turns (``max_turns``,
``selection_threshold``, ``question_scheme``; empty for a plain tool; ``harness replay`` builds
the thinker with them).
``score`` is the answer's score against an answer key as the command printed it (``harness
demo`` on its shipped folder; ``null`` otherwise).
``threshold`` is the thinker's selection threshold (``null`` for a plain tool) and a call's
``cost`` its price under the entry's prices (``null`` when unpriced); records written before
either existed read as ``null``.
:func:`~harness.record.load_record` (:mod:`harness.record._load`) checks every field and names
the first thing wrong with its place in the file.
"""

from __future__ import annotations

import json  # the stdlib: a record file's one-space indent, which orjson cannot write
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import attrs

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    TextFormatterRegistry,
    artifact_converter,
    digest_line,
)
from harness.errors import HarnessError
from harness.replay._internal import FileFormat, UncheckedJson, with_kept

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.jobs import ModelCall
from harness.thinker import DecisionTurn

__all__ = [
    "RECORD_FILE",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "RecordError",
    "RecordedAnswer",
    "RecordedCall",
    "RunRecord",
]


class RecordError(HarnessError, ValueError):
    """A record file that cannot be read: names the file, the place in it and what is wrong."""


RECORD_FILE: Final = FileFormat(
    "record",
    RecordError,
    written_by="a file written by `harness demo --record` or `harness run --record`",
    rewrite="re-record the run with this harness",
)
RECORD_FORMAT: Final = RECORD_FILE.name
RECORD_VERSION: Final = RECORD_FILE.version


@attrs.frozen
class RecordedAnswer:
    """One item of the answer: its ref, alias, selection probability and value (its JSON)."""

    ref: str
    alias: str
    probability: float | None
    value: object  # the artifact's JSON form: any JSON value

    @classmethod
    def of(cls, ref: str, item: Artifact, selection: Mapping[str, float]) -> RecordedAnswer:
        """The answer item ``item`` under ``ref``, with its probability in the run's final
        ``selection`` (``None`` when the finish did not rank it)."""
        return cls(ref, type(item).alias, selection.get(ref), artifact_converter.unstructure(item))

    def to_json(self) -> UncheckedJson:
        """The item as a JSON object."""
        return {
            "ref": self.ref,
            "alias": self.alias,
            "probability": self.probability,
            "value": self.value,
        }


@attrs.frozen
class RecordedCall:
    """One decision call of the run, as its job's record saw it (plus the wire body if kept).

    What a reader of the record reads of the call; the journal keeps more of the same call (its
    answers, entry and request id: :func:`harness.runs._typed_json.call_json`) because a resumed
    run rebuilds the call from it, so the two shapes differ on purpose."""

    success: bool
    latency: float
    model: str | None
    input_tokens: int | None
    counted_input_tokens: int | None
    reason: str | None = None
    body: object = None  # the request's wire body (JSON) when the run kept it
    reply: object = None  # what the model answered (JSON), kept with the body
    cost: float | None = None  # the billed tokens' price, None when the entry has no price
    reading: Mapping[str, object] | None = None
    """How a logprob provider read the answers (method, mass by question, upstream calls);
    ``None`` for a provider that answers directly."""

    @classmethod
    def of(cls, made: ModelCall, body: object = None, reply: object = None) -> RecordedCall:
        """The call as its job's record holds it, with the wire ``body`` and ``reply`` when
        kept."""
        return cls(
            success=made.success,
            latency=made.latency,
            model=made.model,
            input_tokens=made.input_tokens,
            counted_input_tokens=made.counted_input_tokens,
            reason=made.reason,
            body=body,
            reply=reply,
            cost=made.cost,
            reading=None if made.reading is None else dict(made.reading),
        )

    def to_json(self) -> UncheckedJson:
        """The call as a JSON object (``body`` only when kept)."""
        data: UncheckedJson = {
            "success": self.success,
            "latency": self.latency,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "counted_input_tokens": self.counted_input_tokens,
            "cost": self.cost,
            "reason": self.reason,
        }
        return with_kept(data, self.reading, self.body, self.reply)


@attrs.frozen
class RunRecord:
    """A recorded run of a thinker (or any tool): see the module's notes for the file format."""

    command: str
    thinker: str
    objective: str | None
    entry: Mapping[str, str]
    input_alias: str
    input_value: object  # the input artifact's JSON form
    artifacts: Mapping[str, str]
    turns: tuple[DecisionTurn, ...]
    answer: tuple[RecordedAnswer, ...]
    calls: tuple[RecordedCall, ...]
    wall_seconds: float
    model_seconds: float
    failure: str | None = None  # "<error type>: <message>" when the run failed
    threshold: float | None = None  # the thinker's selection threshold (None: a plain tool)
    settings: Mapping[str, object] = attrs.field(factory=dict)  # max_turns, scheme, threshold
    score: str | None = None  # the answer's score against a key, as the command printed it

    @staticmethod
    def entry_of(entry: CatalogEntry) -> dict[str, str]:
        """``entry``: the run's catalog entry as a record names it."""
        return {"id": entry.id, "provider": entry.provider, "wire_model_id": entry.wire_model_id}

    @staticmethod
    def artifacts_of(world: ArtifactRegistry, formatters: TextFormatterRegistry) -> dict[str, str]:
        """``artifacts``: every ref of the run's ``world`` with its digest line (what the model
        read)."""
        return {ref: digest_line(ref, a, formatters) for ref, a in world.world()}

    def to_json(self) -> UncheckedJson:
        """The record as the JSON object written to a file."""
        return {
            **RECORD_FILE.header(),
            "command": self.command,
            "thinker": self.thinker,
            "objective": self.objective,
            "entry": dict(self.entry),
            "input": {"alias": self.input_alias, "value": self.input_value},
            "artifacts": dict(self.artifacts),
            "turns": [turn.to_json() for turn in self.turns],
            "answer": [item.to_json() for item in self.answer],
            "calls": [call.to_json() for call in self.calls],
            "timing": {"wall_seconds": self.wall_seconds, "model_seconds": self.model_seconds},
            "threshold": self.threshold,
            "settings": dict(self.settings),
            "score": self.score,
            "failure": self.failure,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the record to ``path`` as indented UTF-8 JSON, making its folder when it is not
        there yet (``runs/x.json``)."""
        text = json.dumps(self.to_json(), indent=1, ensure_ascii=False, allow_nan=False)
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text + "\n")

"""Cassettes: a model's recorded answers, keyed by the requests that asked them.

A cassette is one JSON file, written so a diff in review reads well::

    {
      "format": "harness-cassette",
      "version": 1,
      "interactions": [
        {
          "request": {"model": "jev-latest", "state": {...}, "questions": {...}},
          "reply": {"model": "jev-latest", "request_id": "req-1", "input_tokens": 812,
                    "answers": {"next": {"type": "choice", "choice": "split_note", ...}}}
        },
        ...
      ]
    }

* ``request`` is the System One wire body of the request exactly as sent (its key order is the
  wire's: questions and options in the order asked), whatever provider answered it: a request is
  identified by the digest of that canonical body (:func:`body_digest`), so the file holds no
  digest to go stale when someone edits it by hand.
* ``reply`` holds what the model answered, in question order, in System One's answer shapes (a
  refusal as ``{"type": "refused", "reason": ...}``), and what the server reported: served model,
  request id, billed input tokens. No latency (it changes on every recording and means nothing to
  a replay, which answers in no time), and never a header or a key: the client never hands them
  to the recorder. The state is the user's own data and stays.
* Every object is written with its keys in one fixed order, indented, one interaction per
  block, so recording the same answers twice gives the same bytes.

:func:`load_cassette` checks the format and version and names the first thing wrong with its
place in the file (:class:`CassetteError`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Final, Protocol

import attrs

from harness.decision import Answer, DecisionRequest, DecisionResponse, JsonValue, RefusedAnswer
from harness.decision import systemone as systemone_codec
from harness.decision._internal import indented_json, json_bytes, load_json
from harness.errors import HarnessError
from harness.replay._internal import FileFormat

__all__ = [
    "CASSETTE_FORMAT",
    "CASSETTE_VERSION",
    "Cassette",
    "CassetteError",
    "Interaction",
    "RecordedReply",
    "answers_json",
    "body_digest",
    "cassette_from_json",
    "cassette_from_record",
    "cassette_from_record_json",
    "load_cassette",
]


class CassetteError(HarnessError, ValueError):
    """A cassette that cannot be read or used: names the file, the place in it and the fix."""


CASSETTE_FILE: Final = FileFormat(
    "cassette",
    CassetteError,
    written_by="a file written by the pytest plugin (--harness-record) or by a recording "
    "ReplayClient",
    rewrite="re-record it with this harness (pytest --harness-record=all)",
)
CASSETTE_FORMAT: Final = CASSETTE_FILE.name
CASSETTE_VERSION: Final = CASSETTE_FILE.version

JsonObject = dict[str, JsonValue]


def body_digest(body: bytes) -> str:
    """The hex SHA-256 of a canonical (compact) wire body: the key a request is replayed by."""
    return hashlib.sha256(body).hexdigest()


def answers_json(request: DecisionRequest, answers: Mapping[str, Answer]) -> JsonObject:
    """The answers in question order, in System One's shapes (a refusal in its own)."""
    sent = {
        qid: answers[qid]
        for qid in request.questions
        if qid in answers and not isinstance(answers[qid], RefusedAnswer)
    }
    encoded = systemone_codec.encode_reply(sent, model="", input_tokens=0)["answers"]
    assert isinstance(encoded, dict)
    out: JsonObject = {}
    for qid in request.questions:
        answer = answers.get(qid)
        if isinstance(answer, RefusedAnswer):
            out[qid] = {"type": "refused", "reason": answer.reason}
        elif qid in encoded:
            out[qid] = encoded[qid]
    return out


@attrs.frozen
class RecordedReply:
    """What the model answered one request, and what its server reported about it."""

    answers: Mapping[str, JsonValue]  # question id -> the answer's JSON, in question order
    model: str | None = None
    request_id: str | None = None
    input_tokens: int | None = None

    @classmethod
    def of(cls, response: DecisionResponse) -> RecordedReply:
        """The reply of an answered ``response`` (its answers, model, request id, tokens)."""
        return cls(
            answers=answers_json(response.request, response.answers),
            model=response.model,
            request_id=response.request_id,
            input_tokens=response.input_tokens,
        )

    def to_json(self) -> JsonObject:
        """The reply as written in the file."""
        return {
            "model": self.model,
            "request_id": self.request_id,
            "input_tokens": self.input_tokens,
            "answers": dict(self.answers),
        }

    def response(self, request: DecisionRequest) -> DecisionResponse:
        """The recorded answers to ``request`` as a response (latency 0: nothing was waited
        for). An answer that does not fit the request raises
        :class:`~harness.errors.NotAnAnswerError` as a real server's would."""
        refused: dict[str, Answer] = {}
        for qid in request.questions:
            raw = self.answers.get(qid)
            if isinstance(raw, Mapping) and raw.get("type") == "refused":
                reason = raw.get("reason")
                refused[qid] = RefusedAnswer(reason if isinstance(reason, str) else None)
        asked = {qid: q for qid, q in request.questions.items() if qid not in refused}
        decoded: Mapping[str, Answer] = {}
        if asked:
            payload = {"answers": dict(self.answers), "model": self.model}
            decoded = systemone_codec.decode_reply(
                DecisionRequest(request.state, asked), payload
            ).answers
        return DecisionResponse(
            request=request,
            answers={
                qid: refused[qid] if qid in refused else decoded[qid] for qid in request.questions
            },
            input_tokens=self.input_tokens,
            model=self.model,
            request_id=self.request_id,
            latency=0.0,
            failure=None,
        )


@attrs.frozen
class Interaction:
    """One request as it went on the wire and the reply it got."""

    request: Mapping[str, JsonValue]  # the System One wire body, keys in wire order
    reply: RecordedReply

    @classmethod
    def of(cls, body: bytes, response: DecisionResponse) -> Interaction:
        """The interaction of a request sent as ``body`` and answered with ``response``."""
        request = load_json(body)
        assert isinstance(request, dict)
        return cls(request=request, reply=RecordedReply.of(response))

    @property
    def body(self) -> bytes:
        """The canonical wire body (compact UTF-8 JSON), byte for byte what was sent."""
        return json_bytes(dict(self.request))

    @property
    def digest(self) -> str:
        """The digest of :attr:`body`: the key the request is replayed by."""
        return body_digest(self.body)

    def to_json(self) -> JsonObject:
        """The interaction as written in the file."""
        return {"request": dict(self.request), "reply": self.reply.to_json()}


@attrs.frozen
class Cassette:
    """Recorded interactions in the order they were asked; see the module's notes."""

    interactions: tuple[Interaction, ...] = ()

    def to_json(self) -> JsonObject:
        """The cassette as the JSON object written to a file."""
        return {
            **CASSETTE_FILE.header(),
            "interactions": [item.to_json() for item in self.interactions],
        }

    def dumps(self) -> str:
        """The file's text: indented UTF-8 JSON, keys in their fixed order, newline at the end."""
        return indented_json(self.to_json(), indent=2) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the cassette to ``path`` (its folder is made when missing), atomically."""
        target = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(target))
        os.makedirs(folder, exist_ok=True)
        partial = target + ".partial"
        with open(partial, "w", encoding="utf-8", newline="\n") as file:
            file.write(self.dumps())
        os.replace(partial, target)


# -- reading ---------------------------------------------------------------------------------


def _fail(source: str, where: str, rule: str) -> CassetteError:
    return CassetteError(f"cassette {source}: {where} {rule}")


def _object(source: str, where: str, value: object) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise _fail(source, where, "must be a JSON object")
    return value


def _text_or_none(source: str, where: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _fail(source, where, "must be a string or null")
    return value


def _count_or_none(source: str, where: str, value: object) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise _fail(source, where, "must be an integer or null")
    return value


def _interaction(
    source: str, index: int, data: object, *, where: str = "interactions"
) -> Interaction:
    where = f"{where}[{index}]"
    item = _object(source, where, data)
    for key in ("request", "reply"):
        if key not in item:
            raise _fail(source, f"{where}.{key}", "is missing")
    request = _object(source, f"{where}.request", item["request"])
    questions = request.get("questions")
    if not isinstance(questions, Mapping) or not questions:
        raise _fail(source, f"{where}.request.questions", "must be an object of questions")
    if "state" not in request:
        raise _fail(source, f"{where}.request.state", "is missing")
    reply = _object(source, f"{where}.reply", item["reply"])
    answers = reply.get("answers")
    if not isinstance(answers, Mapping):
        raise _fail(source, f"{where}.reply.answers", "must be an object of answers")
    return Interaction(
        request=dict(request),  # type: ignore[arg-type]  # decoded JSON: JSON values only
        reply=RecordedReply(
            answers=dict(answers),
            model=_text_or_none(source, f"{where}.reply.model", reply.get("model")),
            request_id=_text_or_none(source, f"{where}.reply.request_id", reply.get("request_id")),
            input_tokens=_count_or_none(
                source, f"{where}.reply.input_tokens", reply.get("input_tokens")
            ),
        ),
    )


def cassette_from_json(data: object, source: str = "<cassette>") -> Cassette:
    """Build a :class:`Cassette` from its JSON object, checking format, version and fields."""
    top = _object(source, "the file", data)
    CASSETTE_FILE.check_header(source, top)
    items = top.get("interactions")
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise _fail(source, "interactions", "must be a JSON array")
    return Cassette(tuple(_interaction(source, i, item) for i, item in enumerate(items)))


def load_cassette(path: str | os.PathLike[str]) -> Cassette:
    """Read and check the cassette at ``path``; :class:`CassetteError` names what is wrong."""
    data = CASSETTE_FILE.read_json(
        path,
        label="cassette",
        missing="record it first (pytest --harness-record=new with the model reachable)",
        broken="a merge may have broken it; re-record it (pytest --harness-record=all)",
    )
    return cassette_from_json(data, os.fspath(path))


class RecordedCallLike(Protocol):
    """A decision call of a run record, as far as a replay reads it (see
    :class:`harness.record.RecordedCall`)."""

    @property
    def success(self) -> bool: ...

    @property
    def body(self) -> object: ...

    @property
    def reply(self) -> object: ...


class RunRecordLike(Protocol):
    """A run record, as far as a replay reads it (see :class:`harness.record.RunRecord`): the
    record package sits above the thinker, so this package reads it by its shape, not its type."""

    @property
    def calls(self) -> Sequence[RecordedCallLike]: ...

    @property
    def entry(self) -> Mapping[str, str]: ...


def cassette_from_record(record: RunRecordLike, source: str = "<record>") -> Cassette:
    """The cassette a run record holds: each answered call's wire body and reply, in the order
    made. A record written without bodies (``harness run`` without ``--bodies``) holds none:
    :class:`CassetteError` says how to record one that does."""
    items: list[Interaction] = []
    for index, call in enumerate(record.calls):
        if not call.success:
            continue
        if call.body is None or call.reply is None:
            raise CassetteError(
                f"record {source}: calls[{index}] has no request body and reply, so the run "
                "cannot be replayed from it: record it with `harness run --bodies` (or "
                "`harness demo --bodies`)"
            )
        body = _object(source, f"calls[{index}].body", call.body)
        if not isinstance(body.get("questions"), Mapping):
            raise CassetteError(
                f"record {source}: calls[{index}].body is not a System One body (the run's entry "
                f"is of provider {record.entry.get('provider', 'unknown')!r}): replay it from a "
                "cassette recorded with the pytest plugin instead"
            )
        items.append(
            _interaction(source, index, {"request": body, "reply": call.reply}, where="calls")
        )
    return Cassette(tuple(items))


@attrs.frozen
class _Call:
    success: bool
    body: object
    reply: object


@attrs.frozen
class _Record:
    calls: tuple[_Call, ...]
    entry: Mapping[str, str]


def cassette_from_record_json(data: Mapping[str, object], source: str = "<record>") -> Cassette:
    """The cassette a run record's JSON object holds (its ``calls``; see
    :func:`cassette_from_record`), read without the record package: only the calls' ``success``,
    ``body`` and ``reply`` and the entry's ``provider`` are read and checked."""
    calls = data.get("calls")
    if not isinstance(calls, Sequence) or isinstance(calls, str):
        raise CassetteError(f"record {source}: calls must be a JSON array")
    read: list[_Call] = []
    for index, call in enumerate(calls):
        item = _object(source, f"calls[{index}]", call)
        success = item.get("success")
        if not isinstance(success, bool):
            raise CassetteError(f"record {source}: calls[{index}].success must be true or false")
        read.append(_Call(success, item.get("body"), item.get("reply")))
    entry = data.get("entry")
    shown = {
        str(key): str(value) for key, value in (entry.items() if isinstance(entry, Mapping) else ())
    }
    return cassette_from_record(_Record(tuple(read), shown), source)

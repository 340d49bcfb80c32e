"""Cassettes as the record package sees them: the format lives in :mod:`harness.llm._cassette`
(below the replay client that reads it); a run record holds a cassette too, read here."""

from __future__ import annotations

from collections.abc import Mapping

from harness.llm._cassette import CASSETTE_FORMAT as CASSETTE_FORMAT
from harness.llm._cassette import CASSETTE_VERSION as CASSETTE_VERSION
from harness.llm._cassette import Cassette as Cassette
from harness.llm._cassette import CassetteError as CassetteError
from harness.llm._cassette import Interaction as Interaction
from harness.llm._cassette import RecordedReply as RecordedReply
from harness.llm._cassette import _interaction, _object
from harness.llm._cassette import answers_json as answers_json
from harness.llm._cassette import body_digest as body_digest
from harness.llm._cassette import cassette_from_json as cassette_from_json
from harness.llm._cassette import load_cassette as load_cassette
from harness.record._format import RunRecord


def cassette_from_record(record: RunRecord, source: str = "<record>") -> Cassette:
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
                f"record {source}: calls[{index}].body is not a System One body (the run asked "
                f"a {record.entry.get('provider', 'non-System One')} entry): replay it from a "
                "cassette recorded with the pytest plugin instead"
            )
        items.append(
            _interaction(source, index, {"request": body, "reply": call.reply}, where="calls")
        )
    return Cassette(tuple(items))

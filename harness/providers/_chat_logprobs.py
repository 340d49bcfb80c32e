"""Decisions read from chat completions' ``top_logprobs`` (catalog provider ``openai-chat``).

Each question is one chat message: the state, the question, its options each behind a
single-token label (``A``, ``B``, ...; ``yes`` / ``no`` for a noul), and "answer with the label
only". One token is generated with ``logprobs: true`` and ``top_logprobs`` (the entry's, at most
20). A label's probability is the sum over every shown token that spells it (``" B"``, ``"B"``,
``"b"``, ``"B."`` add up, never overwrite each other).

What the labels do not cover is never renormalised in silence:

* the share of the model's probability on the labels (``mass``) goes with the answer (its
  :class:`~harness.providers._logprob_reading.Reading`), and below the entry's ``mass_floor``
  (default 0.5) the question is refused, naming the share: a
  :class:`~harness.decision.RefusedAnswer`;
* labels absent from the ``top_logprobs`` shown each have less probability than the last one
  shown: their joint share is bounded by ``min(1 - shown, missing * last)``, taken at half that
  bound, and split among them by another round that shows only them;
* more options than ``top_logprobs`` can show are read as a hierarchy: a round choosing among
  groups of options, then a round within each group; ``P(option) = P(group) P(option | group)``.

Chat completions take one conversation a call, so the questions of a request are sent at once
(concurrently), one call each (more for hierarchies and extra rounds, times ``orderings``).
"""

from __future__ import annotations

import asyncio
import math
import string
import time
from collections.abc import Mapping, Sequence
from typing import ClassVar

import attrs

from harness.catalog import CatalogEntry
from harness.decision import Answer, DecisionRequest, Noul, RefusedAnswer
from harness.decision._internal import served_model
from harness.errors import NotAnAnswerError

from . import _logprob_reading
from ._client import local_answers
from ._http import Endpoint
from ._logprob_reading import Asked, LogprobClient, Read, Reading

__all__ = ["DEFAULT_MASS_FLOOR", "DEFAULT_TOP_LOGPROBS", "ChatLogprobsClient", "label_of"]

DEFAULT_TOP_LOGPROBS = 20
DEFAULT_MASS_FLOOR = 0.5
LETTERS = string.ascii_uppercase
_STRIP = " \t\n\r.:)(*'\"`"


def label_of(token: str) -> str:
    """The label a token spells: ``" B"``, ``"B"``, ``"b"``, ``"B."`` all spell ``"b"``."""
    return token.strip(_STRIP).casefold()


@attrs.define
class _Refused(Exception):
    mass: float
    floor: float


@attrs.define
class _Tally:
    calls: int = 0
    tokens: int = 0
    model: str | None = None
    request_id: str | None = None
    hierarchy: bool = False
    bounded: bool = False
    mass: list[float] = attrs.Factory(list)


class ChatLogprobsClient(LogprobClient):
    """A :class:`harness.providers.DecisionClient` reading decisions from any OpenAI-compatible chat
    completions endpoint that returns ``top_logprobs`` (see the module docstring)."""

    service: ClassVar[str] = "OpenAI-compatible chat server"
    method: ClassVar[str] = "chat-labels"

    async def read(
        self, request: DecisionRequest, entry: CatalogEntry, deadline: float | None
    ) -> Read:
        """Each question's options read from the labels' ``top_logprobs``, concurrently."""
        settled = local_answers(request)
        endpoint = self.endpoint(entry, request)
        state = _logprob_reading.render_state(request)
        tallies: dict[str, _Tally] = {}

        async def one(asked: Asked) -> tuple[str, Answer]:
            tally = tallies[asked.question_id] = _Tally()
            question = request.questions[asked.question_id]
            orders = _logprob_reading.cyclic_orders(len(asked.names), entry.orderings)
            try:
                reads = await asyncio.gather(
                    *(
                        self._read(entry, endpoint, state, asked, order, tally, deadline, True)
                        for order in orders
                    )
                )
            except _Refused as refused:
                return asked.question_id, RefusedAnswer(
                    f"only {refused.mass:.1%} of the model's probability fell on the option "
                    f"labels (mass_floor {refused.floor:.0%}): the rest went to other tokens, "
                    "so no answer is read from it; rephrase the question or use a model that "
                    "follows the label format"
                )
            averaged = [
                math.fsum(read.get(i, 0.0) for read in reads) / len(reads)
                for i in range(len(asked.names))
            ]
            return asked.question_id, _logprob_reading.answer_for(question, averaged)

        pending = [
            a for a in _logprob_reading.asked_questions(request) if a.question_id not in settled
        ]
        found = dict(await asyncio.gather(*(one(a) for a in pending)))
        answers = {qid: settled.get(qid) or found[qid] for qid in request.questions}
        reading = Reading(
            method=self.method,
            upstream_calls=sum(t.calls for t in tallies.values()),
            mass={qid: min(t.mass) for qid, t in tallies.items() if t.mass},
            orderings=entry.orderings,
            hierarchy=tuple(qid for qid, t in tallies.items() if t.hierarchy),
            bounded=tuple(qid for qid, t in tallies.items() if t.bounded),
        )
        return Read(
            answers=answers,
            reading=reading,
            input_tokens=sum(t.tokens for t in tallies.values()) if tallies else 0,
            models=[t.model for t in tallies.values() if t.model],
            request_ids=[t.request_id for t in tallies.values() if t.request_id],
        )

    async def _read(
        self,
        entry: CatalogEntry,
        endpoint: Endpoint,
        state: str,
        asked: Asked,
        order: Sequence[int],
        tally: _Tally,
        deadline: float | None,
        first: bool,
    ) -> dict[int, float]:
        """``P(option)`` for the options ``order`` (indices into ``asked.names``), shown in that
        order; a hierarchy when there are more than the labels a round can show."""
        size = self._round_size(entry, asked)
        if len(order) <= size:
            items = [(i,) for i in order]
            return await self._round(entry, endpoint, state, asked, items, tally, deadline, first)
        tally.hierarchy = True
        per = math.ceil(len(order) / size)
        groups = [tuple(order[i : i + per]) for i in range(0, len(order), per)]
        outer = await self._round(entry, endpoint, state, asked, groups, tally, deadline, first)
        inner = await asyncio.gather(
            *(
                self._read(entry, endpoint, state, asked, group, tally, deadline, False)
                for group in groups
            )
        )
        found: dict[int, float] = {}
        for group, within in zip(groups, inner, strict=True):
            share = outer.get(group[0], 0.0)
            for option in group:
                found[option] = share * within.get(option, 0.0)
        return found

    @staticmethod
    def _round_size(entry: CatalogEntry, asked: Asked) -> int:
        top = entry.top_logprobs or DEFAULT_TOP_LOGPROBS
        return min(top, len(LETTERS))

    async def _round(
        self,
        entry: CatalogEntry,
        endpoint: Endpoint,
        state: str,
        asked: Asked,
        items: Sequence[tuple[int, ...]],
        tally: _Tally,
        deadline: float | None,
        first: bool,
    ) -> dict[int, float]:
        """One call: ``items`` (groups of option indices) behind labels. Returns, keyed by each
        item's first option, the item's probability among the items (summing to 1)."""
        words = asked.kind == "noul" and all(len(item) == 1 for item in items)
        labels = [asked.names[item[0]] if words else LETTERS[i] for i, item in enumerate(items)]
        payload = self.body(entry, state, asked, items, labels)
        reply, http = await self.post(entry, endpoint, payload, deadline=deadline)
        tally.calls += 1
        tally.tokens += _logprob_reading.usage_tokens(reply) or 0
        tally.model = tally.model or served_model(reply.get("model"))
        tally.request_id = tally.request_id or http.request_id
        shown = self._top_logprobs(reply, endpoint, entry)
        wanted = {label.casefold(): index for index, label in enumerate(labels)}
        seen: dict[int, float] = {}
        shown_mass = 0.0
        for token, logprob in shown:
            probability = math.exp(logprob)
            shown_mass += probability
            index = wanted.get(label_of(token))
            if index is not None:
                seen[index] = seen.get(index, 0.0) + probability
        mass = math.fsum(seen.values())
        floor = entry.mass_floor if entry.mass_floor is not None else DEFAULT_MASS_FLOOR
        if first:
            tally.mass.append(mass)
            if mass < floor or not seen:
                raise _Refused(mass, floor)
        if not seen:  # a follow-up round where the model shows none: the bound split evenly
            return {item[0]: 1.0 / len(items) for item in items}
        missing = [i for i in range(len(items)) if i not in seen]
        shares = dict(seen)
        if missing:
            tally.bounded = True
            least = min(math.exp(lp) for _, lp in shown) if shown else 0.0
            bound = min(max(0.0, 1.0 - shown_mass), len(missing) * least)
            rest = [option for i in missing for option in items[i]]
            within = await self._read(entry, endpoint, state, asked, rest, tally, deadline, False)
            for i in missing:
                shares[i] = bound / 2 * math.fsum(within.get(o, 0.0) for o in items[i])
        total = math.fsum(shares.values())
        return {items[i][0]: share / total for i, share in shares.items()}

    def body(
        self,
        entry: CatalogEntry,
        state: str,
        asked: Asked,
        items: Sequence[tuple[int, ...]],
        labels: Sequence[str],
    ) -> dict[str, object]:
        """The chat completions body of one round."""
        words = list(labels) == [asked.names[item[0]] for item in items]
        lines = [state, "", f"Question: {asked.instructions}", "Options:"]
        for label, item in zip(labels, items, strict=True):
            if len(item) == 1:
                name, description = asked.names[item[0]], asked.descriptions[item[0]]
                if asked.kind == "score":
                    shown = description or name
                else:
                    shown = f"{name}: {description}" if description else name
            else:
                shown = "one of " + ", ".join(asked.names[i] for i in item)
            lines.append(f"- {shown}" if words else f"{label}. {shown}")
        if words:
            lines.append(f"Answer {' or '.join(labels)} only.")
        else:
            lines.append("Answer with the letter of one option only.")
        return {
            "model": entry.wire_model_id,
            "messages": [{"role": "user", "content": "\n".join(lines)}],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": entry.top_logprobs or DEFAULT_TOP_LOGPROBS,
        }

    def _top_logprobs(
        self, reply: Mapping[str, object], endpoint: Endpoint, entry: CatalogEntry
    ) -> list[tuple[str, float]]:
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        logprobs = first.get("logprobs") if isinstance(first, Mapping) else None
        content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
        if not isinstance(content, list) or not content:
            raise self.no_logprobs(endpoint, entry, "token logprobs (choices[0].logprobs)")
        head = content[0]
        tops = head.get("top_logprobs") if isinstance(head, Mapping) else None
        if not isinstance(tops, list) or not tops:
            raise self.no_logprobs(endpoint, entry, "top_logprobs for the first token")
        found: list[tuple[str, float]] = []
        for item in tops:
            token = item.get("token") if isinstance(item, Mapping) else None
            logprob = item.get("logprob") if isinstance(item, Mapping) else None
            if (
                not isinstance(token, str)
                or isinstance(logprob, bool)
                or not isinstance(logprob, int | float)
                or not logprob <= 0
            ):
                raise NotAnAnswerError(
                    f"{self.service} at {endpoint.shown_url} sent a top_logprobs item without a "
                    "string token and a logprob <= 0; check that it speaks OpenAI's chat format"
                )
            found.append((token, float(logprob)))
        return found

    async def served_model(self, entry: CatalogEntry) -> str:
        """The model's name as the server reports it, after checking it returns logprobs (what
        ``harness serve`` asks at start: a server without them is refused with the fix)."""
        probe = DecisionRequest("1 + 1 = 2", {"probe": Noul("Is this true?")})
        endpoint = self.endpoint(entry, probe)
        asked = _logprob_reading.asked_questions(probe)[0]
        payload = self.body(entry, "1 + 1 = 2", asked, [(0,), (1,)], ["yes", "no"])
        reply, _ = await self.post(entry, endpoint, payload, deadline=time.monotonic() + 30)
        self._top_logprobs(reply, endpoint, entry)
        return served_model(reply.get("model")) or entry.wire_model_id


def chat_body(request: DecisionRequest, entry: CatalogEntry) -> bytes:
    """The body of the longest first round of ``request``'s questions: what must fit in the
    model's context (``max_context_tokens``) and what admission counts. A decision takes one such
    call a question at least: see docs/providers.md for the cost."""
    from harness.decision._internal import compact_json

    client = ChatLogprobsClient.__new__(ChatLogprobsClient)
    state = _logprob_reading.render_state(request)
    bodies = []
    for asked in _logprob_reading.asked_questions(request):
        count = min(len(asked.names), ChatLogprobsClient._round_size(entry, asked))
        items = [(i,) for i in range(count)]
        words = asked.kind == "noul"
        labels = [asked.names[i] if words else LETTERS[i] for i in range(count)]
        body = client.body(entry, state, asked, items, labels)
        bodies.append(compact_json(body, allow_nan=True))
    return max(bodies, key=len).encode("utf-8")

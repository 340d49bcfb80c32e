"""The replay client: a :class:`~harness.providers.DecisionClient` answering from a cassette.

A request is matched by the digest of its canonical System One wire body (the body a System One
client sends, with the entry's wire model id), whichever provider recorded it. Identical requests
are answered in the order they were recorded; concurrent calls match whatever order they come in,
since each finds its own body.

Strict (no ``fallback``, the default): a request the cassette does not hold raises
:class:`ReplayMissError`, naming the nearest recorded request and what differs. Lenient (a
``fallback`` client): the fallback answers it, and the miss is kept in :attr:`ReplayClient.misses`
(and logged); with ``record=True`` its answer is kept as a new interaction
(:meth:`ReplayClient.cassette` gives the recorded ones and the new ones, in the order asked).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.decision import DecisionRequest, DecisionResponse
from harness.decision import systemone as systemone_codec
from harness.decision._internal import load_json
from harness.errors import HarnessError
from harness.providers import DecisionClient
from harness.replay._cassette import Cassette, Interaction, body_digest, load_cassette
from harness.replay._request_diff import Difference, request_differences

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = ["ReplayClient", "ReplayMissError"]

log = logging.getLogger("harness.replay")

DEFAULT_FIX = (
    "If the change is meant, re-record the cassette (pytest --harness-record=new, or all to "
    "start over); the error's `details` show both sides' text."
)
"""How a miss says to fix it, unless the replay's user says otherwise."""

_SHOWN_DIFFERENCES = 8

_SHOWN_QUESTIONS = 3
"""How many of a missed request's questions its first line names (the rest counted)."""


def _shown_source(source: str) -> str:
    """A cassette's path as a message names it: relative to the current folder when under it
    (a test's failure reads ``tests/cassettes/...``, not the whole absolute path)."""
    if source.startswith("<") or not os.path.isabs(source):
        return source
    try:
        relative = os.path.relpath(source)
    except ValueError:  # another drive on Windows
        return source
    return source if relative.startswith("..") else relative


def _questions(request: DecisionRequest) -> str:
    """The request's questions, the first few by id and the rest counted."""
    names = list(request.questions)
    shown = ", ".join(names[:_SHOWN_QUESTIONS])
    more = len(names) - _SHOWN_QUESTIONS
    return shown + (f" and {more} more" if more > 0 else "")


"""Differences listed in a miss's message before "and N more"."""


class ReplayMissError(HarnessError, AssertionError):
    """A request the cassette does not hold (or holds fewer times than it was asked).

    The message names the cassette, the questions asked, the nearest recorded request and what
    differs from it (question ids, option keys, state paths: never the state's text);
    :attr:`details` adds both sides' text for each difference, for a person reading their own
    test's output. It is an :class:`AssertionError`, so pytest reports it as a failed check.
    """

    def __init__(
        self,
        message: str,
        *,
        digest: str,
        nearest: int | None,
        differences: Sequence[Difference],
        headline: str | None = None,
    ) -> None:
        super().__init__(message)
        self.headline = headline or message.split("\n", 1)[0]
        """The first sentence: which request, which cassette, the nearest recorded one."""
        self.digest = digest
        """The digest of the request's canonical body."""
        self.nearest = nearest
        """The index of the nearest recorded interaction (0-based), None for an empty cassette."""
        self.differences = tuple(differences)
        """What differs from the nearest recorded request."""

    @property
    def details(self) -> str:
        """The headline, then every difference with both sides' text (quotes the state)."""
        lines = [self.headline]
        if self.differences:
            lines.append("every difference, recorded and asked:")
            lines.extend(f"  {difference.detail()}" for difference in self.differences)
        return "\n".join(lines)


class _Tape:
    """What every view of one replay shares: the recorded answers left by digest, the misses,
    the new interactions, and the order requests were asked in."""

    def __init__(self, cassette: Cassette, source: str, fix: str) -> None:
        self.recorded = cassette.interactions
        self.source = source
        self.fix = fix
        self.left: dict[str, deque[int]] = {}
        for index, item in enumerate(self.recorded):
            self.left.setdefault(item.digest, deque()).append(index)
        self.asked = 0
        self.played: list[int] = []
        self.misses: list[ReplayMissError] = []
        self.refused: list[ReplayMissError] = []
        self.new: list[tuple[int, Interaction]] = []

    def take(self, digest: str) -> int | None:
        queue = self.left.get(digest)
        if not queue:
            return None
        index = queue.popleft()
        self.played.append(index)
        return index

    def miss(self, body: bytes, digest: str, request: DecisionRequest) -> ReplayMissError:
        """The error of a request the cassette does not hold: the problem first, then its fix,
        then (for a request that changed) what differs from the nearest recorded one, so a
        failing test names the problem and the fix in its first lines."""
        asked = _questions(request)
        source = _shown_source(self.source)
        times = sum(1 for item in self.recorded if item.digest == digest)
        short = digest[:12]
        if times:
            return ReplayMissError(
                f"request {short} (questions {asked}) is recorded {times} time(s) in cassette "
                f"{source}, and was asked once more: the code asks it more often than when "
                f"it was recorded. {self.fix}",
                digest=digest,
                nearest=None,
                differences=(),
            )
        if not self.recorded:
            return ReplayMissError(
                f"request {short} (questions {asked}) is not in cassette {source}, which "
                "holds no interaction: record it (pytest --harness-record=new, with the model "
                "reachable)",
                digest=digest,
                nearest=None,
                differences=(),
            )
        wanted = load_json(body)
        assert isinstance(wanted, dict)  # a body the codec wrote: an object
        nearest, differences = min(
            (
                (index, request_differences(item.request, wanted))
                for index, item in enumerate(self.recorded)
            ),
            key=lambda pair: (len(pair[1]), pair[0]),
        )
        listed = [f"  - {d.summary()}" for d in differences[:_SHOWN_DIFFERENCES]]
        if len(differences) > _SHOWN_DIFFERENCES:
            listed.append(f"  - and {len(differences) - _SHOWN_DIFFERENCES} more")
        headline = (
            f"request {short} (questions {asked}) is not in cassette {source}; the nearest "
            f"recorded request is interaction {nearest + 1} of {len(self.recorded)}"
        )
        return ReplayMissError(
            f"{headline}. {self.fix}\nWhat differs:\n" + "\n".join(listed),
            digest=digest,
            nearest=nearest,
            differences=differences,
            headline=headline,
        )


class ReplayClient:
    """A decision client answering from a cassette (a :class:`~harness.replay.Cassette`, or the
    path of a cassette file); see the module's notes.

    ``fallback`` makes it lenient: a request not recorded is asked of ``fallback`` and reported
    in :attr:`misses`; ``record=True`` keeps those answers as new interactions. ``fix`` is the
    sentence a miss ends with: how to re-record where this replay is used.
    """

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        fallback: DecisionClient | None = None,
        record: bool = False,
        source: str | None = None,
        fix: str = DEFAULT_FIX,
    ) -> None:
        if isinstance(cassette, Cassette):
            self._tape = _Tape(cassette, source or "<in memory>", fix)
        else:
            self._tape = _Tape(load_cassette(cassette), source or os.fspath(cassette), fix)
        self.fallback = fallback
        self.record = record

    def with_fallback(self, fallback: DecisionClient | None) -> ReplayClient:
        """A client sharing this replay (what is left, misses, new interactions) that asks
        ``fallback`` for what is not recorded."""
        view = ReplayClient.__new__(ReplayClient)
        view._tape = self._tape
        view.fallback = fallback
        view.record = self.record
        return view

    @property
    def source(self) -> str:
        """Where the cassette came from (its path, or ``<in memory>``)."""
        return self._tape.source

    @property
    def misses(self) -> tuple[ReplayMissError, ...]:
        """The requests not recorded that a fallback answered, in the order asked."""
        return tuple(self._tape.misses)

    @property
    def refused(self) -> tuple[ReplayMissError, ...]:
        """The requests not recorded that were refused (no fallback), in the order asked."""
        return tuple(self._tape.refused)

    @property
    def played(self) -> int:
        """How many requests were answered from the cassette."""
        return len(self._tape.played)

    @property
    def unplayed(self) -> tuple[int, ...]:
        """Indexes of the recorded interactions no request asked for (yet)."""
        used = set(self._tape.played)
        return tuple(i for i in range(len(self._tape.recorded)) if i not in used)

    @property
    def new_interactions(self) -> tuple[Interaction, ...]:
        """The interactions a fallback answered while recording, in the order asked."""
        return tuple(item for _, item in sorted(self._tape.new, key=lambda pair: pair[0]))

    def cassette(self, *, keep_recorded: bool = True) -> Cassette:
        """The cassette to write: the recorded interactions (unless ``keep_recorded`` is false)
        and then the new ones, in the order they were asked."""
        kept = self._tape.recorded if keep_recorded else ()
        return Cassette((*kept, *self.new_interactions))

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """The recorded answer to ``request``; see :class:`harness.providers.DecisionClient`."""
        tape = self._tape
        order = tape.asked
        tape.asked += 1
        body = systemone_codec.encode_body(request, entry.wire_model_id)
        digest = body_digest(body)
        index = tape.take(digest)
        if index is not None:
            await asyncio.sleep(0)  # an answer is awaited, as a real one is
            return tape.recorded[index].reply.response(request)
        miss = tape.miss(body, digest, request)
        if self.fallback is None:
            tape.refused.append(miss)
            raise miss
        tape.misses.append(miss)
        level = logging.INFO if self.record else logging.WARNING  # recording: a miss is the point
        log.log(level, "not in the cassette, asked the fallback: %s", miss.message.split("\n")[0])
        response = await self.fallback.decide(request, entry, timeout=timeout)
        if self.record and response.success:
            tape.new.append((order, Interaction.of(body, response)))
        return response

    async def aclose(self) -> None:
        """Nothing of its own to release (the fallback belongs to whoever gave it); idempotent."""

"""The catalog: entries by id in file order, and the pins that say which entry fills a seat.

A :class:`Catalog` is built from entries and pins (reading one from a TOML file is
``_catalog_file.py``'s); it checks that ids are unique and every tokenizer resolves, and answers
which entry a seat or a decision call resolves to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ._entry import CatalogEntry, CatalogError
from ._internal import did_you_mean
from ._tokenizers import KNOWN_ENCODINGS, tokenizer

__all__ = ["DECISION", "Catalog"]

DECISION = "decision"
"""The seat (and entry kind) of decision models."""


class Catalog:
    """Entries by id in file order, and pins seat -> entry id (mutable with :meth:`pin`)."""

    def __init__(
        self,
        entries: Iterable[CatalogEntry],
        pins: Mapping[str, str] | None = None,
        *,
        source: str = "<catalog>",
    ) -> None:
        self.source = source
        by_id: dict[str, CatalogEntry] = {}
        for entry in entries:
            if entry.id in by_id:
                raise CatalogError(
                    f"{source}: catalog entry {entry.id!r} is listed twice (ids are unique)"
                )
            if entry.tokenizer not in KNOWN_ENCODINGS:
                known = ", ".join(KNOWN_ENCODINGS)
                raise CatalogError(
                    f"{source}: catalog entry {entry.id!r}: unknown tokenizer {entry.tokenizer!r}; "
                    f"known encodings: {known}"
                )
            tokenizer(entry.tokenizer)  # resolved now: a missing BPE file fails at load
            by_id[entry.id] = entry
        self._entries = by_id
        self._pins: dict[str, str] = {}
        for seat, entry_id in (pins or {}).items():
            self.pin(seat, entry_id)

    @property
    def entries(self) -> Mapping[str, CatalogEntry]:
        """The entries by id, in file order (read-only)."""
        return MappingProxyType(self._entries)

    @property
    def pins(self) -> dict[str, str]:
        """A copy of the pins, seat -> entry id; change them with :meth:`pin`."""
        return dict(self._pins)

    def entry(self, entry_id: str) -> CatalogEntry:
        """The entry ``entry_id``; an unknown id is refused, listing the known ids."""
        found = self._entries.get(entry_id)
        if found is None:
            known = ", ".join(repr(k) for k in self._entries) or "none"
            near = did_you_mean(entry_id, self._entries)
            raise CatalogError(
                f"{self.source}: unknown catalog entry id {entry_id!r}; known ids: {known}{near}"
            )
        return found

    def pin(self, seat: str, entry_id: str) -> None:
        """Pin ``entry_id`` to ``seat``; the entry's kind must be the seat."""
        entry = self.entry(entry_id)
        if entry.kind != seat:
            raise CatalogError(
                f"{self.source}: cannot pin catalog entry {entry_id!r} to seat {seat!r}: it is "
                f"not a {seat} entry (its kind is {entry.kind!r})"
            )
        self._pins[seat] = entry_id

    def pinned(self, seat: str = DECISION) -> CatalogEntry:
        """The entry pinned to ``seat`` now."""
        entry_id = self._pins.get(seat)
        if entry_id is None:
            raise CatalogError(
                f"{self.source}: no catalog entry is pinned to seat {seat!r}: "
                f'add [pins] {seat} = "<entry id>" to the catalog'
            )
        return self.entry(entry_id)

    def decision_entry(self, pinned_id: str | None) -> CatalogEntry | None:
        """What :meth:`resolve_decision` resolves ``pinned_id`` to, looked up now (a pin may
        change between calls); ``None`` where it would refuse the call (ask it for the error)."""
        entry_id = self._pins.get(DECISION) if pinned_id is None else pinned_id
        entry = None if entry_id is None else self._entries.get(entry_id)
        if entry is None or entry.kind != DECISION:
            return None
        return entry

    def resolve_decision(self, pinned_id: str | None, *, asked_by: str) -> CatalogEntry:
        """The decision entry for a call: ``pinned_id`` when given, else the decision pin.

        ``asked_by`` names the job that asked, for the error when no decision entry is configured.
        """
        if pinned_id is not None:
            entry = self.entry(pinned_id)
            if entry.kind != DECISION:
                raise CatalogError(
                    f"{self.source}: {asked_by} pinned catalog entry {pinned_id!r}, which is not "
                    f"a decision entry (its kind is {entry.kind!r})"
                )
            return entry
        entry_id = self._pins.get(DECISION)
        if entry_id is None:
            offered = [e.id for e in self._entries.values() if e.kind == DECISION]
            hint = f"decision entries: {', '.join(offered)}" if offered else "it has none"
            raise CatalogError(
                f"{asked_by} asked for a decision model but {self.source} has no decision entry "
                f'pinned ({hint}): add [pins] decision = "<entry id>", or pin the call to an entry'
            )
        return self.entry(entry_id)

    def __repr__(self) -> str:
        return f"Catalog({self.source!r}, entries={list(self._entries)!r}, pins={self._pins!r})"

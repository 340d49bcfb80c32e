"""An immutable, ordered, hashable mapping: how the vocabulary keeps options and answers."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Generic, TypeVar

__all__ = ["FrozenMap"]

K = TypeVar("K")
V_co = TypeVar("V_co", covariant=True)


class FrozenMap(Mapping[K, V_co], Generic[K, V_co]):
    """A read-only mapping that keeps insertion order.

    Two frozen maps are equal when they hold the same items in the same order (as two
    ``OrderedDict`` are); against any other mapping, equality ignores order (as a ``dict``'s
    does). Hashable when its values are.

    >>> FrozenMap([("a", 1), ("b", 2)])
    FrozenMap({'a': 1, 'b': 2})
    """

    __slots__ = ("_items", "_lookup")

    _items: tuple[tuple[K, V_co], ...]  # made on first use by equality or hash: see _pairs

    def __init__(self, items: Iterable[tuple[K, V_co]] = ()) -> None:
        self._lookup: dict[K, V_co] = dict(items)

    @classmethod
    def adopt(cls, lookup: dict[K, V_co]) -> FrozenMap[K, V_co]:
        """A frozen map over ``lookup`` itself, not a copy: for a caller that made the dict and
        never touches it again (the vocabulary's trusted constructors)."""
        made = cls.__new__(cls)
        made._lookup = lookup
        return made

    def _pairs(self) -> tuple[tuple[K, V_co], ...]:
        """The items in order as a tuple (what equality and hash compare), made once."""
        try:
            return self._items
        except AttributeError:
            pairs: tuple[tuple[K, V_co], ...] = tuple(self._lookup.items())
            self._items = pairs
            return pairs

    @classmethod
    def of(cls, mapping: Mapping[K, V_co] | Iterable[tuple[K, V_co]]) -> FrozenMap[K, V_co]:
        """``mapping`` as a frozen map (itself when it already is one)."""
        if isinstance(mapping, FrozenMap):
            return mapping
        if type(mapping) is dict or isinstance(mapping, Mapping):  # a dict skips the ABC
            return cls(mapping.items())
        return cls(mapping)

    def __getitem__(self, key: K) -> V_co:
        return self._lookup[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._lookup)

    def __len__(self) -> int:
        return len(self._lookup)

    # The views are the inner dict's (read-only, as a dict's views are): the ``Mapping`` mixins
    # would walk the keys in Python and look each one up again.
    def keys(self) -> KeysView[K]:
        return self._lookup.keys()

    def values(self) -> ValuesView[V_co]:
        return self._lookup.values()

    def items(self) -> ItemsView[K, V_co]:
        return self._lookup.items()

    def __contains__(self, key: object) -> bool:
        try:
            return key in self._lookup
        except TypeError:  # an unhashable key is in no mapping
            return False

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._pairs() == other._pairs()
        if isinstance(other, Mapping):
            return self._lookup == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._pairs())

    def __repr__(self) -> str:
        return f"FrozenMap({self._lookup!r})"

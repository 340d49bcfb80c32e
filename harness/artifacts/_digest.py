"""Digests: the one line a decision model reads about an artifact.

A digest line is ``"<ref> (<alias>): <words>"``. The words are, in this order of fallbacks:

1. a ``ListArtifact``: ``"a list of <N> <iterand alias>"`` (also for an empty list);
2. the text of the formatter registered for the artifact's class (or the nearest base along the
   MRO) in a :class:`TextFormatterRegistry`, on one line: every run of whitespace, line breaks
   included, becomes one space, and the ends are stripped;
3. a ``LinkArtifact``: its title, on one line the same way;
4. the artifact's compact JSON (:func:`harness.artifacts.to_json`), which is one line already.

Words longer than :data:`DIGEST_CHARS` characters are cut to exactly ``DIGEST_CHARS``
characters (code points) and followed by ``"..."``, so cut words are ``DIGEST_CHARS + 3`` long;
words of exactly ``DIGEST_CHARS`` characters are kept whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar, cast

from harness.artifacts._artifact import Artifact, LinkArtifact, ListArtifact
from harness.artifacts._convert import to_json

__all__ = ["DIGEST_CHARS", "TextFormatterRegistry", "digest_line", "digest_words"]

T = TypeVar("T", bound=Artifact)

DIGEST_CHARS: Final = 160
"""The longest digest words shown whole; longer words are cut to this many characters + "..."."""

_ELLIPSIS: Final = "..."

_Formatter = Callable[[Artifact], str]  # stored erased; register() ties each one to its class


def _one_line(text: str) -> str:
    # str.split() breaks on every character str.splitlines() breaks on (all are whitespace).
    return " ".join(text.split())


class TextFormatterRegistry:
    """What an artifact class reads as before a decision model: one formatter per class.

    A formatter found for a class serves its subclasses too (the most specific registration along
    the MRO wins). Registering a class again replaces its formatter. ``copy()`` gives an
    independent registry (for a thinker that adds its own formatters to a shared base).
    """

    __slots__ = ("_formatters", "_found")

    def __init__(self) -> None:
        self._formatters: dict[type[Artifact], _Formatter] = {}
        self._found: dict[type[Artifact], _Formatter | None] = {}

    def register(self, tp: type[T], formatter: Callable[[T], str]) -> None:
        """Make ``formatter`` the text of ``tp`` and its subclasses (unless they have their own)."""
        if not (isinstance(tp, type) and issubclass(tp, Artifact)):
            raise TypeError(
                f"a text formatter is registered for an Artifact class, not {tp!r}: pass the "
                "class itself (not a parameterised alias)"
            )
        if issubclass(tp, ListArtifact):
            raise ValueError(
                f"{tp.__qualname__} is a ListArtifact, whose digest is always its count and "
                "iterand alias: register formatters for the iterand classes instead"
            )
        if not callable(formatter):
            raise TypeError(f"the formatter for {tp.__qualname__} must be callable")
        self._formatters[tp] = cast(_Formatter, formatter)
        self._found.clear()

    def formatter_for(self, tp: type[T]) -> Callable[[T], str] | None:
        """The formatter serving ``tp``: its own, else the nearest base's along the MRO."""
        try:
            return self._found[tp]
        except KeyError:
            pass
        found: _Formatter | None = None
        for base in tp.__mro__:
            found = self._formatters.get(base)
            if found is not None:
                break
        self._found[tp] = found
        return found

    def format(self, artifact: Artifact) -> str | None:
        """The formatter's text for ``artifact`` (as it returned it), or ``None`` without one."""
        formatter = self.formatter_for(type(artifact))
        if formatter is None:
            return None
        text = formatter(artifact)
        if not isinstance(text, str):
            raise TypeError(
                f"the text formatter for {type(artifact).__qualname__} returned a "
                f"{type(text).__qualname__}: a formatter returns str"
            )
        return text

    def copy(self) -> TextFormatterRegistry:
        """An independent registry with the same formatters."""
        twin = TextFormatterRegistry()
        twin._formatters = dict(self._formatters)
        return twin

    __copy__ = copy

    def __len__(self) -> int:
        return len(self._formatters)

    def __contains__(self, tp: object) -> bool:
        """Whether ``tp`` has a formatter of its own (not one inherited from a base)."""
        return tp in self._formatters

    def __repr__(self) -> str:
        names = ", ".join(tp.__qualname__ for tp in self._formatters)
        return f"TextFormatterRegistry({names})"


def _cut(words: str) -> str:
    if len(words) > DIGEST_CHARS:
        return words[:DIGEST_CHARS] + _ELLIPSIS
    return words


def _iterand_alias(iterand_type: object) -> str:
    origin = getattr(iterand_type, "__origin__", iterand_type)
    if isinstance(origin, type) and issubclass(origin, Artifact):
        return origin.alias
    return str(getattr(origin, "__name__", origin))


def digest_words(artifact: Artifact, formatters: TextFormatterRegistry) -> str:
    """What the model reads about ``artifact``, one line, cut at :data:`DIGEST_CHARS`."""
    if isinstance(artifact, ListArtifact):
        words = f"a list of {len(artifact.iterands)} {_iterand_alias(artifact.iterand_type)}"
    else:
        text = formatters.format(artifact)
        if text is not None:
            words = _one_line(text)
        elif isinstance(artifact, LinkArtifact):
            words = _one_line(artifact.title)
        else:
            words = to_json(artifact)
    return _cut(words)


def digest_line(ref: str, artifact: Artifact, formatters: TextFormatterRegistry) -> str:
    """``"<ref> (<alias>): <words>"``: the artifact's line in a decision's state."""
    return f"{_one_line(ref)} ({type(artifact).alias}): {digest_words(artifact, formatters)}"

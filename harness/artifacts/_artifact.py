"""Artifacts: the typed things a run's tools take and produce."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import ClassVar, Generic, TypeVar, get_args, get_origin

import attrs

__all__ = ["Artifact", "LinkArtifact", "ListArtifact", "default_alias"]

_ALIAS = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def default_alias(name: str) -> str:
    """The snake_case alias of a class name: ``PriceStatement`` -> ``price_statement``."""
    return _CAMEL.sub("_", name).lower()


class Artifact:
    """The base of every artifact: an immutable value with an alias per class.

    Subclasses are ordinary attrs frozen classes; the alias is given as a class keyword and
    defaults to the class name in snake_case::

        @attrs.frozen
        class Note(Artifact, alias="note"):
            text: str
    """

    __slots__ = ()
    alias: ClassVar[str] = "artifact"

    def __init_subclass__(cls, *, alias: str | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if alias is None:
            # attrs re-creates slotted classes: keep an alias set on the class body itself.
            own = cls.__dict__.get("alias")
            alias = own if isinstance(own, str) else default_alias(cls.__name__)
        if not _ALIAS.match(alias):
            raise ValueError(
                f"artifact alias {alias!r} of {cls.__qualname__} is not valid: use letters, "
                "digits, '_', '.' or '-', starting with a letter or '_'"
            )
        cls.alias = alias


T_co = TypeVar("T_co", bound=Artifact, covariant=True)


@attrs.frozen
class ListArtifact(Artifact, Generic[T_co], alias="list"):
    """An immutable list of artifacts of one type (covariant: a list of a subtype is a list of
    its base).

    ``iterand_type`` is the declared type of the items (so an empty list still says what it is a
    list of); ``instruction`` says what the list is for (a thinker's answer carries its objective).
    """

    iterand_type: type[T_co]
    iterands: tuple[T_co, ...] = attrs.field(converter=tuple)
    instruction: str | None = None

    def __attrs_post_init__(self) -> None:
        # The iterand type may itself be a parameterised list (ListArtifact[Note]): check against
        # its class, and a nested list's declared item type against the parameter.
        declared = get_origin(self.iterand_type) or self.iterand_type
        if not (isinstance(declared, type) and issubclass(declared, Artifact)):
            raise TypeError(
                f"a list's iterand type must be an Artifact class, not {self.iterand_type!r}: "
                "wrap plain values in an Artifact subclass"
            )
        (inner,) = get_args(self.iterand_type) or (None,)
        inner_class = get_origin(inner) or inner
        for i, item in enumerate(self.iterands):
            if not isinstance(item, declared) or (
                isinstance(inner_class, type)
                and isinstance(item, ListArtifact)
                and not issubclass(get_origin(item.iterand_type) or item.iterand_type, inner_class)
            ):
                raise TypeError(
                    f"item {i} of a list of {getattr(declared, '__qualname__', declared)} is a "
                    f"{type(item).__qualname__}: every iterand must be an instance of the "
                    "iterand type"
                )

    @classmethod
    def of(
        cls, iterand_type: type[T_co], items: Iterable[T_co], instruction: str | None = None
    ) -> ListArtifact[T_co]:
        """``ListArtifact.of(Note, notes)``: a list of ``notes`` typed as notes."""
        return ListArtifact(iterand_type, tuple(items), instruction)

    def __len__(self) -> int:
        return len(self.iterands)

    def __iter__(self) -> Iterator[T_co]:
        return iter(self.iterands)


@attrs.frozen
class LinkArtifact(Artifact, alias="link"):
    """A link to something outside the run: its digest reads as the title."""

    title: str
    url: str

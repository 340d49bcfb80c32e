"""A run's world: every artifact it adopted, in the order things came to be, each with its ref."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, cast, get_args, get_origin

from harness.artifacts._artifact import Artifact, ListArtifact
from harness.errors import NotFoundError

__all__ = ["ArtifactRegistry", "conforms"]

T = TypeVar("T", bound=Artifact)


def conforms(artifact: Artifact, tp: type[Artifact]) -> bool:
    """Whether ``artifact`` is an instance of ``tp``, a class or a parameterised ``ListArtifact``.

    A list conforms to ``ListArtifact[X]`` when its declared iterand type is ``X`` or a subclass
    (lists are covariant); for a nested ``X`` such as ``ListArtifact[Note]``, when every iterand
    conforms to it (an empty list conforms when its iterand type is a list class). An open or
    ``Any`` parameter accepts any iterand type.
    """
    origin = get_origin(tp)
    if origin is None:
        return isinstance(artifact, tp)
    if not isinstance(artifact, origin):
        return False
    args = get_args(tp)
    if not (isinstance(artifact, ListArtifact) and args):
        return True
    (wanted,) = args
    wanted_class = get_origin(wanted) or wanted
    if not isinstance(wanted_class, type):  # a TypeVar or Any: anything goes
        return True
    declared = get_origin(artifact.iterand_type) or artifact.iterand_type
    if not (isinstance(declared, type) and issubclass(declared, wanted_class)):
        return False
    if wanted is wanted_class:
        return True
    return all(conforms(item, wanted) for item in artifact.iterands)


class ArtifactRegistry:
    """The world of one run: artifacts by identity, each with a deterministic ref.

    ``adopt`` registers an artifact and returns its ref ``<alias>#<n>``, ``n`` counting per alias
    from 1 (``note#1``, ``note#2``, ``list#1``), so the same adoption sequence gives the same refs
    in every run. A ``ListArtifact``'s iterands are adopted right after it, in list order,
    recursively. Identity is by object: two equal artifacts are two entries, and adopting an
    artifact again returns its ref without adding it. The registry keeps what it adopted alive.

    >>> from harness.artifacts import LinkArtifact
    >>> world = ArtifactRegistry()
    >>> world.adopt(LinkArtifact("docs", "https://example.org"))
    'link#1'
    """

    __slots__ = ("_by_id", "_by_ref", "_counts", "_entries")

    def __init__(self) -> None:
        self._entries: list[tuple[str, Artifact]] = []
        self._by_id: dict[int, str] = {}
        self._by_ref: dict[str, Artifact] = {}
        self._counts: dict[str, int] = {}

    def adopt(self, artifact: Artifact) -> str:
        """Register ``artifact`` (and a list's iterands, recursively) and return its ref."""
        if not isinstance(artifact, Artifact):
            raise TypeError(
                f"only artifacts join a run's world, not a {type(artifact).__qualname__}: wrap "
                "the value in an Artifact subclass"
            )
        known = self._by_id.get(id(artifact))
        if known is not None:
            return known
        ref = self._add(artifact)
        # Depth-first, in list order, without recursion (nesting depth is the caller's).
        pending: list[Artifact] = []
        if isinstance(artifact, ListArtifact):
            pending.extend(reversed(artifact.iterands))
        while pending:
            item = pending.pop()
            if id(item) in self._by_id:
                continue
            self._add(item)
            if isinstance(item, ListArtifact):
                pending.extend(reversed(item.iterands))
        return ref

    def _add(self, artifact: Artifact) -> str:
        alias = type(artifact).alias
        n = self._counts.get(alias, 0) + 1
        self._counts[alias] = n
        ref = f"{alias}#{n}"
        self._entries.append((ref, artifact))
        self._by_id[id(artifact)] = ref
        self._by_ref[ref] = artifact
        return ref

    def ref(self, artifact: Artifact) -> str:
        """The ref of an adopted artifact; ``KeyError`` naming its type when it was not adopted."""
        ref = self._by_id.get(id(artifact))
        if ref is None:
            cls = type(artifact)
            alias = getattr(cls, "alias", None)
            raise KeyError(
                f"this {cls.__qualname__} (alias {alias!r}) was never adopted by this run's "
                "registry: adopt it first (an equal but distinct object is another artifact)"
            )
        return ref

    def get(self, ref: str) -> Artifact:
        """The artifact under ``ref``; ``NotFoundError`` naming the ref when there is none."""
        artifact = self._by_ref.get(ref)
        if artifact is None:
            raise NotFoundError(
                f"no artifact {ref!r} in this run's world ({len(self._entries)} artifacts): "
                "use a ref from the artifact lines, such as note#1"
            )
        return artifact

    def world(self) -> Sequence[tuple[str, Artifact]]:
        """Every ``(ref, artifact)`` in the order things came to be (a snapshot)."""
        return tuple(self._entries)

    def instances(self, tp: type[T]) -> list[tuple[str, T]]:
        """The ``(ref, artifact)`` pairs whose artifact is a ``tp``, in world order.

        ``tp`` is a class or a parameterised ``ListArtifact`` (see :func:`conforms`).
        """
        if get_origin(tp) is None:
            return [(ref, a) for ref, a in self._entries if isinstance(a, tp)]
        return [(ref, cast(T, a)) for ref, a in self._entries if conforms(a, tp)]

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, artifact: object) -> bool:
        """Whether this very object was adopted (identity, not equality)."""
        # The registry keeps every adopted object alive, so no other live object shares its id.
        return id(artifact) in self._by_id

    def __repr__(self) -> str:
        return f"<ArtifactRegistry of {len(self._entries)} artifacts>"

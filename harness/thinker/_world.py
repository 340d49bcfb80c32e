"""A thinker run's world: the registry plus what each turn reads of it, kept up to date as
artifacts are adopted, so a turn costs what changed, not the whole world again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Never

from harness.artifacts import (
    Artifact,
    ArtifactRegistry,
    ListArtifact,
    TextFormatterRegistry,
    conforms,
    digest_words,
)
from harness.tools import ClassToolProvider, runtime_class

__all__ = ["RunWorld"]

Provider = ClassToolProvider[Never, Artifact]


class RunWorld:
    """The world of one run, in the order things came to be.

    For every artifact it keeps the digest words and line (computed once), and for every tool
    the refs it could still take (its input type, a list only for a list-taking tool, the pair
    not yet run). The output candidates are the artifacts of the output type that a tool produced:
    never the input, nor the iterands it came with.
    """

    def __init__(
        self,
        input: Artifact,
        providers: Sequence[Provider],
        output_type: type[Artifact],
        formatters: TextFormatterRegistry,
    ) -> None:
        self.registry = ArtifactRegistry()
        self._providers = tuple(providers)
        self._takes = {
            p.name: (p.input_type, issubclass(runtime_class(p.input_type), ListArtifact))
            for p in self._providers
        }
        self._output_type = output_type
        self._formatters = formatters
        self.lines: list[str] = []
        self.words: dict[str, str] = {}
        self.line: dict[str, str] = {}
        self.open: dict[str, list[str]] = {p.name: [] for p in self._providers}
        self.candidates: list[str] = []
        # The tools a non-list artifact fits depend on its class alone: worked out once a class.
        self._fits: dict[type, tuple[str, ...]] = {}
        self._seen = 0
        self._given = True  # what the input brings is never a candidate
        self.adopt(input)
        self._given = False

    def adopt(self, artifact: Artifact) -> str:
        """Adopt a product (with a list's iterands) and index what is new; return its ref."""
        ref = self.registry.adopt(artifact)
        entries = self.registry.world()
        for new_ref, new in entries[self._seen :]:
            words = digest_words(new, self._formatters)
            line = f"{new_ref} ({new.alias}): {words}"
            self.words[new_ref] = words
            self.line[new_ref] = line
            self.lines.append(line)
            for name in self._tools_taking(new):
                self.open[name].append(new_ref)
            if not self._given and isinstance(new, self._output_type):
                self.candidates.append(new_ref)
        self._seen = len(entries)
        return ref

    def _tools_taking(self, artifact: Artifact) -> tuple[str, ...]:
        """The tools whose input type ``artifact`` is (a list only for a list-taking tool)."""
        if isinstance(artifact, ListArtifact):  # a list fits by its iterands: asked each time
            return tuple(
                name
                for name, (takes, takes_list) in self._takes.items()
                if takes_list and conforms(artifact, takes)
            )
        cls = type(artifact)
        fits = self._fits.get(cls)
        if fits is None:
            fits = self._fits[cls] = tuple(
                name
                for name, (takes, takes_list) in self._takes.items()
                if not takes_list and conforms(artifact, takes)
            )
        return fits

    def spend(self, tool: str, ref: str) -> None:
        """The pair (tool, ref) ran: it is never offered again."""
        self.open[tool].remove(ref)

    def moves(self) -> list[tuple[Provider, list[str]]]:
        """The offered tools, in palette order, each with its candidate refs in world order."""
        return [(p, self.open[p.name]) for p in self._providers if self.open[p.name]]

    def get(self, ref: str) -> Artifact:
        """The artifact a ref names."""
        return self.registry.get(ref)

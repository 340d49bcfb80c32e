"""Artifacts: the typed things a run's tools take and produce, the run's world and its digests.

An artifact is an immutable attrs class with an alias; a run's :class:`ArtifactRegistry` is its
world, giving every artifact a deterministic ref ``<alias>#<n>``; a digest line
``"<ref> (<alias>): <words>"`` is all a decision model reads about an artifact, with the words
from a :class:`TextFormatterRegistry` when the application registered one.
"""

from harness.artifacts._artifact import Artifact as Artifact
from harness.artifacts._artifact import LinkArtifact as LinkArtifact
from harness.artifacts._artifact import ListArtifact as ListArtifact
from harness.artifacts._artifact import default_alias as default_alias
from harness.artifacts._convert import UnknownFieldError as UnknownFieldError
from harness.artifacts._convert import artifact_converter as artifact_converter
from harness.artifacts._convert import from_json as from_json
from harness.artifacts._convert import refuse_unknown_fields as refuse_unknown_fields
from harness.artifacts._convert import to_json as to_json
from harness.artifacts._digest import DIGEST_CHARS as DIGEST_CHARS
from harness.artifacts._digest import TextFormatterRegistry as TextFormatterRegistry
from harness.artifacts._digest import digest_line as digest_line
from harness.artifacts._digest import digest_words as digest_words
from harness.artifacts._registry import ArtifactRegistry as ArtifactRegistry
from harness.artifacts._registry import conforms as conforms

__all__ = [
    "DIGEST_CHARS",
    "Artifact",
    "ArtifactRegistry",
    "LinkArtifact",
    "ListArtifact",
    "TextFormatterRegistry",
    "UnknownFieldError",
    "artifact_converter",
    "conforms",
    "default_alias",
    "digest_line",
    "digest_words",
    "from_json",
    "refuse_unknown_fields",
    "to_json",
]

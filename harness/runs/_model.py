"""What ``model=`` names: the catalog a run resolves through and the clients it installs.

``model`` is one of

* ``None``: the configured catalog's decision pin (see :func:`harness.catalog.load_catalog`);
* a catalog entry id (``"embedded"``, ``"typesafe"``, an id of your catalog file);
* ``"systemone:<wire model>"`` or ``"openai:<model>"``: an entry made from the environment
  (``TYPESAFE_BASE_URL`` / ``TYPESAFE_API_KEY``, ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``);
* ``"openai-chat:<model>[@<base url>]"`` or ``"openai-completions:<model>[@<base url>]"``: any
  OpenAI-compatible model read through its token logprobs (docs/providers.md);
* ``"llama:<file.gguf or package>"``: a GGUF run in this process; ``"fitted:<file.json>"``: a
  decider ``harness fit`` wrote (its file checked when the seat is made, docs/fitted.md);
* a :class:`~harness.providers.DecisionClient` (a :class:`~harness.testing.FakeDecisionModel`, a
  replay, your own): installed for a local entry named ``client`` through the dispatcher's
  ``clients`` mapping, so everything the dispatcher does (pricing, budgets, admission, records,
  overrides) applies to it as to any model.

The run never builds a client itself: the dispatcher resolves every client.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from harness.catalog import DECISION, Catalog, CatalogEntry, CatalogError, load_catalog
from harness.catalog import entry_for_model as _entry_for_model
from harness.catalog._internal import did_you_mean
from harness.providers import DecisionClient
from harness.providers._internal import gguf_problem

__all__ = ["CLIENT_ENTRY", "ModelChoice", "Seat", "seat_for"]

ModelChoice = str | DecisionClient | None
"""What ``model=`` accepts (see the module's docstring)."""

CLIENT_ENTRY = "client"
"""The entry id a :class:`DecisionClient` given as ``model=`` is installed under."""


@attrs.frozen
class Seat:
    """A run's catalog (a copy, its decision pin set) and the clients installed by entry id."""

    catalog: Catalog
    clients: Mapping[str, DecisionClient]

    @property
    def entry(self) -> CatalogEntry:
        """The entry the run's decisions resolve to."""
        return self.catalog.pinned(DECISION)


def _with(base: Catalog, entry: CatalogEntry | None, pin: str) -> Catalog:
    entries = list(base.entries.values())
    if entry is not None:
        entries = [e for e in entries if e.id != entry.id] + [entry]
    return Catalog(entries, {**base.pins, DECISION: pin}, source=base.source)


def seat_for(model: ModelChoice, catalog: Catalog | None = None) -> Seat:
    """The catalog and clients a run on ``model`` uses; ``catalog`` defaults to the configured
    one. The caller's catalog is never changed. An unknown model is refused naming the forms."""
    if catalog is None and model is not None and not isinstance(model, str):
        catalog = Catalog([], {}, source="the run's model")  # a client needs no catalog file
    base = catalog if catalog is not None else load_catalog()
    if model is None:
        base.pinned(DECISION)  # no pin: refused now, naming the fix
        return _ready(Seat(_with(base, None, base.pinned(DECISION).id), {}))
    if isinstance(model, str):
        if model in base.entries:
            return _ready(Seat(_with(base, None, model), {}))
        made = _entry_for_model(model)
        if made is None and model == "embedded":
            from harness.catalog import default_catalog

            made = default_catalog().entry("embedded")
        if made is None:
            known = ", ".join(repr(k) for k in base.entries) or "none"
            raise CatalogError(
                f"{base.source}: unknown catalog entry id {model!r}; known ids: {known}; nor is it "
                "a model string: pass an entry id, 'embedded', 'systemone:<wire model>', "
                "'openai:<model>', 'openai-chat:<model>[@<base url>]', "
                "'openai-completions:<model>[@<base url>]', 'llama:<file.gguf or package>', "
                f"'fitted:<file.json>', or a DecisionClient{_near(model, base)}"
            )
        return _ready(Seat(_with(base, made, made.id), {}))
    if not (callable(getattr(model, "decide", None)) and callable(getattr(model, "aclose", None))):
        raise TypeError(
            f"model must be an entry id, a model string or a DecisionClient, not "
            f"{type(model).__qualname__}: a client has async decide(request, entry) and aclose()"
        )
    entry = CatalogEntry(
        id=CLIENT_ENTRY,
        provider="fake",
        wire_model_id=type(model).__qualname__,
        max_context_tokens=1_000_000,
        max_concurrent=64,
    )
    return Seat(_with(base, entry, CLIENT_ENTRY), {CLIENT_ENTRY: model})


MODEL_PREFIXES = ("systemone", "openai", "openai-chat", "openai-completions", "llama", "fitted")
"""The providers a model string names before its colon."""


def _near(model: str, base: Catalog) -> str:
    """The hint for a model nothing answers to: the nearest entry id (or ``embedded``), or the
    string with the nearest provider before its colon (``lama:m.gguf`` -> ``llama:m.gguf``)."""
    prefix, colon, rest = model.partition(":")
    if colon:
        found = did_you_mean(prefix, MODEL_PREFIXES)
        if found:
            nearest = found.split("'")[1]
            return f"; did you mean {f'{nearest}:{rest}'!r}?"
    return did_you_mean(model, [*base.entries, "embedded"])


def _ready(seat: Seat) -> Seat:
    """``seat``, once its entry can run, checked now: a configuration error before anything
    runs, as a broken catalog is, never a failed run. A ``fitted`` entry's file is loaded and
    checked (a missing, cut or edited file); a ``llama`` entry whose GGUF file or package (or
    llama-cpp-python) is missing is refused in the words the user wrote."""
    entry = seat.entry
    if entry.provider == "fitted":
        from harness.providers import fitted_model

        fitted_model(entry)  # FittedError is a CatalogError; loaded once per process
    problem = gguf_problem(entry)
    if problem is not None:
        raise CatalogError(problem)
    return seat

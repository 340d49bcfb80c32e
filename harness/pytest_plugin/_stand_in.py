"""The stand-in for cassette misses (``--harness-fallback=fitted:FILE``): a decider distilled from
the recorded model answers the requests no cassette holds. Loaded by the plugin's configure hook
when the option is given."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import pytest

if TYPE_CHECKING:
    from harness.catalog import CatalogEntry
    from harness.decision import DecisionRequest, DecisionResponse


class StandIn:
    """``--harness-fallback=fitted:FILE``: a decider distilled from the recorded model answers
    the requests no cassette holds (in every record mode but ``all``), each answer's reading
    marked ``stand_in``; tests it answered for get a "harness stand-in" report section, and
    the session a summary line."""

    def __init__(self, spec: str, entry: CatalogEntry) -> None:
        from harness.providers import client_for

        self.spec = spec
        self.entry = entry
        self.client = client_for(entry)
        self.answered = 0
        self.tests: list[str] = []

    @classmethod
    def checked(cls, spec: str, least: float | None) -> StandIn:
        """The stand-in ``spec`` names, its file loaded and checked now, and its held-out
        agreement with its teacher at least ``least`` (else a usage error, the session ends)."""
        from harness.catalog import CatalogError, entry_for_model
        from harness.providers import fitted_model

        if not spec.startswith("fitted:"):
            raise pytest.UsageError(
                f"--harness-fallback={spec}: a stand-in is a fitted decider, "
                "--harness-fallback=fitted:FILE (harness fit on the model's cassettes or records)"
            )
        try:
            entry = entry_for_model(spec)
            assert entry is not None
            model = fitted_model(entry)
        except CatalogError as error:
            raise pytest.UsageError(f"--harness-fallback: {error}") from None
        if least is not None:
            if not 0 < least <= 1:
                raise pytest.UsageError(
                    f"--harness-fallback-min-agreement {least}: give a share in (0, 1], e.g. 0.9"
                )
            agreement = model.agreement()
            value = None if agreement is None else agreement.get("value")
            if not isinstance(value, float | int):
                raise pytest.UsageError(
                    f"--harness-fallback {spec}: the file holds no held-out agreement with a "
                    "teacher to gate on: fit it with harness fit on the model's cassettes or "
                    "records (distillation), which measures it"
                )
            assert agreement is not None
            if value < least:
                raise pytest.UsageError(
                    f"--harness-fallback {spec}: its held-out agreement with the model it was "
                    f"distilled from is {value:.3f} [{agreement.get('low'):.3f}, "
                    f"{agreement.get('high'):.3f}] on {agreement.get('n')} decisions, below "
                    f"--harness-fallback-min-agreement {least:g}: record more of the model and "
                    "fit it again, or lower the gate"
                )
        return cls(spec, entry)

    async def decide(
        self, request: DecisionRequest, entry: CatalogEntry, *, timeout: float | None = None
    ) -> DecisionResponse:
        """The stand-in's answers to a request the cassette does not hold, marked as such."""

        response = await self.client.decide(request, self.entry, timeout=timeout)
        self.answered += 1
        reading = {
            **(response.reading or {}),
            "stand_in": f"not in the cassette: answered by the stand-in {self.spec}",
        }
        return attrs.evolve(response, reading=reading)

    async def aclose(self) -> None:
        """The stand-in stays open for the session (closed when it ends)."""

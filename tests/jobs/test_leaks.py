"""No permit or token leaks after a storm of mixed faults, timeouts and cancellations."""

from __future__ import annotations

import asyncio
import random

from harness.admission import Admission
from harness.catalog import Catalog
from harness.decision import DecisionResponse
from harness.errors import LLMReadableError
from harness.jobs import DecisionBinding, Dispatcher, JobHandle, JobTimeoutError, Pacing
from harness.testing import FakeSystemOneServer, Fault
from harness.thinker import DecisionCall
from harness.tools import Workflow

from .stack import REQUEST

FAULTS: list[Fault | None] = [
    None,
    None,
    None,
    Fault.unavailable(),
    Fault.rate_limited(0),
    Fault.server_error(),
    Fault.connection_reset(),
    Fault.hang(),
    Fault.not_an_answer(),
    Fault.bad_request("no", shape="detail_list", status=422),
]


async def test_a_storm_of_faults_and_cancellations_leaves_gate_and_bucket_whole() -> None:
    rng = random.Random(2024)
    async with FakeSystemOneServer(service_time=0.002) as server:
        server.faults = lambda number: rng.choice(FAULTS)
        gated = server.entry(id="gated", max_concurrent=4)
        windowed = server.entry(id="windowed", tpm=5_000_000, rpm=100_000)
        catalog = Catalog([gated, windowed], {"decision": "gated"})
        # A frozen clock: the bucket never refills, so its level counts every admitted attempt.
        admission = Admission(clock=lambda: 0.0)
        pacing = Pacing(base=0.001, cap=0.01)
        async with Dispatcher(catalog, admission=admission, pacing=pacing) as dispatcher:
            calls: list[DecisionCall] = []
            handles: list[JobHandle[DecisionResponse]] = []
            for index in range(160):
                call = DecisionCall(Workflow(), REQUEST, upstream_retries=2, timeout=0.4)
                if index % 2:
                    call.pin_model("windowed")
                calls.append(call)
                handles.append(dispatcher.submit(call))

            async def cancel_later(handle: JobHandle[DecisionResponse]) -> None:
                await asyncio.sleep(rng.uniform(0.0, 0.3))
                handle.cancel()

            await asyncio.gather(*(cancel_later(h) for h in rng.sample(handles, 40)))
            outcomes = await asyncio.wait_for(
                asyncio.gather(*(h.result() for h in handles), return_exceptions=True), 30
            )

            gate = dispatcher.admission.gate_for(gated)
            assert (gate.in_use, gate.waiting, gate.available) == (0, 0, gate.capacity)
            bucket = dispatcher.admission.bucket_for(windowed)
            assert bucket.waiting == 0
            price = DecisionBinding(request=REQUEST).price(windowed).total
            attempts = sum(len(c.record) for c in calls if c.pinned == "windowed")
            assert attempts > 0
            assert bucket.level == bucket.capacity - attempts * price
            assert bucket.requests_level == 100_000 - attempts

            server.faults = None
            again = await asyncio.wait_for(
                asyncio.gather(
                    dispatcher.run(DecisionCall(Workflow(), REQUEST)),
                    dispatcher.run(DecisionCall(Workflow(), REQUEST).pin_model("windowed")),
                ),
                5,
            )
            assert all(response.success for response in again)

    answered = [o for o in outcomes if isinstance(o, DecisionResponse)]
    timed_out = [o for o in outcomes if isinstance(o, JobTimeoutError)]
    cancelled = [o for o in outcomes if isinstance(o, asyncio.CancelledError)]
    failed = [
        o
        for o in outcomes
        if isinstance(o, LLMReadableError) and not isinstance(o, JobTimeoutError)
    ]
    assert len(answered) + len(timed_out) + len(cancelled) + len(failed) == len(outcomes)
    # The storm was mixed: some of every outcome.
    assert answered
    assert timed_out
    assert cancelled
    assert failed
    assert all(response.success for response in answered)

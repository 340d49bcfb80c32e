"""A thinker with two decisions an input (echo the note, then finish), for batch tests."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import attrs

from harness.artifacts import Artifact, ListArtifact
from harness.jobs import JobContext
from harness.thinker import DecisionThinker
from harness.tools import DecisionTool, Identifiable, tool_name


@attrs.frozen
class Ticket(Artifact, alias="ticket"):
    text: str


@attrs.frozen
class Echo(Artifact, alias="echo"):
    text: str


@tool_name("echo_ticket")
class EchoTicket(DecisionTool[Ticket, ListArtifact[Echo]]):
    """Echoes a ticket. A ticket saying "die once" kills its process the first time it runs
    (a worker killed mid-task), leaving a marker file named in $HARNESS_TEST_DIE_MARKER."""

    async def execute(self, input: Ticket, context: JobContext) -> ListArtifact[Echo]:
        if input.text.startswith("die once"):
            marker = Path(os.environ["HARNESS_TEST_DIE_MARKER"])
            if not marker.exists():  # noqa: ASYNC240 - a test tool: one tiny file, once
                marker.write_text("died")  # noqa: ASYNC240 - the same
                os.kill(os.getpid(), signal.SIGKILL)
        return ListArtifact.of(Echo, [Echo(input.text)])


@tool_name("echo_tickets")
class EchoTickets(DecisionThinker[Ticket, Echo]):
    """Echoes a ticket: one decision to echo it, one to finish."""

    def __init__(self, parent: Identifiable) -> None:
        super().__init__(
            parent,
            output_type=Echo,
            key_tool=EchoTicket,
            palette=(),
            objective="Echo the ticket",
        )

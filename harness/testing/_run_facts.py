"""What one recorded thinker run holds (:class:`RunReport`, its bytes, a hang) and the readable
forms the invariants' messages use: refs, given artifacts, the user's frames, a turn as text.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json  # the stdlib: json's default separators and escapes, which orjson cannot write
import pathlib
import traceback
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from harness.artifacts import Artifact, ListArtifact, digest_line
from harness.decision import (
    Answer,
    Choice,
    ChoiceAnswer,
    DecisionRequest,
    NoulAnswer,
)
from harness.decision._internal import load_json
from harness.testing._rerun import Rerun
from harness.thinker import (
    DEFAULT_SELECTION_THRESHOLD,
    DecisionThinker,
    DecisionTurn,
    turns_json,
)

__all__ = [
    "Hang",
    "RecordedWorld",
    "RunBytes",
    "RunReport",
    "given_refs",
    "given_with",
    "ref_of",
    "user_frames",
]

RecordedWorld = tuple[tuple[str, Artifact], ...]
"""A run's world as its report holds it: every ``(ref, artifact)`` pair the run registered, in
the order things came to be."""

_FRAMEWORK = (
    pathlib.Path(__file__).resolve().parents[1],  # harness/
    pathlib.Path(asyncio.__file__).resolve().parent,
)


@attrs.frozen
class Hang:
    """Where a run was when the wall-clock limit stopped it."""

    seconds: float
    during: str  # what was running: the policy, a tool on a ref, the thinker
    stack: str  # the frames it was stuck in (the caller's own first)


@attrs.frozen
class RunBytes:
    """What must repeat byte for byte when an example runs again: the wire bodies, the turns
    as JSON, ``OBS_TURNS``, the world's digest lines and the outcome."""

    bodies: tuple[bytes, ...]
    turns: str
    obs_turns: str | None
    world: tuple[str, ...]
    outcome: str

    def to_json(self) -> str:
        """The fingerprint as JSON (bodies in base64), for another interpreter to send back."""
        data = attrs.asdict(self)
        data["bodies"] = [base64.b64encode(body).decode("ascii") for body in self.bodies]
        data["world"] = list(self.world)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> RunBytes:
        """Read a fingerprint written by :meth:`to_json`."""
        data: Any = load_json(text)  # Any: read by key; a malformed file fails as before
        return cls(
            bodies=tuple(base64.b64decode(body) for body in data["bodies"]),
            turns=str(data["turns"]),
            obs_turns=None if data["obs_turns"] is None else str(data["obs_turns"]),
            world=tuple(str(line) for line in data["world"]),
            outcome=str(data["outcome"]),
        )


@attrs.frozen
class RunReport:
    """What one run did, for the invariants and for a person reading a failure.

    ``answers`` are the answers the model's responses carried, request by request (what the
    thinker read). ``runaway`` says the checker refused a decision past ``max_turns + 1`` and
    stopped the run there (the refused request is the last of ``requests``); ``hang`` says the
    run outlived its wall-clock limit and where it was.
    """

    thinker: DecisionThinker[Any, Any]  # any thinker: the checker reads its public attributes
    input: Artifact
    requests: tuple[DecisionRequest, ...]
    answers: tuple[Mapping[str, Answer], ...]
    bodies: tuple[bytes, ...]
    turns: tuple[DecisionTurn, ...]
    obs_turns: str | None
    world: RecordedWorld
    answer: ListArtifact[Artifact] | None
    error: Exception | None
    runaway: bool = False
    hang: Hang | None = None
    reruns: tuple[Rerun, ...] = ()  # each tool move run again on its recorded artifact
    # (turn, ref): a move whose recorded outcome is not what its tool makes of the recorded
    # artifact, but is what it makes of another artifact of the world (the move ran there)
    moved: tuple[tuple[int, str], ...] = ()
    entry_threshold: float | None = None  # the run's entry's fitted selection threshold

    @property
    def threshold(self) -> float:
        """The selection threshold the run must answer at, derived as the runtime derives it
        but from the inputs, never from the thinker's own account: the constructor's
        ``selection_threshold`` argument, else the run's entry's fitted threshold, else
        :data:`~harness.thinker.DEFAULT_SELECTION_THRESHOLD`."""
        given = vars(self.thinker).get("_given_threshold")  # the argument, as the base stored it
        if isinstance(given, int | float) and not isinstance(given, bool):
            return float(given)
        if self.entry_threshold is not None:
            return self.entry_threshold
        return DEFAULT_SELECTION_THRESHOLD

    max_options: int | None = None  # the fake entry's max_options for this run

    @property
    def world_before_answer(self) -> RecordedWorld:
        """The world as the run's last decision saw it: everything before the answer list was
        adopted (the whole world when there is no registered answer). Legal moves and
        candidates are counted over this, never over the answer itself."""
        for index, (_, artifact) in enumerate(self.world):
            if artifact is self.answer:
                return self.world[:index]
        return self.world

    @property
    def stopped(self) -> bool:
        """Whether the checker stopped the run (a runaway or a hang) before it ended itself."""
        return self.runaway or self.hang is not None

    def describe_ref(self, ref: str) -> str:
        """``ref``, marked ``(the input)`` or ``(an item of the input)`` when it is one."""
        given = given_refs(self.world, self.input)
        if self.world and ref == self.world[0][0]:
            return f"{ref} (the input)"
        if ref in given:
            return f"{ref} (an item of the input)"
        return ref

    def describe_refs(self, refs: Iterable[str]) -> str:
        """A list of refs as text, each marked as :meth:`describe_ref` does."""
        return "[" + ", ".join(self.describe_ref(ref) for ref in refs) + "]"

    def outcome(self) -> str:
        """How the run ended, in words."""
        if self.hang is not None:
            return f"stopped after {self.hang.seconds:g} s: {self.hang.during} did not return"
        if self.runaway:
            return (
                f"stopped by the checker at decision {len(self.requests)}, past max_turns + 1 "
                f"= {self.thinker.max_turns + 1}"
            )
        if self.error is not None:
            return f"failed with {type(self.error).__qualname__}: {self.error}"
        if self.answer is not None:
            refs = [ref_of(self.world, item) for item in self.answer.iterands]
            return f"answered [{', '.join(refs)}]"
        return "did not finish"

    def fingerprint(self) -> RunBytes:
        """The bytes that must repeat when the same example runs again."""
        formatters = self.thinker.formatters
        return RunBytes(
            bodies=self.bodies,
            turns=turns_json(self.turns),
            obs_turns=self.obs_turns,
            world=tuple(digest_line(ref, a, formatters) for ref, a in self.world),
            outcome=self.outcome(),
        )

    def digest(self) -> str:
        """The sha256 of the wire bodies and ``OBS_TURNS``: equal for byte-identical runs."""
        hasher = hashlib.sha256()
        for body in self.bodies:
            hasher.update(len(body).to_bytes(8, "big") + body)
        hasher.update((self.obs_turns or "").encode("utf-8"))
        return hasher.hexdigest()

    def render(self) -> str:
        """The run as text: outcome, world, each request with its answers, each turn."""
        name = type(self.thinker).__qualname__
        lines = [
            f"run of {name} (max_turns {self.thinker.max_turns}, threshold "
            f"{self.threshold}): {self.outcome()}",
            "world:",
        ]
        for ref, artifact in self.world:
            shown = self.describe_ref(ref)
            marker = shown[len(ref) :]
            lines.append(f"  {ref}: {type(artifact).__qualname__} {_short(artifact)}{marker}")
        for number, request in enumerate(self.requests, 1):
            given = self.answers[number - 1] if number <= len(self.answers) else None
            refused = " (refused by the checker: past max_turns + 1)" if given is None else ""
            lines.append(f"request {number}:{refused if self.runaway else ''}")
            for qid, question in request.questions.items():
                answered = _answered(given.get(qid)) if given is not None else "(not answered)"
                lines.append(f"  {qid}: {_asked(question)} -> {answered}")
        for turn in self.turns:
            lines.append(f"turn {turn.turn}: {_turn_text(turn)}")
        if self.hang is not None and self.hang.stack:
            lines.append(f"where it hung:\n{self.hang.stack}")
        return "\n".join(lines)


def ref_of(world: Sequence[tuple[str, Artifact]], artifact: Artifact) -> str:
    """The ref of ``artifact`` (by identity) in ``world``, else ``"<unregistered ...>"``."""
    return next((ref for ref, a in world if a is artifact), f"<unregistered {artifact!r}>")


def given_with(input: Artifact) -> frozenset[int]:
    """The identities of ``input`` and the iterands it brings (recursively): the input's are
    never candidates, since only what a tool produced can be an answer."""
    given: set[int] = set()
    pending = [input]
    while pending:
        artifact = pending.pop()
        given.add(id(artifact))
        if isinstance(artifact, ListArtifact):
            pending.extend(artifact.iterands)
    return frozenset(given)


def given_refs(world: Sequence[tuple[str, Artifact]], input: Artifact) -> frozenset[str]:
    """The refs of the input and the iterands it brought (recursively)."""
    given = given_with(input)
    return frozenset(ref for ref, a in world if id(a) in given)


def user_frames(frames: Sequence[traceback.FrameSummary], *, keep: int = 3) -> str:
    """The frames outside harness and asyncio (a user's tool, policy or thinker code) as
    traceback text; the last ``keep`` frames when every frame is the framework's."""
    own = [frame for frame in frames if not _is_framework(frame.filename)]
    chosen = own or list(frames)[-keep:]
    return "".join(traceback.format_list(chosen)).rstrip("\n")


def _is_framework(filename: str) -> bool:
    path = pathlib.Path(filename).resolve()
    return any(path.is_relative_to(root) for root in _FRAMEWORK)


def _short(artifact: Artifact) -> str:
    text = repr(artifact)
    return text if len(text) <= 100 else text[:97] + "..."


def _asked(question: object) -> str:
    if isinstance(question, Choice):
        return f"choice [{', '.join(question.options)}]"
    return type(question).__name__.lower()


def _answered(answer: Answer | None) -> str:
    if isinstance(answer, ChoiceAnswer):
        return f"{answer.choice} ({answer.probabilities[answer.choice]:g})"
    if isinstance(answer, NoulAnswer):
        return f"{answer.probability:g}"
    return "(no answer)" if answer is None else repr(answer)


def _turn_text(turn: DecisionTurn) -> str:
    if turn.artifact is None:
        selection = ", ".join(f"{ref} {p:g}" for ref, p in turn.selection.items())
        asked = "" if turn.next is not None else " (selection only)"
        return f"{turn.tool}{asked}, selection {{{selection}}}"
    outcome = f"failed: {turn.failure}" if turn.failure is not None else f"-> {turn.result}"
    return f"{turn.tool} on {turn.artifact} {outcome}"

"""harness: a statically typed framework for agents driven by decision models.

Code lists the legal moves (a tool applied to an artifact of the type it takes); the model only
ranks them, one round trip per turn. ``harness.run_sync(Triage, note, model="embedded")`` (or
``await harness.run(Triage, note, ...)``) runs a thinker in one call. The public face is here;
``harness.testing`` holds the test doubles and hypothesis strategies, ``harness.catalog`` the
catalog and the environment's configuration; docs/architecture.md maps every package.

Names load on first use (PEP 562), so ``import harness`` stays cheap for the mypy plugin, which
shares the palette rules; type checkers read the explicit imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Answer": "harness.decision",
    "Artifact": "harness.artifacts",
    "ArtifactRegistry": "harness.artifacts",
    "Budget": "harness.scope",
    "BudgetExceededError": "harness.errors",
    "Catalog": "harness.catalog",
    "CatalogEntry": "harness.catalog",
    "Choice": "harness.decision",
    "ChoiceAnswer": "harness.decision",
    "DecisionCall": "harness.thinker",
    "DecisionRequest": "harness.decision",
    "DecisionResponse": "harness.decision",
    "DecisionThinker": "harness.thinker",
    "DecisionTool": "harness.tools",
    "DecisionTurn": "harness.thinker",
    "Dispatcher": "harness.jobs",
    "ExternalServiceError": "harness.errors",
    "GuardrailError": "harness.errors",
    "HarnessError": "harness.errors",
    "Identifiable": "harness.scope",
    "InvalidInputError": "harness.errors",
    "Job": "harness.jobs",
    "JobContext": "harness.jobs",
    "JobEvent": "harness.jobs",
    "JobTimeoutError": "harness.errors",
    "LLMReadableError": "harness.errors",
    "LinkArtifact": "harness.artifacts",
    "ListArtifact": "harness.artifacts",
    "NotAnAnswerError": "harness.errors",
    "NotFoundError": "harness.errors",
    "Noul": "harness.decision",
    "NoulAnswer": "harness.decision",
    "OBS_TURNS": "harness.thinker",
    "Pacing": "harness.jobs",
    "Question": "harness.decision",
    "RefusedAnswer": "harness.decision",
    "RunFailedError": "harness.runs",
    "RunResult": "harness.runs",
    "RetryPolicy": "harness.jobs",
    "Score": "harness.decision",
    "ScoreAnswer": "harness.decision",
    "SyncRunInLoopError": "harness.errors",
    "TextFormatterRegistry": "harness.artifacts",
    "ThinkerRun": "harness.thinker",
    "Usage": "harness.runs",
    "Workflow": "harness.scope",
    "load_catalog": "harness.catalog",
    "run": "harness.runs",
    "run_sync": "harness.runs",
    "override": "harness.replay",
    "Approval": "harness.runs",
    "PausedResult": "harness.runs",
    "branch": "harness.runs",
    "idempotency_key": "harness.runs",
    "requires_approval": "harness.runs",
    "resume": "harness.runs",
    "resume_sync": "harness.runs",
    "tool_description": "harness.tools",
    "tool_name": "harness.tools",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from harness.artifacts import Artifact as Artifact
    from harness.artifacts import ArtifactRegistry as ArtifactRegistry
    from harness.artifacts import LinkArtifact as LinkArtifact
    from harness.artifacts import ListArtifact as ListArtifact
    from harness.artifacts import TextFormatterRegistry as TextFormatterRegistry
    from harness.catalog import Catalog as Catalog
    from harness.catalog import CatalogEntry as CatalogEntry
    from harness.catalog import load_catalog as load_catalog
    from harness.decision import Answer as Answer
    from harness.decision import Choice as Choice
    from harness.decision import ChoiceAnswer as ChoiceAnswer
    from harness.decision import DecisionRequest as DecisionRequest
    from harness.decision import DecisionResponse as DecisionResponse
    from harness.decision import Noul as Noul
    from harness.decision import NoulAnswer as NoulAnswer
    from harness.decision import Question as Question
    from harness.decision import RefusedAnswer as RefusedAnswer
    from harness.decision import Score as Score
    from harness.decision import ScoreAnswer as ScoreAnswer
    from harness.errors import BudgetExceededError as BudgetExceededError
    from harness.errors import ExternalServiceError as ExternalServiceError
    from harness.errors import GuardrailError as GuardrailError
    from harness.errors import HarnessError as HarnessError
    from harness.errors import InvalidInputError as InvalidInputError
    from harness.errors import JobTimeoutError as JobTimeoutError
    from harness.errors import LLMReadableError as LLMReadableError
    from harness.errors import NotAnAnswerError as NotAnAnswerError
    from harness.errors import NotFoundError as NotFoundError
    from harness.errors import SyncRunInLoopError as SyncRunInLoopError
    from harness.jobs import Dispatcher as Dispatcher
    from harness.jobs import Job as Job
    from harness.jobs import JobContext as JobContext
    from harness.jobs import JobEvent as JobEvent
    from harness.jobs import Pacing as Pacing
    from harness.jobs import RetryPolicy as RetryPolicy
    from harness.replay import override as override
    from harness.runs import Approval as Approval
    from harness.runs import PausedResult as PausedResult
    from harness.runs import RunFailedError as RunFailedError
    from harness.runs import RunResult as RunResult
    from harness.runs import Usage as Usage
    from harness.runs import branch as branch
    from harness.runs import idempotency_key as idempotency_key
    from harness.runs import requires_approval as requires_approval
    from harness.runs import resume as resume
    from harness.runs import resume_sync as resume_sync
    from harness.runs import run as run
    from harness.runs import run_sync as run_sync
    from harness.scope import Budget as Budget
    from harness.scope import Identifiable as Identifiable
    from harness.scope import Workflow as Workflow
    from harness.thinker import OBS_TURNS as OBS_TURNS
    from harness.thinker import DecisionCall as DecisionCall
    from harness.thinker import DecisionThinker as DecisionThinker
    from harness.thinker import DecisionTurn as DecisionTurn
    from harness.thinker import ThinkerRun as ThinkerRun
    from harness.tools import DecisionTool as DecisionTool
    from harness.tools import tool_description as tool_description
    from harness.tools import tool_name as tool_name


if not TYPE_CHECKING:  # type checkers read the imports above; unknown names stay errors

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'harness' has no attribute {name!r}")
        # One plain import per package (no importlib), so the layer test reads what loads.
        if module == "harness.artifacts":
            from harness import artifacts as found
        elif module == "harness.catalog":
            from harness import catalog as found
        elif module == "harness.decision":
            from harness import decision as found
        elif module == "harness.errors":
            from harness import errors as found
        elif module == "harness.jobs":
            from harness import jobs as found
        elif module == "harness.replay":
            from harness import replay as found
        elif module == "harness.runs":
            from harness import runs as found
        elif module == "harness.scope":
            from harness import scope as found
        elif module == "harness.thinker":
            from harness import thinker as found
        elif module == "harness.tools":
            from harness import tools as found
        else:  # every module of _EXPORTS has its branch above
            raise AssertionError(f"harness.{name}: no import for {module}")
        value = getattr(found, name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_EXPORTS})

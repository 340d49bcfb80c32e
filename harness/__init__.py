"""harness: a statically typed framework for agents driven by decision models.

Code lists the legal moves (a tool applied to an artifact of the type it takes); the model only
ranks them, one round trip per turn. The public face is here; ``harness.testing`` holds the test
doubles and hypothesis strategies, ``harness.models`` the catalog and admission.
"""

from harness.artifacts import Artifact as Artifact
from harness.artifacts import ArtifactRegistry as ArtifactRegistry
from harness.artifacts import LinkArtifact as LinkArtifact
from harness.artifacts import ListArtifact as ListArtifact
from harness.artifacts import TextFormatterRegistry as TextFormatterRegistry
from harness.deciding import OBS_TURNS as OBS_TURNS
from harness.deciding import DecisionCall as DecisionCall
from harness.deciding import DecisionThinker as DecisionThinker
from harness.deciding import DecisionTurn as DecisionTurn
from harness.deciding import ThinkerRun as ThinkerRun
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
from harness.errors import ExternalServiceError as ExternalServiceError
from harness.errors import GuardrailError as GuardrailError
from harness.errors import InvalidInputError as InvalidInputError
from harness.errors import LLMReadableError as LLMReadableError
from harness.errors import NotAnAnswerError as NotAnAnswerError
from harness.errors import NotFoundError as NotFoundError
from harness.jobs import Dispatcher as Dispatcher
from harness.jobs import Job as Job
from harness.jobs import JobContext as JobContext
from harness.jobs import JobEvent as JobEvent
from harness.jobs import Pacing as Pacing
from harness.models import Catalog as Catalog
from harness.models import CatalogEntry as CatalogEntry
from harness.models import load_catalog as load_catalog
from harness.tools import DecisionTool as DecisionTool
from harness.tools import Identifiable as Identifiable
from harness.tools import Workflow as Workflow
from harness.tools import tool_description as tool_description
from harness.tools import tool_name as tool_name

__version__ = "0.1.0"

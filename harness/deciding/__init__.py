"""Deciding: the decision call and the decision thinker."""

from harness.deciding._call import DECISION_TIMEOUT as DECISION_TIMEOUT
from harness.deciding._call import DecisionCall as DecisionCall
from harness.deciding._call import MissingRequestError as MissingRequestError
from harness.deciding._scheme import OBS_QUESTION_SCHEME as OBS_QUESTION_SCHEME
from harness.deciding._scheme import QUESTION_SCHEME_VERSIONS as QUESTION_SCHEME_VERSIONS
from harness.deciding._scheme import QuestionScheme as QuestionScheme
from harness.deciding._thinker import DEFAULT_MAX_TURNS as DEFAULT_MAX_TURNS
from harness.deciding._thinker import DEFAULT_SELECTION_THRESHOLD as DEFAULT_SELECTION_THRESHOLD
from harness.deciding._thinker import DecisionThinker as DecisionThinker
from harness.deciding._tool_run import ThinkerRun as ThinkerRun
from harness.deciding._tool_run import ToolRun as ToolRun
from harness.deciding._turn import FINISH as FINISH
from harness.deciding._turn import OBS_TURNS as OBS_TURNS
from harness.deciding._turn import DecisionTurn as DecisionTurn
from harness.deciding._turn import parse_turns as parse_turns
from harness.deciding._turn import turns_json as turns_json

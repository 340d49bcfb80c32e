"""Deciding: the decision call and the decision thinker."""

from harness.thinker._call import DECISION_TIMEOUT as DECISION_TIMEOUT
from harness.thinker._call import DecisionCall as DecisionCall
from harness.thinker._call import MissingRequestError as MissingRequestError
from harness.thinker._scheme import OBS_QUESTION_SCHEME as OBS_QUESTION_SCHEME
from harness.thinker._scheme import QUESTION_SCHEME_VERSIONS as QUESTION_SCHEME_VERSIONS
from harness.thinker._scheme import QuestionScheme as QuestionScheme
from harness.thinker._thinker import DEFAULT_MAX_TURNS as DEFAULT_MAX_TURNS
from harness.thinker._thinker import DEFAULT_SELECTION_THRESHOLD as DEFAULT_SELECTION_THRESHOLD
from harness.thinker._thinker import DecisionThinker as DecisionThinker
from harness.thinker._tool_run import ThinkerRun as ThinkerRun
from harness.thinker._tool_run import ToolRun as ToolRun
from harness.thinker._turn import FINISH as FINISH
from harness.thinker._turn import OBS_TURNS as OBS_TURNS
from harness.thinker._turn import DecisionTurn as DecisionTurn
from harness.thinker._turn import parse_turns as parse_turns
from harness.thinker._turn import turns_json as turns_json

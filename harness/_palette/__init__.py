"""The palette rules (pure, shared with the mypy plugin) and the runtime validator."""

from harness._palette._rules import CODES as CODES
from harness._palette._rules import Open as Open
from harness._palette._rules import ToolFacts as ToolFacts
from harness._palette._rules import TypeNode as TypeNode
from harness._palette._rules import Verdict as Verdict
from harness._palette._rules import palette_verdicts as palette_verdicts
from harness._palette._rules import tool_verdicts as tool_verdicts
from harness._palette._runtime import PaletteError as PaletteError
from harness._palette._runtime import PaletteReport as PaletteReport
from harness._palette._runtime import RuntimeType as RuntimeType
from harness._palette._runtime import palette_report as palette_report
from harness._palette._runtime import runtime_facts as runtime_facts
from harness._palette._runtime import thinker_input_of as thinker_input_of
from harness._palette._runtime import validate_palette as validate_palette

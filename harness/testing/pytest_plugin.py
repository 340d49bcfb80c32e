"""The pytest plugin's types, for annotating its fixtures: ``harness_cassette`` gives a
:class:`CassetteRun`, ``harness_model`` a :class:`ModelSwitch`.

The plugin itself is :mod:`harness.pytest_plugin` (the ``pytest11`` entry point ``harness``),
kept outside this package so loading it in every pytest run costs nothing until a test uses it;
this module holds no hooks and no fixtures, so naming it in ``pytest_plugins`` adds nothing.
"""

from harness.pytest_plugin import RECORD_MODES as RECORD_MODES
from harness.pytest_plugin import CassetteRun as CassetteRun
from harness.pytest_plugin import ModelSwitch as ModelSwitch
from harness.pytest_plugin import RecordMode as RecordMode

__all__ = ["RECORD_MODES", "CassetteRun", "ModelSwitch", "RecordMode"]

"""The harness mypy plugin: a palette is legal because it type-checked.

Enable it with ``plugins = ["harness.mypy"]`` (or ``["mypy_plugin"]``) in the mypy config.
Supported mypy: ``>=2.4,<2.5`` (the plugin API promises no stability). See ``docs/plugin.md``.
"""

from mypy_plugin._plugin import PLUGIN_VERSION as PLUGIN_VERSION
from mypy_plugin._plugin import SOURCE_DIGEST as SOURCE_DIGEST
from mypy_plugin._plugin import HarnessPlugin as HarnessPlugin
from mypy_plugin._plugin import plugin as plugin

__all__ = ["PLUGIN_VERSION", "SOURCE_DIGEST", "HarnessPlugin", "plugin"]

"""The mypy plugin's entry point, under the package users already depend on.

Enable it with ``plugins = ["harness.mypy"]`` in the mypy configuration (needs the ``mypy``
extra: ``pip install "harness[mypy]"``). The plugin itself lives in ``mypy_plugin``.
"""

from mypy_plugin import PLUGIN_VERSION as PLUGIN_VERSION
from mypy_plugin import plugin as plugin

__all__ = ["PLUGIN_VERSION", "plugin"]

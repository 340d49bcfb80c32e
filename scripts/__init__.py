"""Maintainer scripts, run from a checkout (``python -m scripts.<name>``); not in the package."""

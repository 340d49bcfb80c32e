"""Interop tests against third-party System One servers installed from PyPI."""

"""What the packages above use of admission's machinery and is not part of its public face: a
Redis URL as messages show it (``harness batch`` checks ``--admission`` with it). The one module
of this package that other harness packages may import besides its public face."""

from __future__ import annotations

__all__ = ["shown_url"]


def shown_url(url: str) -> str:
    """``url`` without its password (for messages)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user + ':***@' if user else '***@'}{host}"

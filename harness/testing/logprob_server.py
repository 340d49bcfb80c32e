"""``python -m harness.testing.logprob_server``: the loopback OpenAI-compatible test server.

See :class:`harness.testing.LogprobServer` (logprobs from :class:`harness.testing.BigramModel`).
"""

from __future__ import annotations

import sys

from harness.testing._logprob_server import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())

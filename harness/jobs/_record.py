"""The record of a job: moved to :mod:`harness.decision` (below llm, which writes it, so llm
never imports jobs); this module keeps the old import path working."""

from harness.decision._record import JobRecord as JobRecord
from harness.decision._record import ModelCall as ModelCall

__all__ = ["JobRecord", "ModelCall"]

"""Batches: a thinker over every input of a JSONL file, resumable, in one process or on Ray.

``run_batch(BatchSpec("mypkg.triage:Triage"), Path("inputs.jsonl"), Path("results.jsonl"))``
(or ``harness batch``) runs each line's input and writes one result line per input: its answer,
usage and status. Started again with the same arguments it runs only what has no result yet.
"""

from harness.batch._batch import BatchSummary as BatchSummary
from harness.batch._batch import run_batch as run_batch
from harness.batch._batch import run_batch_async as run_batch_async
from harness.batch._errors import BatchError as BatchError
from harness.batch._worker import BatchSpec as BatchSpec
from harness.batch._worker import BatchWorker as BatchWorker
from harness.batch._worker import with_contexts as with_contexts

__all__ = [
    "BatchError",
    "BatchSpec",
    "BatchSummary",
    "BatchWorker",
    "run_batch",
    "run_batch_async",
    "with_contexts",
]

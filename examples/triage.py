"""A small thinker to read and run: notes split on ';', each part judged (the guide's example,
shipped as :mod:`harness.demo.triage`; its classes are re-exported here).

Run it on the embedded model (no configuration)::

    python examples/triage.py "alpha is due; beta can wait; gamma shipped"

or through the command line: ``harness run harness.demo.triage:Triage --input '{"text": "..."}'``.
"""

from __future__ import annotations

import sys

from harness import run_sync
from harness.demo.triage import JudgeNote as JudgeNote
from harness.demo.triage import Note as Note
from harness.demo.triage import SplitNote as SplitNote
from harness.demo.triage import Triage as Triage
from harness.demo.triage import TriageVerdict as TriageVerdict


def main(text: str) -> None:
    """Run the thinker on the configured default model (the embedded one unless you configured
    another) and print each turn, the answer and what it used."""
    result = run_sync(Triage, Note(text))
    for turn in result.turns:
        print(turn)
    for verdict in result.items:
        print(f"kept {result.ref(verdict)}: {verdict.note} (urgent: {verdict.urgent})")
    print(f"used: {result.usage}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "alpha is due today; beta can wait")

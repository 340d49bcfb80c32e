"""``python -m harness``: the ``harness`` command."""

from harness.cli import main

raise SystemExit(main())

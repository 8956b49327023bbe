"""Checkpoint Inspector from a checkout: `python main.py COMMAND ...` runs the CLI, `python main.py [PATH]`
starts the window. The same entry as the installed `checkpoint-inspector` command
(checkpoint_inspector/launcher.py); this file only lets a checkout run without installing."""
from __future__ import annotations

import sys

from checkpoint_inspector.launcher import STARTED, main  # noqa: F401  (STARTED: the clock starts at import)

if __name__ == "__main__":
    sys.exit(main())

"""The scripting face: `checkpoint-inspector COMMAND ...`, `./run-app COMMAND ...` or `main.py COMMAND ...`
(the contract is docs/cli.md). It sits in core because it is Qt-free and ships with the engine; it is the
top layer, and nothing in core imports it."""
from __future__ import annotations

import os
import sys

# Set by ./run-app to the command as it was typed, which Python's argv[0] (main.py) cannot tell.
PROGRAM_VARIABLE = "CHECKPOINT_INSPECTOR_PROGRAM"

# The commands' names, here so that main.py tells a command from a path without importing the commands.
COMMANDS = ("list", "steps", "show", "trajectory", "export-csv", "export", "remap", "convert", "tensorboard", "diff",
            "check", "scalars", "overview", "diagnose", "graph")


def program_name() -> str:
    """The command the person typed, for messages that tell them what to type next: `./run-app` from a
    checkout's launcher (it says so in CHECKPOINT_INSPECTOR_PROGRAM), `checkpoint-inspector` when
    installed, `main.py` when started as a script (whatever argv[0] names); `checkpoint-inspector` when
    the CLI runs inside another program that has no script of its own."""
    given = os.environ.get(PROGRAM_VARIABLE)
    if given:
        return given
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if script in ("", "-c", "__main__.py"):
        return "checkpoint-inspector"
    return script

"""The program's entry: `checkpoint-inspector COMMAND ...` (and `main.py COMMAND ...` in a checkout) runs the
command-line interface (core only, no Qt); `checkpoint-inspector [PATH]` starts the window.

Arguments are parsed before anything heavy is imported. TensorFlow is never imported here. Installed
without the `[gui]` extra, a start of the window says in one line which extra gives it (exit 2).
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time

STARTED = time.perf_counter()  # the GUI's --smoke-test reports the time from here

# numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads spin for about a tenth
# of a second waiting for work: at every start that took the second core from the HDF5 worker starting
# beside us (a Keras run's trajectory waited 60 ms longer for it). Nothing here wants BLAS threads: the one
# LAPACK user, the spectral pieces, runs one BLAS thread per piece on the executor's threads anyway
# (core.analysis.blas_threads). Set before anything imports numpy; a user's own setting is kept. The
# library (`import checkpoint_inspector`) leaves a notebook's setting alone: only the program sets it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Said to an installed copy and to a clone alike: a clone installs with pip from its own folder, or
# starts with ./run-app, which sets up .venv/ with everything.
GUI_EXTRA_MISSING = ("checkpoint-inspector: the window needs the [gui] extra (PySide6, pyqtgraph): "
                     "pip install 'checkpoint-inspector[gui]' (in a clone of the repository: pip install '.[gui]', "
                     "or start the window with ./run-app)")


def main(argv: list[str] | None = None) -> int:
    """Run a CLI command when the first argument names one (or asks for help), else start the window."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from .core.cli import COMMANDS  # the names only: a GUI start imports no command

    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        from .core.cli.entry import run

        return run(argv)
    return main_window(argv)


def main_window(argv: list[str] | None = None) -> int:
    """Start the window on the paths in `argv` (the bundled sample run without one): the desktop entry's
    command. Without PySide6 or pyqtgraph installed, one line on stderr and exit status 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(importlib.util.find_spec(name) is None for name in ("PySide6", "pyqtgraph")):
        print(GUI_EXTRA_MISSING, file=sys.stderr)
        return 2
    from .core.cli import program_name
    from .gui.app import run_gui

    return run_gui(argv, started=STARTED, program=program_name())

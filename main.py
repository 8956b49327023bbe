"""Checkpoint Inspector's entry point.

Arguments are parsed before anything heavy is imported: `main.py COMMAND ...` runs the command-line
interface (core only, no Qt), `main.py [PATH]` starts the GUI. TensorFlow is never imported here.
"""
from __future__ import annotations

import os
import sys
import time

STARTED = time.perf_counter()  # the GUI's --smoke-test reports the time from here

# numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads spin for about a tenth
# of a second waiting for work: at every start that took the second core from the HDF5 worker starting
# beside us (a Keras run's trajectory waited 60 ms longer for it). Nothing here wants BLAS threads: the one
# LAPACK user, the spectral pieces, runs one BLAS thread per piece on the executor's threads anyway
# (core.analysis.blas_threads). Set before anything imports numpy; a user's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from core.cli import COMMANDS  # the names only: a GUI start imports no command

    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        from core.cli.entry import run

        return run(argv)
    from gui.app import run_gui

    return run_gui(argv, started=STARTED)


if __name__ == "__main__":
    sys.exit(main())

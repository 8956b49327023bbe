"""Starting the GUI: the QApplication, the error hook, the main window, and the first path to open
(the one given on the command line, else the bundled sample run)."""
from __future__ import annotations

import argparse
import os
import sys


def parse_gui_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="main.py", description="Checkpoint Inspector (GUI). "
                                     "Commands: list, steps, show (see `main.py list --help`).")
    parser.add_argument("path", nargs="?", help="run folder, checkpoint prefix or file, or SavedModel")
    return parser.parse_args(argv)


def run_gui(argv: list[str]) -> int:
    args = parse_gui_args(argv)
    from PySide6.QtWidgets import QApplication

    from . import errors
    from .main_window import SAMPLE_RUN, MainWindow

    from pyqtgraph.util.garbage_collector import GarbageCollector

    app = QApplication.instance() or QApplication(sys.argv[:1])
    # Collect cycles on a timer in the GUI thread only: a collection that happens to run in a worker
    # thread would destroy Qt objects there and crash.
    collector = GarbageCollector(interval=1.0)  # noqa: F841  (kept alive until exec() returns)
    app.setApplicationName("Checkpoint Inspector")
    app.setOrganizationName("CheckpointInspector")
    window = MainWindow()
    errors.install_excepthook(lambda: window)
    window.show()
    window.open_path(os.path.abspath(args.path) if args.path else SAMPLE_RUN)
    return app.exec()

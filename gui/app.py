"""Starting the GUI: the QApplication, the error hook, the main window, and the first path to open
(the one given on the command line, else the bundled sample run).

`--smoke-test` opens the path (or the sample run), checks that variables were listed, prints one line
with the time from process start, and exits 0 (1 on failure): a packaged build and the GUI benchmark
use it without a display (QT_QPA_PLATFORM=offscreen)."""
from __future__ import annotations

import argparse
import os
import sys
import time


def parse_gui_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="main.py", description="Checkpoint Inspector (GUI). "
                                     "Commands: list, steps, show (see `main.py list --help`).")
    parser.add_argument("path", nargs="?", help="run folder, checkpoint prefix or file, or SavedModel")
    parser.add_argument("--smoke-test", action="store_true",
                        help="open, check that variables load, print the time taken, exit")
    return parser.parse_args(argv)


def run_gui(argv: list[str], started: float | None = None) -> int:
    args = parse_gui_args(argv)
    from PySide6.QtWidgets import QApplication
    from pyqtgraph.util.garbage_collector import GarbageCollector

    from . import errors
    from .main_window import SAMPLE_RUN, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Checkpoint Inspector")
    app.setOrganizationName("CheckpointInspector")
    # Collect cycles on a timer in the GUI thread only: a collection that happens to run in a worker
    # thread would destroy Qt objects there and crash.
    collector = GarbageCollector(interval=1.0)  # noqa: F841  (kept alive until exec() returns)
    window = MainWindow()
    errors.install_excepthook(lambda: window)
    if args.smoke_test:
        _arm_smoke_test(app, window, started, errors)
    window.show()
    window.open_path(os.path.abspath(args.path) if args.path else SAMPLE_RUN)
    return app.exec()


def _arm_smoke_test(app, window, started: float | None, errors) -> None:
    """Quit with status 0 once the variable table is filled, 1 if opening failed."""
    errors.show_error = lambda parent, title, message, details="": None  # no modal dialog to block on

    def loaded(loaded_checkpoint):
        app.processEvents()  # let the views lay out the new rows before we call it shown
        shown = window.browser.model.rowCount()
        elapsed = time.perf_counter() - started if started is not None else float("nan")
        tensorflow = "yes" if "tensorflow" in sys.modules else "no"
        print(f"smoke test: {len(loaded_checkpoint.variables)} variables ({shown} top-level rows shown) "
              f"from {loaded_checkpoint.checkpoint.prefix} in {elapsed:.3f} s from process start; "
              f"tensorflow imported: {tensorflow}", flush=True)
        app.exit(0 if loaded_checkpoint.variables and shown else 1)

    def failed(message):
        print(f"smoke test failed: {message}", file=sys.stderr, flush=True)
        app.exit(1)

    window.loaded.connect(loaded)
    window.load_failed.connect(failed)


"""Starting the GUI: the single-instance hand-over, the QApplication, the error hook, the windows, and the
first paths to open (the ones given on the command line, else the bundled sample run).

A start with paths while the app already runs (for this user and display) hands them to the running
app, which opens a window for each, and exits 0 at once: see gui/base/single_instance.py. `--new-instance`
skips that. Paths arriving later (from such a start, or from macOS Finder as QFileOpenEvent) open in
new windows of this process; `Windows` keeps them alive.

`--smoke-test` opens the path (or the sample run), checks that variables were listed, prints one line
with the time from process start, and exits 0 (1 on failure): a packaged build and the GUI benchmark
use it without a display (QT_QPA_PLATFORM=offscreen). It never talks to a running app nor listens."""
from __future__ import annotations

import argparse
import os
import sys
import time

from checkpoint_inspector.core.storage.location import parse_location

from .base.paths import APP_ID, ICON, SAMPLE_RUN

NEW_WINDOW_OFFSET = 32  # pixels a new window sits right of and below the active one, so both show
MACOS_OPEN_EVENT_GRACE_MS = 300  # how long a macOS start waits for Finder's "open documents" event


def parse_gui_args(argv: list[str], program: str = "checkpoint-inspector") -> argparse.Namespace:
    """The window's arguments; `program`: the command typed (the launcher knows it), for its messages."""
    parser = argparse.ArgumentParser(prog=program, description="Checkpoint Inspector (GUI). "
                                     f"Commands: list, steps, show (see `{program} list --help`).")
    # Several paths: a file manager passes every selected file (the desktop entry's %F); one window each.
    parser.add_argument("paths", nargs="*", metavar="path",
                        help="run folder, checkpoint prefix or file, or SavedModel")
    parser.add_argument("--smoke-test", action="store_true",
                        help="open, check that variables load, print the time taken, exit")
    parser.add_argument("--new-instance", action="store_true",
                        help="start a separate app even if one is running (by default the paths are "
                             "handed to the running app)")
    return parser.parse_args(argv)


def run_gui(argv: list[str], started: float | None = None, program: str = "checkpoint-inspector") -> int:
    args = parse_gui_args(argv, program)
    from .base.system_libraries import missing_line, missing_packages, x11_window_expected

    # Qt aborts with a message naming one library when its X11 plugin cannot load: name them all first.
    packages = missing_packages() if x11_window_expected() else []
    if packages:
        print(missing_line(packages), file=sys.stderr)
        return 2
    paths = [parse_location(p) for p in args.paths]  # URLs stay URLs; local paths are made absolute
    single_instance = not (args.smoke_test or args.new_instance)
    if single_instance:
        from .base.single_instance import send_paths

        # Before QApplication and the window modules are imported: a hand-over stays a short process.
        if send_paths(paths):
            return 0
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from .base import errors
    from .base.fonts import register_bundled_fonts
    from .base.garbage_collection import GarbageCollection

    app = QApplication.instance() or _application_class()(sys.argv[:1])
    app.setApplicationName("Checkpoint Inspector")
    app.setOrganizationName("CheckpointInspector")
    app.setDesktopFileName(APP_ID)  # Wayland and docks match windows to the installed desktop entry
    if os.path.exists(ICON):
        app.setWindowIcon(QIcon(ICON))
    register_bundled_fonts(app)
    server = None
    if single_instance:
        server, handed_over = _listen(paths)
        if handed_over:  # another app started a moment before this one and took the paths
            return 0
    # Collect cycles on a timer in the GUI thread only: a collection that happens to run in a worker
    # thread would destroy Qt objects there and crash.
    collector = GarbageCollection(app)  # noqa: F841  (gui/base/garbage_collection.py)
    windows = Windows()
    errors.install_excepthook(windows.active)
    if server is not None:
        server.paths_received.connect(windows.open_paths)
    file_opener = _FileOpener(windows)
    if hasattr(app, "file_opened"):  # not when a test made the QApplication
        app.file_opened.connect(file_opener.open)
    if args.smoke_test:
        window = windows.new_window()
        _arm_smoke_test(app, window, started, errors)
        window.open_path(paths[0] if paths else SAMPLE_RUN)
    elif paths:
        windows.open_paths(paths)
    elif sys.platform == "darwin":
        _open_sample_unless_finder_sends_a_file(windows.new_window(), file_opener)
    else:
        windows.new_window().open_path(SAMPLE_RUN)
    try:
        return app.exec()
    finally:
        if server is not None:
            server.close()
        windows.stop_work()


def _listen(paths: list[str]):
    """(server, handed_over): the InstanceServer now listening, or None when this app cannot listen
    (it then runs on alone, as before single-instance existed); handed_over is True when another app
    started a moment before this one, after our first try found none, and took the paths."""
    from .base.single_instance import InstanceServer, send_paths

    server = InstanceServer()
    if server.listen():
        return server, False
    if send_paths(paths):
        return None, True
    print(f"checkpoint-inspector: cannot listen on {server.name} ({server.server.errorString()}); "
          "later starts will open their own app", file=sys.stderr)
    return None, False


class Windows:
    """The open main windows. Holding them here keeps Python from collecting a window that only Qt
    references; each closed window is deleted and dropped, so its checkpoint's memory is freed."""

    def __init__(self, settings=None):
        self.windows: list = []
        self.settings = settings  # an AppSettings for every window (tests pass one); None: the user's

    def new_window(self):
        from PySide6.QtCore import Qt

        from .window import window_layout
        from .window.main_window import MainWindow

        previous = self.active()
        window = MainWindow(self.settings)
        window.setAttribute(Qt.WA_DeleteOnClose)
        # A method that holds no reference to the window, so this list stays its only Python owner.
        window.destroyed.connect(self._forget_deleted)
        self.windows.append(window)
        window.show()
        if previous is not None:  # not exactly on top of the one it came from, and on the screen whole
            window_layout.cascade(window, previous, NEW_WINDOW_OFFSET)
        return window

    def open_paths(self, paths: list[str]) -> None:
        """One new window per path; with no path, bring the latest window to the front."""
        if not paths:
            window = self.active() or self.new_window()
        for path in paths:
            others = bool(self.windows)
            window = self.new_window()
            window.close_if_first_load_fails = others  # a path that cannot open leaves no empty window
            window.open_path(path)
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()

    def stop_work(self) -> None:
        """The event loop has ended (quit, or the smoke test's exit): background jobs of windows still
        open stop and are waited for, so no worker thread still reads a file (h5py on a Keras file) while
        the interpreter tears down."""
        from shiboken6 import isValid

        for window in self.windows:
            if isValid(window):
                window.runner.cancel_all()
                window.runner.wait(10000)

    def active(self):
        from PySide6.QtWidgets import QApplication

        active = QApplication.activeWindow()
        if active in self.windows:
            return active
        return self.windows[-1] if self.windows else None

    def _forget_deleted(self, *_) -> None:
        from shiboken6 import isValid

        self.windows = [w for w in self.windows if isValid(w)]


def _application_class():
    """QApplication plus a `file_opened(str)` signal for the files macOS hands over as QFileOpenEvent
    (Finder's Open, a drop on the Dock icon). Overriding event() sees only the events sent to the
    application object, unlike an event filter on it, which would see every event of every widget.
    (Built in a function so that importing this module does not import Qt.)"""
    from PySide6.QtCore import QEvent, Signal
    from PySide6.QtWidgets import QApplication

    class Application(QApplication):
        file_opened = Signal(str)

        def event(self, event):
            if event.type() == QEvent.Type.FileOpen and event.file():
                self.file_opened.emit(event.file())
                return True
            return super().event(event)

    return Application


class _FileOpener:
    """Opens a file handed over by the desktop in a new window, or in `first_window` when that is set
    (the still empty window of a start without a path)."""

    def __init__(self, windows: Windows):
        self.windows = windows
        self.first_window = None

    def open(self, path: str) -> None:
        window, self.first_window = self.first_window, None
        if window is not None and window in self.windows.windows:
            window.open_path(path)
        else:
            self.windows.open_paths([path])


def _open_sample_unless_finder_sends_a_file(window, file_opener) -> None:
    """A double-click in Finder starts the app without arguments and then sends the file as an event:
    give that event a moment to arrive and take the first window, rather than opening the sample run in
    one window and the file in a second."""
    from PySide6.QtCore import QTimer

    file_opener.first_window = window

    def open_sample():
        if file_opener.first_window is window:  # no file came
            file_opener.first_window = None
            window.open_path(SAMPLE_RUN)

    QTimer.singleShot(MACOS_OPEN_EVENT_GRACE_MS, open_sample)


def _arm_smoke_test(app, window, started: float | None, errors) -> None:
    """Quit with status 0 once the variable table is filled, 1 if opening failed."""
    errors.show_error = lambda parent, title, message, details="": None  # no modal dialog to block on

    def loaded(loaded_checkpoint):
        from PySide6.QtCore import QEventLoop

        # Let the views lay out and paint the new rows before we call them shown: posted events, not
        # timers. A timer due meanwhile is what waits for the first paint (the plots, a collection,
        # MainWindow.build_deferred): had the paint taken longer than its delay, plain processEvents()
        # would run it too, and the line would time the plots' library as well, or not, by a few ms.
        # (Timers are held back like this where Qt's dispatcher allows it: Linux, where the benchmark runs.)
        app.processEvents(QEventLoop.ProcessEventsFlag.X11ExcludeTimers)
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

    window.session.checkpoint_loaded.connect(loaded)
    window.session.load_failed.connect(failed)

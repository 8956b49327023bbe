"""Training as a whole, in the main window: the run's logged curves read when it opens (and again when
the watcher sees it grow), runs plotted beside it, and the Tools menu's Training Overview (the graph of
the run is gui.graph's).

A comparison run comes from the menu or from a drop on the Trajectory dock, as many as wanted (each
drop adds one; the same run again is read afresh in its place); their trajectories, logged curves and
overview columns sit beside the run's. Everything is read on worker threads; a run without
event files simply has no logged curves (a log file that cannot be read is said in the status bar)."""
from __future__ import annotations

import os

from PySide6.QtGui import QKeySequence

from checkpoint_inspector.core.jobs import Progress
from checkpoint_inspector.core.run.discovery import discover
from checkpoint_inspector.core.storage.location import parse_location

from ..base import dialogs, errors
from ..base.deferred import AFTER_FIRST_PAINT_MS


class TrainingActions:
    def __init__(self, session, open_variable_at, executor=None):
        self.session = session
        self.executor = executor or (lambda: None)  # where the overview's pieces run (gui.window.compute_choice)
        self.open_variable_at = open_variable_at  # (prefix, stored name): open that checkpoint, select it
        self.run = None
        self.overview_window = None  # gui.training.overview_window.OverviewWindow, once asked for
        self._logs_job = None
        self._comparison_job = None
        session.run_opened.connect(lambda loaded: self.run_opened(loaded.run))
        session.run_grown.connect(self.run_changed)
        session.comparison_changed.connect(lambda *_: self._comparisons_changed())

    def build_menu(self, menu) -> None:
        overview = menu.addAction("Training &Overview…")
        overview.setShortcut(QKeySequence("Ctrl+Shift+V"))
        overview.setToolTip("Every variable at every checkpoint, coloured by a metric: dead or exploding layers at a glance")
        overview.triggered.connect(lambda *_: self.show_overview())
        compare = menu.addAction("Add Comparison &Run…")
        compare.setToolTip("Plot another run beside this one (or drop its folder on the Trajectory dock)")
        compare.triggered.connect(lambda *_: self.choose_comparison())
        self.remove_action = menu.addAction("Remove Comparison Runs")
        self.remove_action.setToolTip("Plot the window's run alone again (one run: uncheck it in the "
                                      "Trajectory dock's run list, or right-click it there to remove it)")
        self.remove_action.setEnabled(False)
        self.remove_action.triggered.connect(lambda *_: self.remove_comparison())
        menu.addSeparator()

    # ---- the run's logs -----------------------------------------------------------------------------
    def run_opened(self, run) -> None:
        from PySide6.QtCore import QTimer

        self.run = run
        if self._logs_job is not None:  # the last run's logs must not arrive for this one
            self._logs_job.cancel()
            self._logs_job = None
        # after the variables are shown: the logs (and numpy's and protobuf's first imports, which hold the
        # interpreter's lock) wait for the first paint
        # (the runner as the timer's context object: a window closed meanwhile starts nothing)
        QTimer.singleShot(AFTER_FIRST_PAINT_MS, self.session.runner, lambda: self.run is run and self._read_logs(run))
        if self.overview_window is not None:
            self.overview_window.set_runs(self.runs())

    def run_changed(self, run) -> None:
        """The watcher found checkpoints added or removed: training goes on, so its logs grew too, and
        the overview gets the new columns (what it read before is cached)."""
        self.run = run
        self._read_logs(run)
        if self.overview_window is not None:
            self.overview_window.set_runs(self.runs())

    def _read_logs(self, run) -> None:
        from checkpoint_inspector.core.run.training_logs import read_training_logs  # after the first paint, as the logs are read

        if self._logs_job is not None:
            self._logs_job.cancel()
        folder = run.folder
        handle = self.session.runner.start(
            "training logs", lambda: read_training_logs(folder),
            on_finished=lambda logs: self._logs_read(handle, logs),
            on_failed=lambda exc: handle is self._logs_job and self.session.show_message(
                f"The training logs cannot be read: {errors.describe(exc)}", 8000))
        self._logs_job = handle

    def _logs_read(self, handle, logs) -> None:
        from shiboken6 import isValid

        # A job that ended as its window closed arrives after the window's widgets are gone.
        if handle is not self._logs_job or handle.is_cancelled or not isValid(self.session):
            return
        self._logs_job = None
        self.session.set_logs(logs if logs.scalars or logs.histograms else None)
        damaged = [f for f in logs.files if f.problem]
        if damaged:
            self.session.show_message(f"{damaged[0].path}: {damaged[0].problem} (the points before it are shown)",
                                      10000)

    # ---- the comparison run -------------------------------------------------------------------------
    def choose_comparison(self) -> None:
        folder = dialogs.choose_folder(self.session.dialog_parent, "Plot another run beside this one",
                                       os.path.dirname(self.run.folder) if self.run else "")
        if folder:
            self.open_comparison(folder)

    def open_comparison(self, path: str) -> None:
        if self.session.require_current() is None:
            return
        if self._comparison_job is not None:
            self._comparison_job.cancel()
        from checkpoint_inspector.core.run.training_logs import read_training_logs

        path = parse_location(path)

        def job():
            yield Progress(0, 0, f"Opening {path}")
            run = discover(path).single_run(take_first=True)
            logs = yield from read_training_logs(run.folder)
            return run, logs

        self.session.show_busy(True, f"Opening the comparison run {path}…")
        handle = self.session.runner.start("comparison run", job,
                                           on_finished=lambda result: self._compared(handle, result),
                                           on_failed=lambda exc: self._comparison_failed(handle, exc, path),
                                           on_progress=lambda p: handle is self._comparison_job and
                                           self.session.show_progress(p),
                                           on_cancelled=lambda: self._comparison_ended(handle))
        self._comparison_job = handle

    def _comparison_ended(self, handle) -> bool:
        if handle is not self._comparison_job:
            return False
        self._comparison_job = None
        self.session.show_busy(False)
        return True

    def _compared(self, handle, result) -> None:
        if not self._comparison_ended(handle):
            return
        run, logs = result
        self.session.add_comparison(run, logs if logs.scalars or logs.histograms else None)
        self.session.show_message(f"Comparing with {run.folder}: {len(run.checkpoints)} checkpoints", 6000)

    def _comparison_failed(self, handle, exc, path: str) -> None:
        if self._comparison_ended(handle):
            errors.show_error(self.session.dialog_parent, "Cannot open the comparison run",
                              f"{path}\n\n{errors.describe(exc)}", getattr(exc, "formatted_traceback", ""))

    def remove_comparison(self, path: str | None = None) -> None:
        """The run of `path` no longer beside the window's run (None: none of them)."""
        self.session.remove_comparison(path)

    def _comparisons_changed(self) -> None:
        """A run came or went beside the window's (the menu, a drop, the Trajectory dock's run list)."""
        if hasattr(self, "remove_action"):
            self.remove_action.setEnabled(bool(self.session.comparisons))
        if self.overview_window is not None:
            self.overview_window.set_runs(self.runs())

    # ---- the overview -------------------------------------------------------------------------------
    def runs(self) -> list:
        names = self.session.run_names()
        runs = [(names[0], self.run.checkpoints)] if self.run else []
        runs += [(name, run.checkpoints) for name, (run, _) in zip(names[1:], self.session.comparisons)]
        return runs

    def show_overview(self):
        if self.session.require_current() is None:
            return None
        if self.overview_window is None:
            from .overview_window import OverviewWindow  # its plots' library loads when first used

            self.overview_window = OverviewWindow(self.runs(), executor=self.executor)
            self.overview_window.cell_opened.connect(self.open_variable_at)
        self.overview_window.show()  # computes what is new since it was last shown
        self.overview_window.raise_()
        return self.overview_window

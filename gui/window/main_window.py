"""The main window: menus, the run's checkpoint list, the variable browser, the detail panel, the status
bar with progress and cancel; opening from the menu, recent files, the command line and drag and drop.

Its panels and actions (Edits, exports, TensorBoard, the edit menu) get a WindowContext, not the
window; every long job runs through a JobSlot (gui.base.jobs)."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from core.formatting import format_bytes, format_count
from core.run.loading import open_checkpoint, open_run
from core.storage import paths

from ..base import dialogs
from . import window_layout
from ..compare.compare_actions import CompareActions
from .compute_choice import ComputeChoice
from ..base.deferred import Deferred
from ..detail.detail_panel import DetailPanel
from ..base.drop_hint import DropHint, DropTarget
from ..edits.edit_actions import EditActions
from .export_actions import ExportActions
from ..base.paths import APP_VERSION, ICON, SAMPLE_RUN  # a checkout or a PyInstaller bundle
from ..edits.remap_panel import RemapPanel
from ..browser.run_panel import RunPanel
from ..base.settings import AppSettings
from ..base.status_progress import StatusProgress
from .tensorboard_actions import TensorBoardActions
from ..training.training_actions import TrainingActions
from ..browser.variable_browser import VariableBrowser
from ..base.jobs import JobSlot, WindowContext
from .window_loading import CheckpointLoading
from ..base.worker import JobRunner


PLOT_QUESTION = 32  # plotting more variables than this at once asks first


def about_text() -> str:
    return (f"Checkpoint Inspector {APP_VERSION}\n\nSee what is inside TensorFlow and Keras checkpoints and "
            f"how it changed over training.")


class MainWindow(CheckpointLoading, DropTarget, QMainWindow):
    loaded = Signal(object)       # LoadedCheckpoint, after it is shown
    run_changed = Signal(object)  # Run, when the watcher found checkpoints added or removed
    load_failed = Signal(str)     # the message shown

    def __init__(self, settings: AppSettings | None = None):
        super().__init__()
        self.settings = settings or AppSettings()
        self.runner = JobRunner(self)
        self.current = None  # the LoadedCheckpoint shown (core.run.loading)
        self.current_path: str | None = None
        self.current_run_folder: str | None = None
        self._load_path: str | None = None
        self._select_after_load: tuple[str, str] | None = None  # (prefix, stored name) to select once it opens
        # Set for a window opened for a handed-over path beside other windows: if that path cannot be
        # opened, the window goes once its error is read, rather than stay behind empty.
        self.close_if_first_load_fails = False
        self._deferred_scheduled = False
        self.setWindowTitle("Checkpoint Inspector")
        if os.path.exists(ICON):
            self.setWindowIcon(QIcon(ICON))
        self.setAcceptDrops(True)
        self.resize(1280, 800)

        self.browser = VariableBrowser()
        self.setCentralWidget(self.browser)
        self.detail = DetailPanel(self.runner)
        self.run_panel = RunPanel(self.runner)
        self.checkpoint_model = self.run_panel.checkpoint_model
        self.run_panel.checkpoint_chosen.connect(self.open_checkpoint_row)
        self.run_panel.run_changed.connect(self._run_changed)
        self.run_dock = self._dock("Run", "run", self.run_panel, Qt.LeftDockWidgetArea)
        self.detail_dock = self._dock("Variable", "detail", self.detail, Qt.RightDockWidgetArea)
        # The plot is made a frame after the first paint (build_deferred): the variables show first.
        self.trajectory_slot = Deferred(self._make_trajectory, on_built=self._trajectory_built)
        self.trajectory_dock = self._dock("Trajectory", "trajectory", self.trajectory_slot, Qt.BottomDockWidgetArea)
        # The Variable panel keeps the window's whole height (its tabs need it on a laptop); the plot
        # spans the Run list and the variables.
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        self.context = WindowContext(
            self.runner, self, current=lambda: self.current, selected=lambda: self.detail.info,
            shown_names=self.browser.shown_names, show_busy=self.show_busy, show_progress=self.show_progress,
            show_message=lambda text, ms: self.statusBar().showMessage(text, ms))
        self.loading = JobSlot(self.context, "Cannot open", "Opening cancelled",
                               failure_intro="Cannot open this checkpoint.")
        self.compute = ComputeChoice(self.runner, self.settings, self)
        self.compute.start_saved()
        self.edits = RemapPanel(self.context)
        self.edits_dock = self._dock("Edits", "edits", self.edits, Qt.RightDockWidgetArea)
        self.tabifyDockWidget(self.detail_dock, self.edits_dock)
        self.detail_dock.raise_()
        self.edit_actions = EditActions(self.context, self.edits, self._reveal_edits)
        self.edits.changed.connect(self._edited_changed)
        self.browser.rename_requested.connect(self.edit_actions.rename_variable)
        self.detail.values_edited.connect(self.edit_actions.set_values_from_array)

        self.status = StatusProgress(self.statusBar(), self.cancel_all_work)
        self.status_text, self.progress, self.cancel_button = self.status.text, self.status.bar, self.status.cancel_button
        self.show_busy(False)

        self.drop_hint = DropHint(self)

        self.browser.selected.connect(self._variable_selected)
        self.browser.plot_requested.connect(self.plot_variables)
        self.browser.copy_code_requested.connect(lambda name: self.exports.copy_code(name))
        self.browser.counts_changed.connect(lambda *_: self._update_status())
        self.detail.status.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.exports = ExportActions(self.context)
        self.tensorboard = TensorBoardActions(self.context, self.statusBar())
        self.comparing = CompareActions(self.context, self.run_panel, self.edits, self._reveal_edits)
        self.training = TrainingActions(self.context, self.trajectory_slot, self.open_variable_at,
                                        self.tensorboard.show_graph)
        self._build_menus()
        window_layout.restore(self)

    # ---- construction ----------------------------------------------------------------------------
    @property
    def trajectory(self):
        """The trajectory panel (gui.trajectory.trajectory_panel), made now if it was not yet."""
        return self.trajectory_slot.widget

    def _make_trajectory(self):
        from ..trajectory.trajectory_panel import TrajectoryPanel  # pyqtgraph, imported here: after the first paint

        panel = TrajectoryPanel(self.runner, executor=lambda: self.compute.current)
        panel.add_button.clicked.connect(self.add_selected_to_trajectory)
        panel.checkpoint_clicked.connect(self.open_checkpoint_prefix)
        return panel

    def _trajectory_built(self, panel) -> None:
        if self.current is not None:  # as _loaded does for a new run
            panel.clear()
            panel.set_checkpoints(self.current.run.checkpoints)
        self.training.trajectory_built(panel)

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState needs names
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open Folder…", self.open_folder_dialog, QKeySequence.Open)
        self._action(file_menu, "Open &Files…", self.open_files_dialog, "Ctrl+Shift+O")
        self._action(file_menu, "Open &URL…", self.open_url_dialog, "Ctrl+L")
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(
            lambda: dialogs.fill_recent_menu(self.recent_menu, self.settings, self.open_path))
        self._action(file_menu, "Open &Sample Run", lambda: self.open_path(SAMPLE_RUN))
        file_menu.addSeparator()
        self.exports.build_menu(file_menu.addMenu("&Export"))
        file_menu.addSeparator()
        self._action(file_menu, "&Reload", self.reload, QKeySequence.Refresh)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.quit_app, QKeySequence.Quit)
        edit_menu = self.menuBar().addMenu("&Edit")
        self._action(edit_menu, "&Find Variable", self.focus_filter, QKeySequence.Find)
        self._action(edit_menu, "&Copy Values", self.detail.table.copy_selection)
        self._action(edit_menu, "Copy as C&ode", lambda: self.exports.copy_code(self.detail.info.name if self.detail.info
                                                                                 else None), "Ctrl+Shift+C")
        edit_menu.addSeparator()
        self.edit_actions.build_menu(edit_menu, self._action)
        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self.run_dock.toggleViewAction())
        view_menu.addAction(self.detail_dock.toggleViewAction())
        view_menu.addAction(self.trajectory_dock.toggleViewAction())
        view_menu.addAction(self.edits_dock.toggleViewAction())
        tree = view_menu.addAction("Tree by Scope")
        tree.setCheckable(True)
        tree.setChecked(self.browser.tree_box.isChecked())
        tree.toggled.connect(self.browser.tree_box.setChecked)
        self.browser.tree_box.toggled.connect(tree.setChecked)
        view_menu.addSeparator()
        self._action(view_menu, "&Next Checkpoint", lambda: self.run_panel.step(1), "Alt+Down")
        self._action(view_menu, "&Previous Checkpoint", lambda: self.run_panel.step(-1), "Alt+Up")
        self._action(view_menu, "Add Selected Variables to the &Plot", self.add_selected_to_trajectory, "Ctrl+T")
        for number, tab in enumerate(("Values", "Heatmap", "Histogram")):
            self._action(view_menu, f"Show {tab}", lambda n=number: self._show_tab(n), f"Ctrl+{number + 1}")
        view_menu.addSeparator()
        hidden = view_menu.addAction("Show Optimizer Slots and Bookkeeping")
        hidden.setCheckable(True)
        hidden.toggled.connect(self.browser.hidden_box.setChecked)
        self.browser.hidden_box.toggled.connect(hidden.setChecked)
        tools_menu = self.menuBar().addMenu("&Tools")
        self.comparing.build_menu(tools_menu)
        self.training.build_menu(tools_menu)
        self.tensorboard.build_menu(tools_menu)
        tools_menu.addSeparator()
        self._action(tools_menu, "Compute &On…", self.compute_on_dialog)
        help_menu = self.menuBar().addMenu("&Help")
        self._action(help_menu, "&About", self._about)

    def _action(self, menu, text, slot, shortcut=None) -> QAction:
        action = menu.addAction(text)
        action.triggered.connect(lambda *_: slot())
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        return action

    # ---- opening ---------------------------------------------------------------------------------
    def open_folder_dialog(self) -> None:
        folder = dialogs.choose_folder(self, "Open a run folder or SavedModel", self._dialog_folder())
        if folder:
            self.open_path(folder)

    def open_url_dialog(self) -> None:
        """A run in cloud storage (s3://, gs://, az://, https://): read off the GUI thread like any path."""
        url = dialogs.ask_text(self, "Open a URL", "Run folder or checkpoint URL (s3://bucket/run, gs://…, "
                                                   "az://…, https://…):", "s3://")
        if url and url.strip() not in ("", "s3://"):
            self.open_path(url.strip())

    def compute_on_dialog(self) -> None:
        """Where trajectories run their pieces: threads here, or a Dask cluster (core.executor)."""
        setting = dialogs.ask_text(self, "Compute on", "Empty for threads in this app; a Dask scheduler "
                                                       "(tcp://host:8786) or local[N] for N worker processes:",
                                   self.settings.executor_setting())
        if setting is not None:
            self.compute.choose(setting.strip())

    def open_files_dialog(self) -> None:
        path = dialogs.open_file(self, "Open a checkpoint", folder=self.current_run_folder or "",
                                 pattern=dialogs.CHECKPOINT_PATTERN)
        if path:
            self.open_path(path)

    def _dialog_folder(self) -> str:
        """Where file dialogs start: beside the open run (its parent, to pick a sibling run)."""
        return os.path.dirname(self.current_run_folder) if self.current_run_folder else ""

    def open_path(self, path: str) -> None:
        """Open a run, checkpoint file or SavedModel on a worker thread; the window stays usable."""
        path = paths.abspath(path)  # a URL stays as it is
        self.cancel_loading()
        self._start_load(f"open {path}", lambda: open_run(path), path)

    def reload(self) -> None:
        if self.current_path:
            prefix = self.current.checkpoint.prefix if self.current else None
            self._start_load("reload", lambda: open_run(prefix if prefix and (paths.is_url(prefix) or os.path.exists(prefix + ".index"))
                                                        else self.current_path), self.current_path)

    def open_checkpoint_row(self, row: int) -> None:
        if self.current is None or not 0 <= row < len(self.checkpoint_model.checkpoints):
            return
        info = self.checkpoint_model.checkpoints[row]
        run = self.current.run
        self.cancel_loading()
        self._start_load(f"open {info.name}", lambda: open_checkpoint(run, info), self.current_path)

    def cancel_all_work(self) -> None:
        """The status bar's cancel button: stops the load, export, save or launch in progress."""
        self.context.cancel_all()

    def show_progress(self, progress) -> None:
        self.status.show(progress)

    def add_selected_to_trajectory(self) -> None:
        """“+ selected”: every selected variable goes on the plot (Shift/Ctrl-click several first)."""
        self.plot_variables(self.browser.selected_variables())

    def plot_variables(self, infos) -> None:
        if not infos:
            self.statusBar().showMessage("Select a variable first", 4000)
            return
        if len(infos) > PLOT_QUESTION and not dialogs.ask_yes_no(
                self, "Plot many variables", f"Plot {len(infos):,} variables? Each is read at every checkpoint "
                                             f"of the run, and so many curves are hard to tell apart."):
            return
        self.trajectory_dock.show()
        for info in infos:
            self.trajectory.add_variable(info.name, info.display_name)

    # ---- editing ----------------------------------------------------------------------------------------
    def _reveal_edits(self) -> None:
        self.edits_dock.show()
        self.edits_dock.raise_()

    def _edited_changed(self, edited: bool) -> None:
        self.setWindowModified(edited)
        title = self.windowTitle().replace(" [*]", "")
        self.setWindowTitle(title + " [*]")

    # ---- the run growing ----------------------------------------------------------------------------------
    def _run_changed(self, run) -> None:
        if self.current is None or run.folder != self.current.run.folder:
            return
        self.current.run = run
        self.trajectory.set_checkpoints(run.checkpoints)
        self.training.run_changed(run)
        self.statusBar().showMessage(f"The run now has {len(run.checkpoints)} checkpoints", 5000)
        self.run_changed.emit(run)

    # ---- showing ---------------------------------------------------------------------------------
    def _variable_selected(self, info) -> None:
        self.detail.show_variable(self.current.reader if self.current else None, info)

    def show_busy(self, busy: bool, text: str = "") -> None:
        self.status.set_busy(busy, text)
        if not busy:  # a finished job's last progress line ("Writing the index") must not stay behind
            self._update_status()

    def _update_status(self) -> None:
        if self.current is None:
            self.status_text.setText("Open a run folder or checkpoint (Ctrl+O), or drop one here")
            return
        loaded = self.current
        shown = len(self.browser.visible_indexes)
        total = len(loaded.variables)
        counts = f"{format_count(total)} variables" if shown == total else f"{shown:,} of {total:,} variables shown"
        self.status_text.setText(f"{counts} · {format_count(loaded.total_elements)} values · "
                                 f"{format_bytes(loaded.total_bytes)} · {loaded.checkpoint.prefix}")

    def _show_tab(self, number: int) -> None:
        self.detail_dock.show()
        self.detail_dock.raise_()
        self.detail.tabs.setCurrentIndex(number)

    def focus_filter(self) -> None:
        self.browser.filter_edit.setFocus()
        self.browser.filter_edit.selectAll()

    def quit_app(self) -> None:
        """Quit means the app, not this window: every window closes (each saves its layout)."""
        from PySide6.QtWidgets import QApplication

        QApplication.instance().closeAllWindows()

    def _about(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.about(self, "Checkpoint Inspector", about_text())

    # ---- drag and drop ---------------------------------------------------------------------------
    def path_dropped(self, path: str) -> None:
        self.open_path(path)

    def drop_zones(self) -> list:
        """A run dropped on the Trajectory dock, with a run open, is plotted beside it."""
        if self.current is None:
            return []
        return [(self.trajectory_dock, "Drop a run here to plot it beside this one", self.training.open_comparison)]

    # ---- layout memory ---------------------------------------------------------------------------
    def closeEvent(self, event) -> None:
        if self.edits.unsaved and not dialogs.ask_yes_no(
                self, "Unsaved edits", "The edit plan has not been saved. Close the window and lose it?"):
            event.ignore()
            return
        self.run_panel.stop()
        if self.training.overview_window is not None:
            self.training.overview_window.close()
        self.tensorboard.stop()  # the child never outlives the window (nor the app: see core.tensorboard.process)
        window_layout.save(self)
        self.runner.cancel_all()
        self.runner.wait(5000)
        self.compute.close()  # a local Dask cluster stops with the window
        super().closeEvent(event)


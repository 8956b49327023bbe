"""The main window: it composes the rooms around one session (gui.session) and lays them out: the run's
checkpoint list, the variable browser, the detail panel, the trajectory plot, the Edits dock, the menus
and the status bar with progress and cancel; opening from the menu, recent files, the command line and
drag and drop.

Every panel and action takes the session in its constructor and subscribes to it; the window calls no
panel when something opens. What the window itself follows of the session: its title, the status bar,
and, once something is shown, building what waited for the first paint."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QDockWidget, QMainWindow, QScrollArea, QWidget

from ..base import dialogs
from . import window_layout
from ..compare.compare_actions import CompareActions
from .compute_choice import ComputeChoice
from .diagnosis_actions import DiagnosisActions
from ..base.deferred import AFTER_FIRST_PAINT_MS, Deferred
from ..detail.detail_panel import DetailPanel
from ..base.drop_hint import DropHint, DropTarget
from ..edits.edit_actions import EditActions
from .export_actions import ExportActions
from .menu_bar import build_menus
from .status_line import StatusLine
from ..base.paths import ICON  # a checkout or a PyInstaller bundle
from ..edits.remap_panel import RemapPanel
from ..browser.run_panel import RunPanel
from ..base.settings import AppSettings
from ..base.status_progress import MessageStatusBar, StatusProgress
from .tensorboard_actions import TensorBoardActions
from .unsaved_edits import UnsavedEdits
from ..training.training_actions import TrainingActions
from ..graph.graph_actions import GraphActions
from ..browser.variable_browser import VariableBrowser
from ..base.garbage_collection import settle as settle_garbage
from ..base.worker import JobRunner
from ..session import Session


PLOT_QUESTION = 32  # plotting more variables than this at once asks first


def _scrolling(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    area.setWidget(widget)
    return area


class MainWindow(DropTarget, QMainWindow):
    def __init__(self, settings: AppSettings | None = None):
        super().__init__()
        self.settings = settings or AppSettings()
        self.runner = JobRunner(self)
        self.session = Session(self, self.runner, self.settings, prepare=VariableBrowser.prepare)
        # Set for a window opened for a handed-over path beside other windows: if that path cannot be
        # opened, the window goes once its error is read, rather than stay behind empty.
        self.close_if_first_load_fails = False
        self._deferred_scheduled = False
        self.setWindowTitle("Checkpoint Inspector")
        if os.path.exists(ICON):
            self.setWindowIcon(QIcon(ICON))
        self.setAcceptDrops(True)
        self._shown_once = False

        session = self.session
        self.browser = VariableBrowser(session)
        self.setCentralWidget(self.browser)
        self.detail = DetailPanel(session)
        self.run_panel = RunPanel(session)
        self.checkpoint_model = self.run_panel.checkpoint_model
        self.run_panel.run_picked.connect(self._run_picked)
        self.run_dock = self._dock("Run", "run", self.run_panel, Qt.LeftDockWidgetArea)
        self.detail_dock = self._dock("Variable", "detail", self.detail, Qt.RightDockWidgetArea)
        # The plot is made a frame after the first paint (build_deferred): the variables show first.
        self.trajectory_slot = Deferred(self._make_trajectory)
        self.trajectory_dock = self._dock("Trajectory", "trajectory", self.trajectory_slot, Qt.BottomDockWidgetArea)
        # The Variable panel keeps the window's whole height (its tabs need it on a laptop); the plot
        # spans the Run list and the variables.
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        self.compute = ComputeChoice(self.runner, self.settings, self)
        self.compute.start_saved()
        self.edits = RemapPanel(session)
        # Its plan, options and preview stand ~430 px tall: in a scroll area, so that they never set the
        # window's minimum height (a 1366x768 screen at scale 1.5 is 512 px high).
        self.edits_dock = self._dock("Edits", "edits", _scrolling(self.edits), Qt.RightDockWidgetArea)
        self.tabifyDockWidget(self.detail_dock, self.edits_dock)
        self.detail_dock.raise_()
        self.edit_actions = EditActions(session, self.edits.save_dialog, self._reveal_edits)
        self.unsaved = UnsavedEdits(self, session, self.edits)
        self.browser.rename_requested.connect(self.edit_actions.rename_variable)
        self.browser.rename_requested_for.connect(self.edit_actions.rename_from_menu)

        self.setStatusBar(MessageStatusBar())  # a message elided before TensorBoard's label, never into it
        self.status = StatusProgress(self.statusBar(), self.cancel_all_work)
        self.status_text, self.progress, self.cancel_button = self.status.text, self.status.bar, self.status.cancel_button
        self.status_line = StatusLine(session, self.status_text)

        self.drop_hint = DropHint(self)

        self.browser.plot_requested.connect(self.plot_variables)
        self.browser.copy_code_requested.connect(lambda name: self.exports.copy_code(name))
        self.detail.status.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.exports = ExportActions(session)
        self.tensorboard = TensorBoardActions(session, self.statusBar())
        self.comparing = CompareActions(session, self.run_panel, self._reveal_edits)
        self.tensorboard.executor = lambda: self.compute.current  # the history's metrics (Tools ▸ Compute On…)
        self.training = TrainingActions(session, self.open_variable_at, executor=lambda: self.compute.current)
        self.diagnosing = DiagnosisActions(self)
        self.graphing = GraphActions(session, self.plot_variables, self.tensorboard.show_graph,
                                     executor=lambda: self.compute.current)
        self.browser.graph_requested.connect(self.graphing.show_in_graph)
        self.browser.graph_available = lambda: self.graphing.available
        self.browser.drop_requested.connect(self.edit_actions.drop_variables)
        self.browser.export_requested.connect(self.exports.export_variables)
        self.browser.compare_requested.connect(self.comparing.compare_variable)
        self._follow(session)
        self.show_busy(False)
        build_menus(self)
        window_layout.restore(self)

    def _follow(self, session: Session) -> None:
        """What the window shows of the session itself: the status bar, the title, the end of a load."""
        session.busy_changed.connect(self.show_busy)
        session.progress.connect(self.status.show)
        session.message.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        session.shown_changed.connect(lambda *_: self.status_line.update())
        session.checkpoint_loaded.connect(self._checkpoint_loaded)
        session.plan_changed.connect(lambda _: self._update_title())
        session.values_edited.connect(lambda *_: self._reveal_edits())  # typed values: the plan that has them
        session.run_grown.connect(lambda run: self.statusBar().showMessage(
            f"The run now has {len(run.checkpoints)} checkpoints", 5000))
        session.load_failed.connect(lambda _: (self._after_first_paint(), self.status_line.update()))
        session.load_cancelled.connect(self._load_cancelled)
        session.load_error_shown.connect(self._load_error_shown)

    # ---- construction ----------------------------------------------------------------------------
    @property
    def trajectory(self):
        """The trajectory panel (gui.trajectory.trajectory_panel), made now if it was not yet."""
        return self.trajectory_slot.widget

    def _make_trajectory(self):
        from ..trajectory.trajectory_panel import TrajectoryPanel  # pyqtgraph, imported here: after the first paint

        panel = TrajectoryPanel(self.session, executor=lambda: self.compute.current)
        panel.add_button.clicked.connect(self.add_selected_to_trajectory)
        return panel

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState needs names
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

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
        self.compute.ask()

    def open_files_dialog(self) -> None:
        path = dialogs.open_file(self, "Open a checkpoint", folder=self.session.run_folder or "",
                                 pattern=dialogs.CHECKPOINT_PATTERN)
        if path:
            self.open_path(path)

    def _dialog_folder(self) -> str:
        """Where file dialogs start: beside the open run (its parent, to pick a sibling run)."""
        folder = self.session.run_folder
        return os.path.dirname(folder) if folder else ""

    def open_path(self, path: str) -> None:
        """Open a run, checkpoint file or SavedModel (from a menu, a drop, the command line, another
        start of the app): the session opens it on a worker thread; the window stays usable. Unsaved
        edits are saved or discarded first, as the person says (or nothing opens)."""
        self.unsaved.then(f"opening {path}", lambda: self.session.open_path(path))

    def _run_picked(self, path: str) -> None:
        """A run picked in the Run dock's tree opens like any path; if the person keeps the run shown (Cancel
        to its unsaved edits), the tree marks that one again."""
        tree = self.run_panel.run_tree
        if not self.unsaved.then(f"opening {path}", lambda: self.session.open_path(path)) and not self.edits.slot.busy:
            tree.mark_current(tree.current_path)

    def open_variable_at(self, prefix: str, name: str) -> None:
        """Show `name` at checkpoint `prefix` (an overview cell): this window comes to the front."""
        self.raise_()
        self.activateWindow()
        if self.session.current is not None and any(c.prefix == prefix for c in self.session.current.run.checkpoints):
            self.session.open_variable_at(prefix, name)  # the same run: its edits stay as they are
        else:
            self.unsaved.then(f"opening {prefix}", lambda: self.session.open_variable_at(prefix, name))

    def cancel_all_work(self) -> None:
        """The status bar's cancel button: stops the load, export, save or launch in progress."""
        self.session.cancel_all()

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
        # Raised on a window its docks were squeezed in (a layout saved on a bigger screen): room for Save.
        QTimer.singleShot(0, self, lambda: window_layout.widen_cramped_docks(self))

    # ---- following the session ------------------------------------------------------------------------
    def _checkpoint_loaded(self, loaded) -> None:
        self.close_if_first_load_fails = False  # it has shown something: it stays
        self._update_title()
        self.status_line.update()
        summary = loaded.reader.model_summary()
        self.statusBar().clearMessage()  # a note about the checkpoint shown before is not about this one
        # dict.fromkeys: a warning both the run and the reader give (a SavedModel's misplaced variables) once
        for message in dict.fromkeys(([summary] if summary else []) + loaded.run.warnings + loaded.reader.warnings):
            self.statusBar().showMessage(message, 10000)  # a warning, shown last, stays in sight
        self._after_first_paint()
        # What this load made is kept out of later collections (gui.base.garbage_collection), after the paint.
        QTimer.singleShot(AFTER_FIRST_PAINT_MS, settle_garbage)

    def _update_title(self) -> None:
        loaded = self.session.current
        if loaded is not None:
            step = "" if loaded.checkpoint.step is None else f" · step {loaded.checkpoint.step:,}"
            self.setWindowTitle(f"{loaded.checkpoint.name}{step} — {loaded.run.folder} — Checkpoint Inspector [*]")
        self.setWindowModified(self.session.unsaved)  # the "*": edits no save has written

    def _load_cancelled(self) -> None:
        self.close_if_first_load_fails = False  # the person stopped it: the window is theirs now
        self.status_line.update()

    def _load_error_shown(self) -> None:
        if self.close_if_first_load_fails and self.session.current is None:
            self.close()

    def build_deferred(self) -> None:
        """Make what waited for the first paint: the plots (see gui.base.deferred)."""
        self.trajectory_slot.build()
        self.detail.build_deferred()

    def _after_first_paint(self) -> None:
        if not self._deferred_scheduled:
            self._deferred_scheduled = True
            QTimer.singleShot(AFTER_FIRST_PAINT_MS, self, self.build_deferred)  # not if the window is gone

    def show_busy(self, busy: bool, text: str = "") -> None:
        self.status.set_busy(busy, text)
        if not busy:  # a finished job's last progress line ("Writing the index") must not stay behind
            self.status_line.update()

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

    # ---- drag and drop ---------------------------------------------------------------------------
    def path_dropped(self, path: str) -> None:
        self.open_path(path)

    def drop_zones(self) -> list:
        """A run dropped on the Trajectory dock, with a run open, is plotted beside it."""
        if self.session.current is None:
            return []
        return [(self.trajectory_dock, "Drop a run here to plot it beside this one", self.training.open_comparison)]

    # ---- layout memory ---------------------------------------------------------------------------
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._shown_once:  # framed by the window manager now: inside the screen, docks given room
            self._shown_once = True
            window_layout.keep_inside_screen_once_framed(self)
            if self.first_layout:
                QTimer.singleShot(0, self, lambda: window_layout.default_dock_sizes(self))
            else:
                QTimer.singleShot(0, self, lambda: (window_layout.give_the_variables_room(self),
                                                    window_layout.widen_cramped_docks(self)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._shown_once and event.size().width() > event.oldSize().width() > 0:
            QTimer.singleShot(0, self, lambda: window_layout.widen_cramped_docks(self))

    def closeEvent(self, event) -> None:
        if not self.unsaved.closing_allowed():
            event.ignore()
            return
        self.run_panel.stop()
        if self.training.overview_window is not None:
            self.training.overview_window.close()
        self.diagnosing.close()
        self.graphing.close()
        self.tensorboard.stop()  # the child never outlives the window (nor the app: see core.tensorboard.process)
        window_layout.save(self)
        self.runner.cancel_all()
        self.runner.wait(5000)
        self.compute.close()  # a local Dask cluster stops with the window
        self.session.close()  # the run's files: nothing stays open once the window is gone
        super().closeEvent(event)


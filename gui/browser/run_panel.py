"""The Run dock: the run's checkpoints as a table (the open one in bold, the latest starred, damaged ones
marked ⚠ with what is wrong), watched for checkpoints written while it is open. Ctrl-clicking a second
checkpoint selects it for "Compare" without opening it. Both the watching and
the damage check run off the GUI thread: a network folder can be slow to list, a long run slow to check."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu, QTableView

from core.jobs import Progress
from core.run.health import check_checkpoints
from core.run.watch import LOCAL_INTERVAL_MS, RunWatcher

from .checkpoint_list import CheckpointListModel



class RunPanel(QTableView):
    checkpoint_chosen = Signal(int)  # a row other than the open checkpoint was clicked or activated
    run_changed = Signal(object)     # Run: the watcher found checkpoints added or removed
    checked = Signal(object)         # {prefix: problem} of the run's damaged checkpoints
    compare_requested = Signal(list)  # [prefix A, prefix B]: "Compare these two" on two selected rows

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.runner = session.runner
        self.checkpoint_model = CheckpointListModel(self)
        self.setModel(self.checkpoint_model)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        # Ctrl/Shift-click selects a second checkpoint to compare with (it does not open it).
        self.setSelectionMode(QAbstractItemView.ExtendedSelection)
        self.setContextMenuPolicy(Qt.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(22)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.horizontalHeader().setStretchLastSection(True)
        self.clicked.connect(self._clicked)
        self.activated.connect(self._clicked)
        # Arrow keys move the current row: that opens the checkpoint, as a click does.
        self.selectionModel().currentRowChanged.connect(lambda current, _previous: self._clicked(current))
        self.watcher: RunWatcher | None = None
        self._watch_job = None
        self._check_job = None
        self._checked_prefixes: tuple | None = None
        self.watch_timer = QTimer(self)
        self.watch_timer.setInterval(LOCAL_INTERVAL_MS)  # the watcher's own, once a run is shown
        self.watch_timer.timeout.connect(self._poll)
        session.checkpoint_loaded.connect(lambda loaded: self.show_run(loaded.run, loaded.checkpoint.prefix))
        self.checkpoint_chosen.connect(lambda row: session.open_checkpoint(self.checkpoint_model.checkpoints[row]))
        self.run_changed.connect(session.grow_run)

    def show_run(self, run, current_prefix: str) -> None:
        """The run of the checkpoint just opened (it may be the same run as before)."""
        self.checkpoint_model.set_run(run)
        self._mark_current(current_prefix)
        self.resizeColumnsToContents()
        if self.watcher is None or self.watcher.folder != run.folder:
            self.watcher = RunWatcher(run)
        self.watch_timer.setInterval(self.watcher.interval_ms)
        self.watch_timer.start()
        self._check(run)

    def stop(self) -> None:
        self.watch_timer.stop()

    def _mark_current(self, prefix: str) -> None:
        self.checkpoint_model.set_current(prefix)
        row = self.checkpoint_model.row_of(prefix)
        if row >= 0:
            self.selectRow(row)

    def selected_prefixes(self) -> list[str]:
        """The selected checkpoints, oldest first."""
        rows = sorted({index.row() for index in self.selectionModel().selectedRows()})
        return [self.checkpoint_model.checkpoints[row].prefix for row in rows
                if row < len(self.checkpoint_model.checkpoints)]

    def _context_menu(self, point) -> None:
        selected = self.selected_prefixes()
        if len(selected) != 2:
            return
        menu = QMenu(self)
        names = [self.checkpoint_model.checkpoints[self.checkpoint_model.row_of(p)].name for p in selected]
        menu.addAction(f"Compare {names[0]} with {names[1]}", lambda: self.compare_requested.emit(selected))
        menu.exec(self.viewport().mapToGlobal(point))

    def _clicked(self, index) -> None:
        if QApplication.keyboardModifiers() & (Qt.ControlModifier | Qt.ShiftModifier):
            return  # choosing a second checkpoint to compare, not opening it
        if not index.isValid() or not 0 <= index.row() < len(self.checkpoint_model.checkpoints):
            return
        if self.checkpoint_model.checkpoints[index.row()].prefix != self.checkpoint_model.current_prefix:
            self.checkpoint_chosen.emit(index.row())

    def step(self, offset: int) -> None:
        """Open the next (+1) or previous (-1) checkpoint of the run."""
        row = self.checkpoint_model.row_of(self.checkpoint_model.current_prefix or "") + offset
        if 0 <= row < len(self.checkpoint_model.checkpoints):
            self.selectRow(row)

    # ---- watching --------------------------------------------------------------------------------------
    def _poll(self) -> None:
        if self._watch_job is not None or self.watcher is None:
            return
        watcher = self.watcher

        def job():
            yield Progress(0, 1, "")
            return watcher.poll()

        self._watch_job = self.runner.start("watch run", job, on_finished=self._polled, on_failed=lambda exc: None,
                                            on_done=lambda: setattr(self, "_watch_job", None))

    def _polled(self, run) -> None:
        if run is None or self.watcher is None or run.folder != self.watcher.folder:
            return
        current = self.checkpoint_model.current_prefix
        self.checkpoint_model.set_run(run)
        self._mark_current(current)
        self._check(run)
        self.run_changed.emit(run)

    # ---- damage ------------------------------------------------------------------------------------------
    def _check(self, run) -> None:
        prefixes = tuple(c.prefix for c in run.checkpoints)
        if prefixes == self._checked_prefixes:
            self.checkpoint_model.set_problems(self.checkpoint_model.problems)
            return
        self._checked_prefixes = prefixes
        if self._check_job is not None:
            self._check_job.cancel()
        checkpoints = list(run.checkpoints)
        handle = self.runner.start("check run", lambda: check_checkpoints(checkpoints),
                                   on_finished=lambda problems: self._checked(handle, problems),
                                   on_failed=lambda exc: None)
        self._check_job = handle

    def _checked(self, handle, problems: dict[str, str]) -> None:
        if handle is not self._check_job:
            return  # a newer check of a changed run supersedes this one
        self._check_job = None
        self.checkpoint_model.set_problems(problems)
        self.checked.emit(problems)

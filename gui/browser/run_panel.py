"""The Run dock: the run's checkpoints as a table (the open one in bold, the latest starred, damaged ones
marked ⚠ with what is wrong, checkpoints of one step told apart), watched for checkpoints written while it
is open; above it, when the person opened a folder of runs, the tree of those runs (gui.browser.run_tree)
to pick another from. Ctrl-clicking a second checkpoint selects it for "Compare" without opening it. Both
the watching and the damage check run off the GUI thread: a network folder can be slow to list, a long run
slow to check."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu, QSplitter, QTableView, QVBoxLayout, QWidget

from checkpoint_inspector.core.jobs import Progress
from checkpoint_inspector.core.run.health import check_checkpoints
from checkpoint_inspector.core.run.watch import LOCAL_INTERVAL_MS, RunWatcher

from ..base.keyboard_menu import route_context_menu
from .checkpoint_list import CheckpointListModel
from .run_tree import RunTree


class RunPanel(QWidget):
    checkpoint_chosen = Signal(int)  # a row other than the open checkpoint was clicked or activated
    run_changed = Signal(object)     # Run: the watcher found checkpoints added or removed
    checked = Signal(object)         # {prefix: problem} of the run's damaged checkpoints
    run_picked = Signal(str)         # a run picked in the tree of runs: its path, for the window to open
    compare_requested = Signal(list)  # [prefix A, prefix B]: "Compare these two" on two selected rows

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.runner = session.runner
        self.run_tree = RunTree()
        self.run_tree.hide()  # a run on its own needs no tree
        self.table = QTableView()
        self.checkpoint_model = CheckpointListModel(self)
        table = self.table
        table.setModel(self.checkpoint_model)
        table.setSelectionBehavior(QAbstractItemView.SelectRows)
        # Ctrl/Shift-click selects a second checkpoint to compare with (it does not open it).
        table.setSelectionMode(QAbstractItemView.ExtendedSelection)
        route_context_menu(table, self._context_menu)  # Compare the two selected (also by the Menu key)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(22)
        # Columns fitted to 200 rows, not Qt's default 1,000 (the horizontal header's precision is how many rows
        # a column's fit reads): a run of 10,000 checkpoints opens as fast as one of 100, and a step, a time
        # and a size are as wide on every row.
        table.horizontalHeader().setResizeContentsPrecision(200)
        table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        # Tab goes on to the next panel (cell to cell it scrolled the Step column away); the arrow keys
        # move through the checkpoints.
        table.setTabKeyNavigation(False)
        table.horizontalHeader().setStretchLastSection(True)
        table.clicked.connect(self._clicked)
        table.activated.connect(self._clicked)
        # Arrow keys move the current row: that opens the checkpoint, as a click does.
        table.selectionModel().currentRowChanged.connect(lambda current, _previous: self._clicked(current))
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.addWidget(self.run_tree)
        self.splitter.addWidget(table)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self.setFocusProxy(table)  # the keys of the dock move through the checkpoints
        self._forwarding_key = False
        self._selecting = False  # a row being marked by _select_only (not chosen by a person)
        self.watcher: RunWatcher | None = None
        self._watch_job = None
        self._check_job = None
        self._checked_prefixes: tuple | None = None
        self.watch_timer = QTimer(self)
        self.watch_timer.setInterval(LOCAL_INTERVAL_MS)  # the watcher's own, once a run is shown
        self.watch_timer.timeout.connect(self._poll)
        session.checkpoint_loaded.connect(lambda loaded: self.show_run(loaded.run, loaded.checkpoint.prefix))
        # a failed or cancelled pick in the tree: the tree shows the run that is still shown
        session.load_failed.connect(lambda *_: self.run_tree.mark_current(self.run_tree.current_path))
        session.load_cancelled.connect(lambda: self.run_tree.mark_current(self.run_tree.current_path))
        self.checkpoint_chosen.connect(lambda row: session.open_checkpoint(self.checkpoint_model.checkpoints[row]))
        self.run_tree.run_chosen.connect(self.run_picked)  # the window opens it (after unsaved edits)
        self.run_changed.connect(session.grow_run)

    # ---- the table's own, for callers that treat the dock as the checkpoint list ------------------------
    def selectionModel(self):
        return self.table.selectionModel()

    def keyPressEvent(self, event) -> None:
        """A key sent to the dock moves through the checkpoints (one the table leaves comes back here
        on its way up: it goes on up, not round again)."""
        if self._forwarding_key:
            event.ignore()
            return
        self._forwarding_key = True
        try:
            QApplication.sendEvent(self.table, event)
        finally:
            self._forwarding_key = False

    def show_run(self, run, current_prefix: str) -> None:
        """The run of the checkpoint just opened (it may be the same run as before)."""
        self._show_tree(run)
        self.checkpoint_model.set_run(run)
        self._mark_current(current_prefix)
        self.table.resizeColumnsToContents()
        if run.single_file:  # one file beside others: nothing to watch for (its folder is another run's)
            self.watcher = None
            self.watch_timer.stop()
        else:
            if self.watcher is None or self.watcher.folder != run.folder:
                self.watcher = RunWatcher(run)
            self.watch_timer.setInterval(self.watcher.interval_ms)
            self.watch_timer.start()
        self._check(run)

    def _show_tree(self, run) -> None:
        """The folder of runs this run came from; kept while the person picks runs in it (a run picked is
        found again on its own, without the tree), replaced when another folder of runs opens."""
        tree = self.run_tree
        picked_in_it = tree.contains(run.path) and (run.tree is None or tree.root is None
                                                     or run.tree.path != tree.root.path)
        if run.tree is not tree.root and not picked_in_it:
            tree.set_root(run.tree)
        tree.setVisible(tree.run_count() > 1)
        tree.mark_current(run.path)

    def stop(self) -> None:
        self.watch_timer.stop()

    def _mark_current(self, prefix: str) -> None:
        self.checkpoint_model.set_current(prefix)
        self._select_only(self.checkpoint_model.row_of(prefix))

    def _select_only(self, row: int) -> None:
        """Select `row` alone and make it current. Not QTableView.selectRow: with extended selection it reads
        the keyboard's modifiers at that instant, so a load ending (or a step) while Ctrl is held toggled
        the row off instead."""
        if row < 0:
            return
        index = self.checkpoint_model.index(row, 0)
        self._selecting = True  # the row is marked, not chosen: its currentRowChanged opens nothing
        try:
            self.table.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        finally:
            self._selecting = False

    def selected_prefixes(self) -> list[str]:
        """The selected checkpoints, oldest first."""
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.checkpoint_model.checkpoints[row].prefix for row in rows
                if row < len(self.checkpoint_model.checkpoints)]

    def _context_menu(self, point) -> None:
        selected = self.selected_prefixes()
        if len(selected) != 2:
            return
        menu = QMenu(self)
        menu.setAttribute(Qt.WA_DeleteOnClose)
        names = [self.checkpoint_model.checkpoints[self.checkpoint_model.row_of(p)].name for p in selected]
        menu.addAction(f"Compare {names[0]} with {names[1]}", lambda: self.compare_requested.emit(selected))
        self.context_menu = menu  # for tests: they cannot click into a popup's event loop
        menu.popup(self.table.viewport().mapToGlobal(point))

    def _clicked(self, index) -> None:
        if self._selecting:
            return
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
            self._select_only(row)
            self.checkpoint_chosen.emit(row)  # a step opens, whatever modifier is held

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

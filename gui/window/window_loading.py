"""What a main window does with a load job (started by MainWindow.open_path and its siblings): the
variable browser's columns made on the job's worker thread too, what the window shows once the job has
loaded a checkpoint or failed, and, a frame after the first paint, what waited for it (the plots:
gui.base.deferred).

A mixin of MainWindow: it uses the window's panels and JobSlot, and keeps the loading state on it."""
from __future__ import annotations

from PySide6.QtCore import QTimer

from core.run.loading import LoadedCheckpoint

from ..base.deferred import AFTER_FIRST_PAINT_MS
from ..base.garbage_collection import settle as settle_garbage
from ..base.paths import SAMPLE_RUN
from ..browser.visible_set import VisibleSet


class CheckpointLoading:
    def _start_load(self, name: str, make_job, path: str) -> None:
        self._load_path = path
        self.loading.start(name, lambda: _with_visible_set(make_job()), self._loaded, busy_text=f"Opening {path}…",
                           on_failed=self._load_failed, on_cancelled=self._load_cancelled,
                           on_error_shown=self._load_error_shown)

    def cancel_loading(self) -> None:
        self.loading.cancel()

    def _loaded(self, result: tuple[LoadedCheckpoint, VisibleSet]) -> None:
        loaded, visible_set = result
        self.close_if_first_load_fails = False  # it has shown something: it stays
        path = self._load_path
        self.current = loaded
        self.current_path = path
        if path != SAMPLE_RUN:
            self.settings.add_recent(path)
        new_run = self.current_run_folder != loaded.run.folder
        if new_run:
            if self.trajectory_slot.built:  # else it takes the run's checkpoints when made
                self.trajectory.clear()
                self.trajectory.set_checkpoints(loaded.run.checkpoints)
            self.edits.switch_run(loaded.run.folder)
            self.tensorboard.run_opened(loaded.run.folder)
            self.training.run_opened(loaded.run)
        self.current_run_folder = loaded.run.folder
        self.run_panel.show_run(loaded.run, loaded.checkpoint.prefix)
        self.browser.set_variables(loaded.variables, visible_set)
        self.runner.start("filter texts", visible_set.filter_texts)
        if new_run:
            self.browser.fit_columns()
        step = "" if loaded.checkpoint.step is None else f" · step {loaded.checkpoint.step:,}"
        self.setWindowTitle(f"{loaded.checkpoint.name}{step} — {loaded.run.folder} — Checkpoint Inspector [*]")
        self.edits.refresh()
        self._update_status()
        summary = loaded.reader.model_summary()
        self.statusBar().clearMessage()  # a note about the checkpoint shown before is not about this one
        for message in ([summary] if summary else []) + loaded.run.warnings + loaded.reader.warnings:
            self.statusBar().showMessage(message, 10000)  # a warning, shown last, stays in sight
        wanted, self._select_after_load = self._select_after_load, None
        if wanted is not None and wanted[0] == loaded.checkpoint.prefix:
            self.browser.select_name(wanted[1])
        self._after_first_paint()
        # What this load made is kept out of later collections (gui.base.garbage_collection), after the paint.
        QTimer.singleShot(AFTER_FIRST_PAINT_MS, settle_garbage)
        self.loaded.emit(loaded)

    def _load_failed(self, message: str) -> None:
        self._select_after_load = None
        self._after_first_paint()
        self._update_status()
        self.load_failed.emit(message)

    def _load_cancelled(self) -> None:
        self._select_after_load = None
        self.close_if_first_load_fails = False  # the person stopped it: the window is theirs now
        self._update_status()

    def _load_error_shown(self) -> None:
        if self.close_if_first_load_fails and self.current is None:
            self.close()

    def open_checkpoint_prefix(self, prefix: str) -> None:
        row = self.checkpoint_model.row_of(prefix)
        if row >= 0 and (self.current is None or prefix != self.current.checkpoint.prefix):
            self.open_checkpoint_row(row)

    def open_variable_at(self, prefix: str, name: str) -> None:
        """Show `name` at checkpoint `prefix` (of this run, or of another run, which then opens). The
        name waits in `_select_after_load` for that load only: a failed or superseded one drops it."""
        self.raise_()
        self.activateWindow()
        if self.current is not None and prefix == self.current.checkpoint.prefix:
            self.browser.select_name(name)
            return
        if self.checkpoint_model.row_of(prefix) >= 0:
            self.open_checkpoint_prefix(prefix)
        else:
            self.open_path(prefix)
        self._select_after_load = (prefix, name)

    def build_deferred(self) -> None:
        """Make what waited for the first paint: the plots (see gui.base.deferred)."""
        self.trajectory_slot.build()
        self.detail.build_deferred()

    def _after_first_paint(self) -> None:
        if not self._deferred_scheduled:
            self._deferred_scheduled = True
            QTimer.singleShot(AFTER_FIRST_PAINT_MS, self, self.build_deferred)  # not if the window is gone



def _with_visible_set(load):
    """The load job, then what the variable browser computes of the variables (gui.browser.variable_model's
    VisibleSet) on the same worker thread: the GUI thread is left only its models to reset."""
    loaded = yield from load
    return loaded, VisibleSet.prepared(loaded.variables)

"""File > Export: the variable table (shown rows, optionally with statistics, or the whole run), the
selected tensor as CSV or .npy, the shown variables as .npz or HDF5. Each export is a core job run on
the window's worker pool with progress in the status bar and the window's cancel button."""
from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from core import export
from core.export import HUGE_CSV_CELLS, csv_cell_count

from . import errors


def ask_yes_no(parent, title: str, question: str) -> bool:
    """Asked before an export that would be enormous (tests replace it)."""
    return QMessageBox.question(parent, title, question) == QMessageBox.Yes


class ExportActions(QObject):
    finished = Signal(str)  # the path written
    failed = Signal(str)    # the message shown

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.job = None

    def build_menu(self, menu) -> None:
        entries = (("Variable Table as CSV…", lambda: self._dialog("table.csv", "CSV (*.csv)", self.table)),
                   ("Variable Table with Statistics as CSV…",
                    lambda: self._dialog("table.csv", "CSV (*.csv)", lambda p: self.table(p, True))),
                   ("Whole Run Table as CSV…", lambda: self._dialog("run.csv", "CSV (*.csv)", self.run_table)),
                   (None, None),
                   ("Selected Variable as CSV…", lambda: self._dialog("tensor.csv", "CSV (*.csv)", self.tensor_csv)),
                   ("Selected Variable as .npy…", lambda: self._dialog("tensor.npy", "NumPy (*.npy)", self.tensor_npy)),
                   (None, None),
                   ("Shown Variables as .npz…", lambda: self._dialog("variables.npz", "NumPy archive (*.npz)", self.npz)),
                   ("Shown Variables as HDF5…", lambda: self._dialog("variables.h5", "HDF5 (*.h5 *.hdf5)", self.hdf5)))
        for text, slot in entries:
            if text is None:
                menu.addSeparator()
            else:
                menu.addAction(text).triggered.connect(lambda *_, s=slot: s())

    # ---- the exports (paths given: the menu asks for them, tests pass them) -----------------------------
    def table(self, path: str, with_statistics: bool = False) -> None:
        reader, names = self._reader(), self._shown_names()
        if reader is not None:
            self._start(path, lambda: export.export_variable_table(reader, path, names, with_statistics))

    def run_table(self, path: str) -> None:
        if self.window.current is not None:
            checkpoints = list(self.window.current.run.checkpoints)
            self._start(path, lambda: export.export_run_table(checkpoints, path))

    def tensor_csv(self, path: str) -> None:
        reader, info = self._reader(), self._selected()
        if reader is None or info is None:
            return
        cells = csv_cell_count(info.entry.shape)
        if cells > HUGE_CSV_CELLS and not ask_yes_no(
                self.window, "A very large CSV",
                f"{info.display_name} has {cells:,} values: as CSV that is about {cells * 12 / 1e9:.1f} GB of "
                f"text. Write it anyway? (.npy keeps the same values exactly in {info.entry.nbytes / 1e9:.1f} GB.)"):
            return
        self._start(path, lambda: export.export_tensor_csv(reader, info.name, path))

    def tensor_npy(self, path: str) -> None:
        reader, info = self._reader(), self._selected()
        if reader is not None and info is not None:
            self._start(path, lambda: export.export_tensor_npy(reader, info.name, path))

    def npz(self, path: str) -> None:
        reader, names = self._reader(), self._shown_names()
        if reader is not None:
            self._start(path, lambda: export.export_npz(reader, names, path))

    def hdf5(self, path: str) -> None:
        reader, names = self._reader(), self._shown_names()
        if reader is not None:
            self._start(path, lambda: export.export_hdf5(reader, names, path))

    # ---- plumbing ---------------------------------------------------------------------------------------
    def _reader(self):
        if self.window.current is None:
            self.window.statusBar().showMessage("Open a checkpoint first", 4000)
            return None
        return self.window.current.reader

    def _selected(self):
        info = self.window.detail.info
        if info is None:
            self.window.statusBar().showMessage("Select a variable first", 4000)
        return info

    def _shown_names(self) -> list[str]:
        """The variables the browser shows (the filter and the slots toggle apply)."""
        browser = self.window.browser
        return [browser.visible_set.variables[i].name for i in browser.visible_indexes]

    def _dialog(self, default_name: str, pattern: str, export_to) -> None:
        folder = os.path.dirname(self.window.current.checkpoint.prefix) if self.window.current else ""
        path, _ = QFileDialog.getSaveFileName(self.window, "Export", os.path.join(folder, default_name), pattern)
        if path:
            export_to(path)

    def _start(self, path: str, make_job) -> None:
        if self.job is not None:
            self.window.statusBar().showMessage("An export is already running", 4000)
            return
        self.window.show_busy(True, f"Exporting to {path}…")
        self.job = self.window.runner.start(
            f"export {path}", make_job, on_progress=self.window.show_progress,
            on_finished=lambda *_: self._done(f"Wrote {path}", path),
            on_failed=self._failed, on_cancelled=lambda: self._done("Export cancelled: nothing was written", None))

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def _done(self, message: str, path: str | None) -> None:
        self.job = None
        self.window.show_busy(False)
        self.window.statusBar().showMessage(message, 8000)
        if path:
            self.finished.emit(path)

    def _failed(self, exc) -> None:
        self._done("Export failed", None)
        message = errors.describe(exc)
        self.failed.emit(message)
        errors.show_error(self.window, "Export failed", message, getattr(exc, "formatted_traceback", ""))

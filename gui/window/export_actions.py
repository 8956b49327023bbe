"""File > Export: the variable table (shown rows, optionally with statistics, or the whole run), the
selected tensor as CSV or .npy, the shown variables as .npz or HDF5; and Copy as Code, the Python that
reads a variable, to the clipboard. Each export is a core job run on
the window's worker pool with progress in the status bar and the window's cancel button."""
from __future__ import annotations


from PySide6.QtCore import QObject, Signal

from checkpoint_inspector.core.export import tables, tensors
from checkpoint_inspector.core.formatting import format_bytes
from checkpoint_inspector.core.export.tensors import HUGE_CSV_BYTES, csv_size_estimate

from ..base import dialogs
from ..base.jobs import JobSlot


class ExportActions(QObject):
    finished = Signal(str)  # the path written
    failed = Signal(str)    # the message shown

    def __init__(self, session):
        super().__init__(session.dialog_parent)
        self.session = session
        self.slot = JobSlot(session, "Export failed", "Export cancelled: nothing was written")

    def build_menu(self, menu) -> None:
        entries = (("Variable Table as CSV…", lambda: self._dialog("table.csv", "CSV (*.csv)", self.table)),
                   ("Variable Table with Statistics as CSV…",
                    lambda: self._dialog("table.csv", "CSV (*.csv)", lambda p: self.table(p, True))),
                   ("Whole Run Table as CSV…", lambda: self._dialog("run.csv", "CSV (*.csv)", self.run_table)),
                   (None, None),
                   ("Selected Variable as CSV…", lambda: self._tensor_dialog(".csv", "CSV (*.csv)", self.tensor_csv)),
                   ("Selected Variable as .npy…", lambda: self._tensor_dialog(".npy", "NumPy (*.npy)", self.tensor_npy)),
                   (None, None),
                   ("Shown Variables as .npz…", lambda: self._dialog("variables.npz", "NumPy archive (*.npz)", self.npz)),
                   ("Shown Variables as HDF5…", lambda: self._dialog("variables.h5", "HDF5 (*.h5 *.hdf5)", self.hdf5)))
        for text, slot in entries:
            if text is None:
                menu.addSeparator()
            else:
                menu.addAction(text).triggered.connect(lambda *_, s=slot: s())

    def copy_code(self, name: str | None) -> None:
        """Copy as Code: the Python that reads variable `name` of the open checkpoint, on the clipboard."""
        from PySide6.QtWidgets import QApplication

        from checkpoint_inspector.core.export.code_snippets import reading_code

        current = self.session.current
        if current is None or name is None:
            self.session.show_message("Select a variable first", 4000)
            return
        QApplication.clipboard().setText(reading_code(current.reader, name))
        self.session.show_message(f"Copied the Python that reads {name}", 5000)

    # ---- the exports (paths given: the menu asks for them, tests pass them) -----------------------------
    def table(self, path: str, with_statistics: bool = False) -> None:
        reader, names = self._reader(), self.session.shown_names()
        if reader is not None:
            self._start(path, lambda: tables.export_variable_table(reader, path, names, with_statistics))

    def run_table(self, path: str) -> None:
        current = self.session.require_current()
        if current is not None:
            checkpoints = list(current.run.checkpoints)
            self._start(path, lambda: tables.export_run_table(checkpoints, path))

    def tensor_csv(self, path: str) -> None:
        reader, info = self._reader(), self.session.require_selected()
        if reader is None or info is None:
            return
        dtype = info.entry.dtype.numpy_dtype() if info.entry.dtype is not None else None
        text_bytes = csv_size_estimate(info.entry.shape, dtype)
        if text_bytes > HUGE_CSV_BYTES and not dialogs.ask_yes_no(
                self.session.dialog_parent, "A very large CSV",
                f"{info.display_name} has {info.entry.num_elements:,} values: as CSV that is about "
                f"{format_bytes(text_bytes)} of text. Write it anyway? (.npy keeps the same values exactly in "
                f"{format_bytes(info.entry.nbytes)}.)"):
            return
        self._start(path, lambda: tensors.export_tensor_csv(reader, info.name, path))

    def tensor_npy(self, path: str) -> None:
        reader, info = self._reader(), self.session.require_selected()
        if reader is not None and info is not None:
            self._start(path, lambda: tensors.export_tensor_npy(reader, info.name, path))

    def npz(self, path: str) -> None:
        reader, names = self._reader(), self.session.shown_names()
        if reader is not None:
            self._start(path, lambda: tensors.export_npz(reader, names, path, self._keys()))

    def hdf5(self, path: str) -> None:
        reader, names = self._reader(), self.session.shown_names()
        if reader is not None:
            self._start(path, lambda: tensors.export_hdf5(reader, names, path, self._keys()))

    def export_variables(self, names: list[str]) -> None:
        """The variable browser's Export…: the variables chosen there, as .npz, or HDF5 by an .h5 name."""
        reader = self._reader()
        if reader is None or not names:
            return

        def export_to(path: str) -> None:
            write = tensors.export_hdf5 if path.lower().endswith((".h5", ".hdf5")) else tensors.export_npz
            self._start(path, lambda: write(reader, names, path, self._keys()))

        self._dialog("variables.npz", "NumPy archive (*.npz);;HDF5 (*.h5 *.hdf5)", export_to)

    # ---- plumbing ---------------------------------------------------------------------------------------
    def _keys(self) -> dict[str, str]:
        """The names the exported tensors are written under: those the tree shows (stored keys in HDF5's
        `name` attribute)."""
        from checkpoint_inspector.core.run.variables import export_keys

        current = self.session.current
        return export_keys(current.variables) if current is not None else {}

    def _reader(self):
        current = self.session.require_current()
        return current.reader if current is not None else None

    def _dialog(self, default_name: str, pattern: str, export_to) -> None:
        path = dialogs.save_output(self.session, "Export", default_name, pattern, "this export")  # the file chosen is named by the question
        if path:
            export_to(path)

    def _tensor_dialog(self, suffix: str, pattern: str, export_to) -> None:
        """The selected variable's export, suggested under its shown name (`dense_kernel.csv`)."""
        info = self.session.require_selected()
        if info is not None:
            self._dialog(tensors.file_name(info.display_name, suffix), pattern, export_to)

    def _start(self, path: str, make_job) -> None:
        if self.slot.busy:
            self.session.show_message("An export is already running", 4000)
            return

        def written(_) -> None:
            self.session.show_message(f"Wrote {path}", 8000)
            self.finished.emit(path)

        self.slot.start(f"export {path}", make_job, written, busy_text=f"Exporting to {path}…",
                        on_failed=self.failed.emit)

    def cancel(self) -> None:
        self.slot.cancel()
